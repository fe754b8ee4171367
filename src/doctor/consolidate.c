/* One report for many hosts: the facts every host shares, each difference with
 * the hosts on each side ("7 hosts NCCL 2.27.5, node-b 2.26.2"), the cross-host
 * findings and each host's own, errors first, and one reason line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/json.h"
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

void cf_consolidated_release(struct cf_consolidated *c)
{
    for (size_t i = 0; i < c->n_shared; i++) {
        free(c->shared[i].label);
        free(c->shared[i].value);
    }
    free(c->shared);
    for (size_t i = 0; i < c->n_diffs; i++) {
        for (size_t g = 0; g < c->diffs[i].n_groups; g++) {
            free(c->diffs[i].groups[g].value);
            cf_strvec_clear(&c->diffs[i].groups[g].hosts);
        }
        free(c->diffs[i].groups);
        free(c->diffs[i].label);
        free(c->diffs[i].summary);
    }
    free(c->diffs);
    cf_findings_release(&c->findings);
    free(c->reason);
    memset(c, 0, sizeof *c);
}

void cf_consolidated_to_json(const struct cf_consolidated *c, void *obj)
{
    cJSON *o = obj;
    cJSON *shared = cJSON_AddArrayToObject(o, "shared");
    for (size_t i = 0; i < c->n_shared; i++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "label", c->shared[i].label);
        cJSON_AddStringToObject(f, "value", c->shared[i].value);
        cJSON_AddItemToArray(shared, f);
    }
    cJSON *diffs = cJSON_AddArrayToObject(o, "differences");
    for (size_t i = 0; i < c->n_diffs; i++) {
        const struct cf_fact_diff *d = &c->diffs[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "label", d->label);
        cJSON_AddStringToObject(x, "severity", cf_severity_name(d->sev));
        cJSON_AddStringToObject(x, "summary", d->summary);
        cJSON *groups = cJSON_AddArrayToObject(x, "groups");
        for (size_t g = 0; g < d->n_groups; g++) {
            cJSON *grp = cJSON_CreateObject();
            cJSON_AddStringToObject(grp, "value", d->groups[g].value);
            cf_json_put_strvec(grp, "hosts", &d->groups[g].hosts);
            cJSON_AddItemToArray(groups, grp);
        }
        cJSON_AddItemToArray(diffs, x);
    }
    cJSON_AddItemToObject(o, "findings", cf_findings_to_json(&c->findings));
    cJSON *sum = cJSON_AddObjectToObject(o, "summary");
    cJSON_AddNumberToObject(sum, "hosts", (double)c->n_hosts);
    cJSON_AddNumberToObject(sum, "errors", (double)cf_findings_count(&c->findings, CF_SEV_ERROR));
    cJSON_AddNumberToObject(sum, "warnings", (double)cf_findings_count(&c->findings, CF_SEV_WARNING));
    cJSON_AddNumberToObject(sum, "differences", (double)c->n_diffs);
    cf_json_put_str(o, "reason", c->reason);
}

void cf_findings_from_json(const void *array, struct cf_findings *out)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, (const cJSON *)array)
    {
        enum cf_severity s = cf_severity_from_name(cf_json_str(it, "severity"));
        const char *id = cf_json_str(it, "id");
        const char *subject = cf_json_str(it, "subject");
        const char *why = cf_json_str(it, "why");
        const char *remedy = cf_json_str(it, "remedy");
        cf_findings_add(out, s, id ? id : "?", subject ? subject : "", remedy, "%s", why ? why : "");
    }
}
