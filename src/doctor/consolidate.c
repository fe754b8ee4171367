/* One report for many hosts: the facts every host shares, each difference with
 * the hosts on each side ("7 hosts NCCL 2.27.5, node-b 2.26.2"), the cross-host
 * findings and each host's own, errors first, and one reason line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"
#include "cclforge/sorted_names.h"
#include "doctor/doctor_internal.h"

#define NAMED_HOSTS 4 /* a minority group lists this many names, then "+N more" */

static const char *value_of(const struct cf_host_fact *f, size_t n, const char *label)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(f[i].label, label))
            return f[i].value;
    return NULL;
}

static int by_size(const void *a, const void *b)
{
    const struct cf_host_group *x = a, *y = b;
    return (int)y->hosts.n - (int)x->hosts.n;
}

static void summarise(struct cf_fact_diff *d, size_t n_hosts)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t g = 0; g < d->n_groups; g++) {
        const struct cf_host_group *grp = &d->groups[g];
        cf_sb_adds(&sb, g ? ", " : "");
        if (g == 0 && grp->hosts.n > 2 && n_hosts > 2) {
            cf_sb_addf(&sb, "%zu hosts", grp->hosts.n);
        } else {
            for (size_t h = 0; h < grp->hosts.n && h < NAMED_HOSTS; h++)
                cf_sb_addf(&sb, "%s%s", h ? ", " : "", grp->hosts.v[h]);
            if (grp->hosts.n > NAMED_HOSTS)
                cf_sb_addf(&sb, " +%zu more", grp->hosts.n - NAMED_HOSTS);
        }
        cf_sb_addf(&sb, " %s", grp->value);
    }
    d->summary = cf_sb_detach(&sb);
}

static void add_diff(struct cf_consolidated *c, const char *label, enum cf_severity sev, struct cf_host_fact **per,
                     size_t *counts, const char *const *labels, size_t n)
{
    struct cf_fact_diff d;
    memset(&d, 0, sizeof d);
    for (size_t h = 0; h < n; h++) {
        const char *v = value_of(per[h], counts[h], label);
        if (!v)
            v = "(unset)";
        size_t g = 0;
        while (g < d.n_groups && strcmp(d.groups[g].value, v))
            g++;
        if (g == d.n_groups) {
            d.groups = cf_xrealloc(d.groups, (d.n_groups + 1) * sizeof *d.groups);
            memset(&d.groups[g], 0, sizeof d.groups[g]);
            d.groups[g].value = cf_strdup(v);
            d.n_groups++;
        }
        cf_strvec_push(&d.groups[g].hosts, labels[h]);
    }
    if (d.n_groups == 1) {
        c->shared = cf_xrealloc(c->shared, (c->n_shared + 1) * sizeof *c->shared);
        c->shared[c->n_shared].label = cf_strdup(label);
        c->shared[c->n_shared].value = d.groups[0].value;
        c->shared[c->n_shared++].sev = sev;
        cf_strvec_clear(&d.groups[0].hosts);
        free(d.groups);
        return;
    }
    qsort(d.groups, d.n_groups, sizeof *d.groups, by_size);
    d.label = cf_strdup(label);
    d.sev = sev;
    summarise(&d, n);
    c->diffs = cf_xrealloc(c->diffs, (c->n_diffs + 1) * sizeof *c->diffs);
    c->diffs[c->n_diffs++] = d;
}

static int diff_by_severity(const void *a, const void *b)
{
    return (int)((const struct cf_fact_diff *)b)->sev - (int)((const struct cf_fact_diff *)a)->sev;
}

void cf_doctor_consolidate(const struct cf_survey *hosts, const char *const *labels,
                           const struct cf_findings *per_host, size_t n, struct cf_consolidated *out)
{
    memset(out, 0, sizeof *out);
    out->n_hosts = n;
    struct cf_host_fact **per = cf_xcalloc(n ? n : 1, sizeof *per);
    size_t *counts = cf_xcalloc(n ? n : 1, sizeof *counts);
    for (size_t h = 0; h < n; h++)
        cf_host_facts(&hosts[h], &per[h], &counts[h]);
    /* every label of every host, in first-seen order */
    struct strvec seen = STRVEC_INIT;
    for (size_t h = 0; h < n; h++)
        for (size_t i = 0; i < counts[h]; i++)
            if (!cf_strvec_contains(&seen, per[h][i].label)) {
                cf_strvec_push(&seen, per[h][i].label);
                add_diff(out, per[h][i].label, per[h][i].sev, per, counts, labels, n);
            }
    cf_strvec_clear(&seen);

    if (n > 1)
        cf_doctor_compare(hosts, labels, n, &out->findings);
    /* A difference compare judged (NCCL, torch) is shown with the severity it
     * is counted at: a host without NCCL is compare's warning, not an error
     * the summary leaves out. */
    for (size_t i = 0; i < out->n_diffs; i++) {
        int judged = cf_doctor_compare_severity(&out->findings, out->diffs[i].label);
        if (judged >= 0)
            out->diffs[i].sev = (enum cf_severity)judged;
        out->diffs[i].judged = judged >= 0;
    }
    /* a stable sort keeps table order within a severity */
    for (size_t i = 1; i < out->n_diffs; i++)
        for (size_t j = i; j > 0 && diff_by_severity(&out->diffs[j - 1], &out->diffs[j]) > 0; j--) {
            struct cf_fact_diff t = out->diffs[j];
            out->diffs[j] = out->diffs[j - 1];
            out->diffs[j - 1] = t;
        }
    for (size_t i = 0; i < out->n_diffs; i++) {
        const struct cf_fact_diff *d = &out->diffs[i];
        if (d->sev == CF_SEV_INFO || d->judged)
            continue;
        cf_findings_add(&out->findings, d->sev, "hosts-differ", d->label,
                        "make the hosts alike, or confirm the difference is intended", "%s differs: %s", d->label,
                        d->summary);
    }
    for (size_t h = 0; per_host && h < n; h++)
        for (size_t i = 0; i < per_host[h].n; i++) {
            const struct cf_finding *x = &per_host[h].v[i];
            if (x->severity == CF_SEV_INFO)
                continue; /* a host's notes stay in its own report */
            char *subject = cf_asprintf("%s: %s", labels[h], x->subject ? x->subject : "");
            cf_findings_add(&out->findings, x->severity, x->id, subject, x->remedy, "%s", x->why ? x->why : "");
            free(subject);
        }
    cf_sort_findings(&out->findings);
    size_t errors = cf_findings_count(&out->findings, CF_SEV_ERROR);
    size_t warnings = cf_findings_count(&out->findings, CF_SEV_WARNING);
    if (errors || warnings) {
        const struct cf_finding *first = &out->findings.v[0];
        out->reason = cf_asprintf("%zu error(s), %zu warning(s) across %zu host%s; first: %s: %s", errors, warnings,
                                  n, n == 1 ? "" : "s", first->subject, first->why);
    }
    for (size_t h = 0; h < n; h++)
        cf_host_facts_release(per[h], counts[h]);
    free(per);
    free(counts);
}

/* ---- the JSON of a consolidation: its fields as data, for the writer and the strict reader ---- */

static const char *severity_name(int v)
{
    return cf_severity_name((enum cf_severity)v);
}

#define STR_REQUIRED CF_JF_STR, .flags = CF_JF_REQUIRED
static const struct cf_jf fact_fields[] = {
    CF_JF_AS(struct cf_host_fact, "label", label, STR_REQUIRED),
    CF_JF_AS(struct cf_host_fact, "value", value, STR_REQUIRED),
};
static const struct cf_jf_table fact_table = CF_JF_TABLE(struct cf_host_fact, fact_fields);

static const struct cf_jf group_fields[] = {
    CF_JF_AS(struct cf_host_group, "value", value, STR_REQUIRED),
    CF_JF_AS(struct cf_host_group, "hosts", hosts, CF_JF_STRVEC, .flags = CF_JF_REQUIRED),
};
static const struct cf_jf_table group_table = CF_JF_TABLE(struct cf_host_group, group_fields);

static const struct cf_jf_table *const diff_subs[] = { &group_table };
static const struct cf_jf diff_fields[] = {
    CF_JF_AS(struct cf_fact_diff, "label", label, STR_REQUIRED),
    CF_JF_AS(struct cf_fact_diff, "severity", sev, CF_JF_ENUM, .name = severity_name, .nnames = CF_SEV_ERROR + 1,
             .flags = CF_JF_REQUIRED),
    CF_JF_AS(struct cf_fact_diff, "summary", summary, STR_REQUIRED),
    CF_JF_AS(struct cf_fact_diff, "groups", groups, CF_JF_ARRAY, .count_offset = offsetof(struct cf_fact_diff, n_groups),
             .flags = CF_JF_REQUIRED),
};
static const struct cf_jf_table diff_table = CF_JF_TABLE_SUBS(struct cf_fact_diff, diff_fields, diff_subs);

/* the findings and the summary are the caller's: the findings' own table, counts checked against the document */
enum { SUB_FACT, SUB_DIFF };
static const struct cf_jf_table *const consolidated_subs[] = { [SUB_FACT] = &fact_table, [SUB_DIFF] = &diff_table };
static const struct cf_jf consolidated_fields[] = {
    CF_JF_AS(struct cf_consolidated, "shared", shared, CF_JF_ARRAY, .sub = SUB_FACT,
             .count_offset = offsetof(struct cf_consolidated, n_shared), .flags = CF_JF_REQUIRED),
    CF_JF_AS(struct cf_consolidated, "differences", diffs, CF_JF_ARRAY, .sub = SUB_DIFF,
             .count_offset = offsetof(struct cf_consolidated, n_diffs), .flags = CF_JF_REQUIRED),
    CF_JF_SLOT("findings"), CF_JF_SLOT("summary"),
    CF_JF_AS(struct cf_consolidated, "reason", reason, CF_JF_STR, .flags = CF_JF_REQUIRED | CF_JF_NULLABLE),
};
static const struct cf_jf_table consolidated_table =
    CF_JF_TABLE_SUBS(struct cf_consolidated, consolidated_fields, consolidated_subs);

void cf_consolidated_release(struct cf_consolidated *c)
{
    cf_jf_release(&consolidated_table, c);
    cf_findings_release(&c->findings);
    memset(c, 0, sizeof *c);
}

/* "summary": the counts of what the document holds (hosts: at most those it names) */
struct summary {
    size_t hosts, errors, warnings, differences;
};
#define A_COUNT(f) CF_JF_AS(struct summary, #f, f, CF_JF_SIZE, .flags = CF_JF_REQUIRED)
static const struct cf_jf summary_fields[] = { A_COUNT(hosts), A_COUNT(errors), A_COUNT(warnings), A_COUNT(differences) };
static const struct cf_jf_table summary_table = CF_JF_TABLE(struct summary, summary_fields);

static struct summary summary_of(const struct cf_consolidated *c, size_t hosts)
{
    return (struct summary){ hosts, cf_findings_count(&c->findings, CF_SEV_ERROR),
                             cf_findings_count(&c->findings, CF_SEV_WARNING), c->n_diffs };
}

void cf_consolidated_to_json(const struct cf_consolidated *c, void *obj)
{
    cJSON *o = obj;
    const struct summary sum = summary_of(c, c->n_hosts);
    cf_jf_add(o, &consolidated_table, c);
    cJSON_ReplaceItemInObjectCaseSensitive(o, "findings", cf_findings_to_json(&c->findings));
    cJSON_ReplaceItemInObjectCaseSensitive(o, "summary", cf_jf_to_json(&summary_table, &sum));
}

/* what the tables cannot say: every difference has a side, every side hosts of the document */
static int check_groups(const struct cf_consolidated *c, const struct cf_sorted_names *hosts, cf_error *err)
{
    for (size_t i = 0; i < c->n_diffs; i++) {
        const struct cf_fact_diff *x = &c->diffs[i];
        if (!x->n_groups)
            return cf_error_set(err, CF_ERR_FORMAT, "differences[%zu].groups is not an array of at least one group", i);
        for (size_t g = 0; g < x->n_groups; g++) {
            const struct strvec *h = &x->groups[g].hosts;
            if (!h->n)
                return cf_error_set(err, CF_ERR_FORMAT, "differences[%zu].groups[%zu].hosts is not an array of host "
                                    "names", i, g);
            for (size_t k = 0; k < h->n; k++)
                if (cf_sorted_names_find(hosts, h->v[k], strlen(h->v[k])) < 0)
                    return cf_error_set(err, CF_ERR_FORMAT, "differences[%zu].groups[].hosts names '%s', no host of "
                                        "the document", i, h->v[k]);
        }
    }
    return 0;
}

int cf_consolidated_from_json(const void *obj, const char *const *labels, size_t n_labels, struct cf_consolidated *c,
                              cf_error *err)
{
    const cJSON *o = obj, *sum = cJSON_GetObjectItemCaseSensitive(o, "summary");
    memset(c, 0, sizeof *c);
    const struct cf_jf_reader r = { err, NULL, "", 0, 0 };
    struct cf_sorted_names hosts;
    cf_sorted_names_build(&hosts, labels, n_labels, NULL);
    int rc = cf_jf_read(&r, &consolidated_table, o, c, "") < 0 || check_groups(c, &hosts, err) < 0 ||
             cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(o, "findings"), "findings", &c->findings, err) < 0;
    cf_sorted_names_release(&hosts);
    if (rc)
        return -1;
    struct summary got = { 0 }, want = summary_of(c, n_labels);
    if (cf_jf_read(&r, &summary_table, sum, &got, "summary") < 0)
        return -1;
    if (got.hosts > want.hosts)
        return cf_jf_refuse(&r, "\"summary.hosts\" is %zu, more than the %zu hosts it names", got.hosts, want.hosts);
    want.hosts = got.hosts;
    if (cf_jf_same_numbers(&r, &summary_table, &got, &want, "summary") < 0)
        return -1;
    c->n_hosts = got.hosts;
    return 0;
}
