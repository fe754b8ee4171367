/* One report for many hosts: the facts every host shares, each difference with
 * the hosts on each side ("7 hosts NCCL 2.27.5, node-b 2.26.2"), the cross-host
 * findings and each host's own, errors first, and one reason line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/json.h"
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

/* ---- the strict reader of what cf_consolidated_to_json wrote ---- */

static int bad(cf_error *err, const char *what, const char *field, size_t i, const char *why)
{
    return cf_error_set(err, CF_ERR_FORMAT, "%s[%zu].%s %s", what, i, field, why);
}

static int read_str(const cJSON *o, const char *what, size_t i, const char *field, char **out, cf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsString(v))
        return bad(err, what, field, i, v ? "is not a string" : "is missing");
    *out = cf_strdup(v->valuestring);
    return 0;
}

/* a count the document states: a whole number no larger than max */
static int read_count(const cJSON *o, const char *field, size_t max, size_t *out, cf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
    if (!cJSON_IsNumber(v))
        return cf_error_set(err, CF_ERR_FORMAT, "summary.%s is %s, not a number", field, v ? "of another type" : "missing");
    if (!(v->valuedouble >= 0 && v->valuedouble <= (double)max && v->valuedouble == (double)(size_t)v->valuedouble))
        return cf_error_set(err, CF_ERR_FORMAT, "summary.%s is %g: not a whole number from 0 to %zu", field,
                            v->valuedouble, max);
    *out = (size_t)v->valuedouble;
    return 0;
}

static const cJSON *array_of(const cJSON *o, const char *key, cf_error *err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsArray(a))
        cf_error_set(err, CF_ERR_FORMAT, "\"%s\" is %s, not an array", key, a ? "of another type" : "missing");
    return cJSON_IsArray(a) ? a : NULL;
}

static int read_shared(const cJSON *a, struct cf_consolidated *c, cf_error *err)
{
    c->shared = cf_xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *c->shared);
    for (const cJSON *it = a->child; it; it = it->next, c->n_shared++) {
        struct cf_host_fact *f = &c->shared[c->n_shared];
        if (read_str(it, "shared", c->n_shared, "label", &f->label, err) < 0 ||
            read_str(it, "shared", c->n_shared, "value", &f->value, err) < 0) {
            c->n_shared++; /* released with the others */
            return -1;
        }
    }
    return 0;
}

static int read_groups(const cJSON *d, size_t i, struct cf_fact_diff *x, const struct cf_sorted_names *hosts,
                       cf_error *err)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(d, "groups");
    if (!cJSON_IsArray(groups) || !cJSON_GetArraySize(groups))
        return bad(err, "differences", "groups", i, groups ? "is not an array of at least one group" : "is missing");
    x->groups = cf_xcalloc((size_t)cJSON_GetArraySize(groups), sizeof *x->groups);
    for (const cJSON *g = groups->child; g; g = g->next) {
        struct cf_host_group *hg = &x->groups[x->n_groups++];
        const char *value = cf_json_str(g, "value");
        if (!value)
            return bad(err, "differences", "groups[].value", i, "is not a string");
        hg->value = cf_strdup(value);
        if (cf_json_get_strvec(g, "hosts", &hg->hosts) != 1 || !hg->hosts.n)
            return bad(err, "differences", "groups[].hosts", i, "is not an array of host names");
        for (size_t k = 0; k < hg->hosts.n; k++)
            if (cf_sorted_names_find(hosts, hg->hosts.v[k], strlen(hg->hosts.v[k])) < 0)
                return cf_error_set(err, CF_ERR_FORMAT, "differences[%zu].groups[].hosts names '%s', no host of the "
                                    "document", i, hg->hosts.v[k]);
    }
    return 0;
}

static int read_diffs(const cJSON *a, struct cf_consolidated *c, const struct cf_sorted_names *hosts, cf_error *err)
{
    c->diffs = cf_xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof *c->diffs);
    for (const cJSON *it = a->child; it; it = it->next) {
        size_t i = c->n_diffs++;
        struct cf_fact_diff *x = &c->diffs[i];
        if (read_str(it, "differences", i, "label", &x->label, err) < 0 ||
            read_str(it, "differences", i, "summary", &x->summary, err) < 0)
            return -1;
        if (cf_severity_parse(cf_json_str(it, "severity"), &x->sev) < 0)
            return bad(err, "differences", "severity", i, "is not info, warning or error");
        if (read_groups(it, i, x, hosts, err) < 0)
            return -1;
    }
    return 0;
}

int cf_consolidated_from_json(const void *obj, const char *const *labels, size_t n_labels, struct cf_consolidated *c,
                              cf_error *err)
{
    const cJSON *o = obj;
    memset(c, 0, sizeof *c);
    const cJSON *shared, *diffs, *sum = cJSON_GetObjectItemCaseSensitive(o, "summary"),
                                 *reason = cJSON_GetObjectItemCaseSensitive(o, "reason");
    size_t counts[4], want[4];
    struct cf_sorted_names hosts;
    cf_sorted_names_build(&hosts, labels, n_labels, NULL);
    int rc = !(shared = array_of(o, "shared", err)) || read_shared(shared, c, err) < 0 ||
             !(diffs = array_of(o, "differences", err)) || read_diffs(diffs, c, &hosts, err) < 0 ||
             cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(o, "findings"), "findings", &c->findings, err) < 0;
    cf_sorted_names_release(&hosts);
    if (rc)
        return -1;
    if (!cJSON_IsObject(sum))
        return cf_error_set(err, CF_ERR_FORMAT, "\"summary\" is %s, not an object", sum ? "of another type" : "missing");
    if (!reason || !(cJSON_IsString(reason) || cJSON_IsNull(reason)))
        return cf_error_set(err, CF_ERR_FORMAT, "\"reason\" is %s, not a string or null", reason ? "of another type" : "missing");
    static const char *const keys[] = { "hosts", "errors", "warnings", "differences" };
    want[0] = n_labels;
    want[1] = cf_findings_count(&c->findings, CF_SEV_ERROR);
    want[2] = cf_findings_count(&c->findings, CF_SEV_WARNING);
    want[3] = c->n_diffs;
    for (size_t i = 0; i < 4; i++) {
        if (read_count(sum, keys[i], want[i], &counts[i], err) < 0)
            return -1;
        if (i && counts[i] != want[i])
            return cf_error_set(err, CF_ERR_FORMAT, "summary.%s is %zu, but the document holds %zu", keys[i],
                                counts[i], want[i]);
    }
    c->n_hosts = counts[0];
    c->reason = cJSON_IsString(reason) ? cf_strdup(reason->valuestring) : NULL;
    return 0;
}
