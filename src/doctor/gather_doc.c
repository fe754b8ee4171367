/* cclforge.doctor-gather/1 (cclforge/gather.h): what rank 0 of `doctor
 * --gather --json` writes -- the launcher, each host with its ranks, survey and
 * findings, the ranks and hosts not heard from, strays, the consolidation --
 * and its strict reader, for `cclforge report`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/gather.h"
#include "cclforge/json.h"

static const char schema[] = "cclforge.doctor-gather/1";

void *cf_gather_doc_to_json(const struct cf_gather_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", schema);
    cJSON_AddStringToObject(doc, "launcher", r->launcher ? r->launcher : "");
    cJSON_AddNumberToObject(doc, "world", r->world);
    cJSON_AddStringToObject(doc, "rank0", r->where);
    cJSON *hosts = cJSON_AddArrayToObject(doc, "hosts");
    for (size_t i = 0; i < r->n_hosts; i++) {
        cJSON *h = cJSON_CreateObject();
        cJSON_AddStringToObject(h, "label", r->hosts[i].label);
        cJSON *ranks = cJSON_AddArrayToObject(h, "ranks");
        for (size_t k = 0; k < r->hosts[i].ranks.n; k++)
            cJSON_AddItemToArray(ranks, cJSON_CreateNumber(atoi(r->hosts[i].ranks.v[k])));
        cJSON_AddBoolToObject(h, "surveyed", r->hosts[i].surveyed);
        if (r->hosts[i].surveyed) {
            cJSON *sv = cf_survey_to_json(&r->surveys[i]);
            cJSON_AddItemToObject(sv, "findings", cf_findings_to_json(&r->per_host[i]));
            cJSON_AddItemToObject(h, "report", sv);
        }
        cJSON_AddItemToArray(hosts, h);
    }
    cf_json_put_strvec(doc, "missing", &r->missing);
    cJSON *strays = cJSON_AddObjectToObject(doc, "strays");
    cJSON_AddNumberToObject(strays, "count", (double)r->strays.count);
    cJSON *kinds = cJSON_AddObjectToObject(strays, "kinds");
    for (int k = 0; k < CF_STRAY_KINDS; k++)
        if (r->strays.kind[k])
            cJSON_AddNumberToObject(kinds, cf_launch_stray_kind_name(k), (double)r->strays.kind[k]);
    cJSON *addrs = cJSON_AddArrayToObject(strays, "addresses");
    for (size_t i = 0; i < r->strays.n_addrs; i++) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "addr", r->strays.addrs[i].addr);
        cJSON_AddNumberToObject(a, "count", (double)r->strays.addrs[i].count);
        cJSON_AddItemToArray(addrs, a);
    }
    cJSON_AddNumberToObject(strays, "unlisted", (double)r->strays.unlisted);
    cf_consolidated_to_json(&r->report, doc);
    return doc;
}

/* ---- the strict reader ---- */

/* a whole number in [lo, hi] at o[key]; where names o */
static int whole(const cJSON *o, const char *where, const char *key, double lo, double hi, double *out, cf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return cf_error_set(err, CF_ERR_FORMAT, "%s%s is %s, not a number", where, key, v ? "of another type" : "missing");
    if (!(v->valuedouble >= lo && v->valuedouble <= hi && v->valuedouble == (double)(long long)v->valuedouble))
        return cf_error_set(err, CF_ERR_FORMAT, "%s%s is %g: not a whole number from %.0f to %.0f", where, key,
                            v->valuedouble, lo, hi);
    *out = v->valuedouble;
    return 0;
}

static const char *string_at(const cJSON *o, const char *where, const char *key, size_t cap, cf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v)) {
        cf_error_set(err, CF_ERR_FORMAT, "%s%s is %s, not a string", where, key, v ? "of another type" : "missing");
        return NULL;
    }
    if (strlen(v->valuestring) >= cap) {
        cf_error_set(err, CF_ERR_FORMAT, "%s%s is longer than %zu bytes", where, key, cap - 1);
        return NULL;
    }
    return v->valuestring;
}

/* one host's report: the survey as written and its findings */
static int read_report(const cJSON *rep, const char *where, struct cf_survey *s, struct cf_findings *f, cf_error *err)
{
    if (!cJSON_IsObject(rep))
        return cf_error_set(err, CF_ERR_FORMAT, "%sreport is %s, not an object (the host is surveyed)", where,
                            rep ? "of another type" : "missing");
    if (cf_survey_from_json(rep, s, err) < 0)
        return cf_error_prefix(err, "%sreport", where);
    char name[64];
    snprintf(name, sizeof name, "%sreport", where);
    if (cf_survey_check_whole(s, name, err) < 0)
        return -1;
    if (cf_survey_host_from_json(rep, s, err) < 0 ||
        cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(rep, "findings"), "findings", f, err) < 0)
        return cf_error_prefix(err, "%sreport", where);
    return 0;
}

static int read_host(const cJSON *h, size_t i, int world, struct cf_gather_result *r, cf_error *err)
{
    char where[48];
    snprintf(where, sizeof where, "hosts[%zu].", i);
    struct cf_gather_host *gh = &r->hosts[i];
    const char *label = string_at(h, where, "label", 1u << 16, err);
    if (!label)
        return -1;
    gh->label = cf_strdup(label);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(h, "ranks"), *it;
    if (!cJSON_IsArray(ranks))
        return cf_error_set(err, CF_ERR_FORMAT, "%sranks is %s, not an array", where, ranks ? "of another type" : "missing");
    cJSON_ArrayForEach(it, ranks)
    {
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble < world) ||
            it->valuedouble != (double)(int)it->valuedouble)
            return cf_error_set(err, CF_ERR_FORMAT, "%sranks holds a value that is no rank of a world of %d", where,
                                world);
        cf_strvec_pushf(&gh->ranks, "%d", (int)it->valuedouble);
    }
    const cJSON *surveyed = cJSON_GetObjectItemCaseSensitive(h, "surveyed");
    if (!cJSON_IsBool(surveyed))
        return cf_error_set(err, CF_ERR_FORMAT, "%ssurveyed is %s, not true or false", where,
                            surveyed ? "of another type" : "missing");
    gh->surveyed = cJSON_IsTrue(surveyed);
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(h, "report");
    if (!gh->surveyed)
        return rep ? cf_error_set(err, CF_ERR_FORMAT, "%sreport is there, but surveyed is false", where) : 0;
    return read_report(rep, where, &r->surveys[i], &r->per_host[i], err);
}

static int read_strays(const cJSON *o, struct cf_launch_strays *s, cf_error *err)
{
    double v;
    if (!cJSON_IsObject(o))
        return cf_error_set(err, CF_ERR_FORMAT, "strays is %s, not an object", o ? "of another type" : "missing");
    if (whole(o, "strays.", "count", 0, 1e15, &v, err) < 0)
        return -1;
    s->count = (unsigned long)v;
    const cJSON *kinds = cJSON_GetObjectItemCaseSensitive(o, "kinds"), *it;
    if (!cJSON_IsObject(kinds))
        return cf_error_set(err, CF_ERR_FORMAT, "strays.kinds is %s, not an object", kinds ? "of another type" : "missing");
    cJSON_ArrayForEach(it, kinds)
    {
        int k = 0;
        while (k < CF_STRAY_KINDS && strcmp(it->string, cf_launch_stray_kind_name(k)))
            k++;
        if (k == CF_STRAY_KINDS)
            return cf_error_set(err, CF_ERR_FORMAT, "strays.kinds names '%s', no kind of stray", it->string);
        if (whole(kinds, "strays.kinds.", it->string, 1, 1e15, &v, err) < 0)
            return -1;
        s->kind[k] = (unsigned long)v;
    }
    const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(o, "addresses");
    if (!cJSON_IsArray(addrs) || cJSON_GetArraySize(addrs) > CF_LAUNCH_STRAY_ADDRS)
        return cf_error_set(err, CF_ERR_FORMAT, "strays.addresses is not an array of at most %d addresses",
                            CF_LAUNCH_STRAY_ADDRS);
    cJSON_ArrayForEach(it, addrs)
    {
        const char *addr = string_at(it, "strays.addresses[].", "addr", sizeof s->addrs[0].addr, err);
        if (!addr || whole(it, "strays.addresses[].", "count", 1, 1e15, &v, err) < 0)
            return -1;
        snprintf(s->addrs[s->n_addrs].addr, sizeof s->addrs[0].addr, "%s", addr);
        s->addrs[s->n_addrs++].count = (unsigned long)v;
    }
    if (whole(o, "strays.", "unlisted", 0, 1e15, &v, err) < 0)
        return -1;
    s->unlisted = (unsigned long)v;
    return 0;
}

static int read_doc(const cJSON *doc, struct cf_gather_result *r, cf_error *err)
{
    const char *sch = cf_json_str(doc, "schema");
    if (!sch || strcmp(sch, schema))
        return cf_error_set(err, CF_ERR_FORMAT, "not a gather's document (schema %s, wanted %s): make one with "
                            "cclforge doctor --gather --json", sch ? sch : "missing", schema);
    const char *launcher = string_at(doc, "", "launcher", 64, err), *where;
    if (!launcher)
        return -1;
    r->launcher = cf_launch_name(launcher);
    if (*launcher && !r->launcher)
        return cf_error_set(err, CF_ERR_FORMAT, "launcher is '%s', no launcher cclforge knows", launcher);
    double world;
    if (whole(doc, "", "world", 1, 1 << 24, &world, err) < 0 || !(where = string_at(doc, "", "rank0", sizeof r->where, err)))
        return -1;
    r->world = (int)world;
    snprintf(r->where, sizeof r->where, "%s", where);
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(doc, "hosts"), *h;
    if (!cJSON_IsArray(hosts))
        return cf_error_set(err, CF_ERR_FORMAT, "hosts is %s, not an array", hosts ? "of another type" : "missing");
    size_t n = (size_t)cJSON_GetArraySize(hosts);
    r->hosts = cf_xcalloc(n + 1, sizeof *r->hosts);
    r->surveys = cf_xcalloc(n + 1, sizeof *r->surveys);
    r->per_host = cf_xcalloc(n + 1, sizeof *r->per_host);
    cJSON_ArrayForEach(h, hosts)
    {
        r->n_hosts++; /* released with the others */
        if (read_host(h, r->n_hosts - 1, r->world, r, err) < 0)
            return -1;
    }
    if (cf_json_get_strvec(doc, "missing", &r->missing) != 1)
        return cf_error_set(err, CF_ERR_FORMAT, "missing is not an array of strings");
    if (read_strays(cJSON_GetObjectItemCaseSensitive(doc, "strays"), &r->strays, err) < 0)
        return -1;
    const char **labels = cf_gather_labels(r);
    int rc = cf_consolidated_from_json(doc, labels, r->n_hosts, &r->report, err);
    free(labels);
    return rc;
}

int cf_gather_doc_from_json(const void *json, struct cf_gather_result *r, cf_error *err)
{
    memset(r, 0, sizeof *r);
    r->is_rank0 = 1;
    return read_doc(json, r, err);
}

const char **cf_gather_labels(const struct cf_gather_result *r)
{
    const char **labels = cf_xcalloc(r->n_hosts + 1, sizeof *labels);
    for (size_t i = 0; i < r->n_hosts; i++)
        labels[i] = r->hosts[i].label;
    return labels;
}
