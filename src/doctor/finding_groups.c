/* The same finding on many hosts, once (cclforge/doctor.h). Consolidation names
 * the host in the subject ("node07: NCCL ..."), so a finding on 1,022 hosts is
 * 1,022 findings; a person wants one line and the hostlist. Grouping sorts the
 * findings by what they say, so 1,024 hosts with many findings each stay fast. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/doctor.h"
#include "cclforge/sorted_names.h"
#include "cclforge/strbuf.h"

struct entry {
    size_t i;            /* the finding's index */
    long host;           /* -1: about no one host */
    const char *rest;    /* the subject after "host: " */
    const struct cf_finding *f;
};

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* what a finding says, its host aside; then the order met */
static int by_meaning(const void *pa, const void *pb)
{
    const struct entry *a = pa, *b = pb;
    int c = (a->host < 0) - (b->host < 0);
    if (!c)
        c = (int)a->f->severity - (int)b->f->severity;
    if (!c)
        c = cmp_str(a->f->id, b->f->id);
    if (!c)
        c = cmp_str(a->rest, b->rest);
    if (!c)
        c = cmp_str(a->f->why, b->f->why);
    if (!c)
        c = cmp_str(a->f->remedy, b->f->remedy);
    return c ? c : (a->i > b->i) - (a->i < b->i);
}

static int same_meaning(const struct entry *a, const struct entry *b)
{
    return a->host >= 0 && b->host >= 0 && a->f->severity == b->f->severity && !cmp_str(a->f->id, b->f->id) &&
           !cmp_str(a->rest, b->rest) && !cmp_str(a->f->why, b->f->why) && !cmp_str(a->f->remedy, b->f->remedy);
}

static int by_index(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return (a > b) - (a < b);
}

/* a group's hosts in the labels' order (cf_findings_add keeps one finding per id and
 * subject, so a host is in a group once) */
static void in_label_order(struct cf_finding_group *g)
{
    if (g->n_hosts > 1)
        qsort(g->hosts, g->n_hosts, sizeof *g->hosts, by_index);
}

static int by_first(const void *pa, const void *pb)
{
    const struct cf_finding *a = ((const struct cf_finding_group *)pa)->f, *b = ((const struct cf_finding_group *)pb)->f;
    return (a > b) - (a < b);
}

void cf_findings_group(const struct cf_findings *f, const char *const *labels, size_t n_labels,
                       struct cf_finding_groups *out)
{
    out->v = NULL;
    out->n = 0;
    struct cf_sorted_names sorted;
    cf_sorted_names_build(&sorted, labels, n_labels, NULL);
    struct entry *e = cf_xcalloc(f->n + 1, sizeof *e);
    for (size_t i = 0; i < f->n; i++) {
        const char *subject = f->v[i].subject ? f->v[i].subject : "";
        const char *colon = strstr(subject, ": ");
        long h = colon ? cf_sorted_names_find(&sorted, subject, (size_t)(colon - subject)) : -1;
        e[i] = (struct entry){ i, h, h >= 0 ? colon + 2 : subject, &f->v[i] };
    }
    qsort(e, f->n, sizeof *e, by_meaning);
    out->v = cf_xcalloc(f->n + 1, sizeof *out->v);
    for (size_t i = 0; i < f->n; i++) {
        if (!out->n || !same_meaning(&e[i - 1], &e[i]))
            out->v[out->n++] = (struct cf_finding_group){ e[i].f, e[i].rest, NULL, 0 };
        struct cf_finding_group *g = &out->v[out->n - 1];
        if (e[i].host >= 0) {
            g->hosts = cf_xrealloc(g->hosts, (g->n_hosts + 1) * sizeof *g->hosts);
            g->hosts[g->n_hosts++] = (size_t)e[i].host;
        }
    }
    for (size_t i = 0; i < out->n; i++)
        in_label_order(&out->v[i]);
    /* the order of the findings: a group's first finding is its earliest (ties sort by index) */
    qsort(out->v, out->n, sizeof *out->v, by_first);
    free(e);
    cf_sorted_names_release(&sorted);
}

void cf_finding_groups_release(struct cf_finding_groups *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i].hosts);
    free(g->v);
    g->v = NULL;
    g->n = 0;
}
