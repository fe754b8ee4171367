/* cclforge.doctor-gather/1 (cclforge/gather.h): what rank 0 of `doctor
 * --gather --json` writes -- the launcher, each host with its ranks, survey and
 * findings, the ranks and hosts not heard from, strays, the consolidation --
 * and its strict reader, for `cclforge report`. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/gather.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"

static const char schema[] = "cclforge.doctor-gather/1";

/* ---- the field tables: the writer's order, the strict reader's bounds ---- */

#define COUNT .min = 0, .max = 1e15 /* a count of connections */
/* strays.addresses: the struct's own array of (address, count), its items' fields by their place in one */
#define ADDR_AT(f) (offsetof(struct cf_launch_strays, addrs[0].f) - offsetof(struct cf_launch_strays, addrs))
#define AN_ADDR ((struct cf_launch_strays *)0)->addrs[0]
static const struct cf_jf addr_fields[] = {
    { .key = "addr", .type = CF_JF_FIXED, .offset = ADDR_AT(addr), .size = sizeof AN_ADDR.addr,
      .flags = CF_JF_REQUIRED },
    { .key = "count", .type = CF_JF_LONG, .offset = ADDR_AT(count), .min = 1, .max = 1e15, .flags = CF_JF_REQUIRED },
};
static const struct cf_jf_table addr_table = { addr_fields, sizeof addr_fields / sizeof addr_fields[0],
                                               sizeof AN_ADDR, NULL, NULL };
static const struct cf_jf_table *const addr_sub[] = { &addr_table };

/* the counts are unsigned long, read and written as long: no count comes near LONG_MAX */
static const struct cf_jf strays_fields[] = {
    CF_JF_AS(struct cf_launch_strays, "count", count, CF_JF_LONG, COUNT, .flags = CF_JF_REQUIRED),
    CF_JF_SLOT("kinds") /* {"silent": 3}: by kind name, only those seen */,
    CF_JF_AS(struct cf_launch_strays, "addresses", addrs, CF_JF_ARRAY,
             .count_offset = offsetof(struct cf_launch_strays, n_addrs), .max = CF_LAUNCH_STRAY_ADDRS,
             .flags = CF_JF_REQUIRED | CF_JF_IN_PLACE),
    CF_JF_AS(struct cf_launch_strays, "unlisted", unlisted, CF_JF_LONG, COUNT, .flags = CF_JF_REQUIRED),
};
static const struct cf_jf_table strays_table = CF_JF_TABLE_SUBS(struct cf_launch_strays, strays_fields, addr_sub);

static const struct cf_jf host_fields[] = {
    CF_JF_AS(struct cf_gather_host, "label", label, CF_JF_STR, .flags = CF_JF_REQUIRED),
    CF_JF_SLOT("ranks") /* numbers of the world, kept as strings */,
    CF_JF_AS(struct cf_gather_host, "surveyed", surveyed, CF_JF_BOOL, .flags = CF_JF_REQUIRED),
};
static const struct cf_jf_table host_table = CF_JF_TABLE(struct cf_gather_host, host_fields);

enum { SUB_HOST, SUB_STRAYS };
static const struct cf_jf_table *const doc_subs[] = { [SUB_HOST] = &host_table, [SUB_STRAYS] = &strays_table };
/* the consolidation follows, its own table's */
static const struct cf_jf doc_fields[] = {
    CF_JF_SLOT("launcher") /* "" when none */,
    CF_JF_AS(struct cf_gather_result, "world", world, CF_JF_INT, .min = 1, .max = 1 << 24, .flags = CF_JF_REQUIRED),
    CF_JF_AS(struct cf_gather_result, "rank0", where, CF_JF_FIXED, .size = sizeof((struct cf_gather_result *)0)->where,
             .flags = CF_JF_REQUIRED),
    CF_JF_AS(struct cf_gather_result, "hosts", hosts, CF_JF_ARRAY, .sub = SUB_HOST,
             .count_offset = offsetof(struct cf_gather_result, n_hosts), .flags = CF_JF_REQUIRED),
    CF_JF_AS(struct cf_gather_result, "missing", missing, CF_JF_STRVEC, .flags = CF_JF_REQUIRED),
    CF_JF_AS(struct cf_gather_result, "strays", strays, CF_JF_OBJECT, .sub = SUB_STRAYS, .flags = CF_JF_REQUIRED),
};
static const struct cf_jf_table doc_table = CF_JF_TABLE_SUBS(struct cf_gather_result, doc_fields, doc_subs);

void *cf_gather_doc_to_json(const struct cf_gather_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", schema);
    cf_jf_add(doc, &doc_table, r);
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "launcher", cJSON_CreateString(r->launcher ? r->launcher : ""));
    cJSON *h = cJSON_GetObjectItemCaseSensitive(doc, "hosts")->child;
    for (size_t i = 0; i < r->n_hosts; i++, h = h->next) {
        cJSON *ranks = cJSON_CreateArray();
        for (size_t k = 0; k < r->hosts[i].ranks.n; k++)
            cJSON_AddItemToArray(ranks, cJSON_CreateNumber(atoi(r->hosts[i].ranks.v[k])));
        cJSON_ReplaceItemInObjectCaseSensitive(h, "ranks", ranks);
        if (r->hosts[i].surveyed) {
            cJSON *sv = cf_survey_to_json(&r->surveys[i]);
            cJSON_AddItemToObject(sv, "findings", cf_findings_to_json(&r->per_host[i]));
            cJSON_AddItemToObject(h, "report", sv);
        }
    }
    cJSON *kinds = cJSON_CreateObject();
    for (int k = 0; k < CF_STRAY_KINDS; k++)
        if (r->strays.kind[k])
            cJSON_AddNumberToObject(kinds, cf_launch_stray_kind_name(k), (double)r->strays.kind[k]);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "strays"), "kinds", kinds);
    cf_consolidated_to_json(&r->report, doc);
    return doc;
}

/* ---- the strict reader: the tables, then what they cannot say ---- */

/* one host's report: the survey as written and its findings */
static int read_report(const cJSON *rep, const char *where, struct cf_survey *s, struct cf_findings *f, cf_error *err)
{
    if (cf_survey_from_json(rep, s, err) < 0)
        return cf_error_prefix(err, "%s.report", where);
    char name[64];
    snprintf(name, sizeof name, "%s.report", where);
    if (cf_survey_check_whole(s, name, err) < 0)
        return -1;
    if (cf_survey_host_from_json(rep, s, err) < 0 ||
        cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(rep, "findings"), "findings", f, err) < 0)
        return cf_error_prefix(err, "%s.report", where);
    return 0;
}

/* its ranks, of the world, and a report exactly when it was surveyed */
static int read_host(const struct cf_jf_reader *rd, const cJSON *h, size_t i, struct cf_gather_result *r)
{
    char where[48];
    snprintf(where, sizeof where, "hosts[%zu]", i);
    struct cf_gather_host *gh = &r->hosts[i];
    if (strlen(gh->label) >= 1u << 16)
        return cf_jf_refuse(rd, "\"%s.label\" is longer than %u bytes", where, (1u << 16) - 1);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(h, "ranks"), *it;
    if (!cJSON_IsArray(ranks))
        return cf_jf_refuse(rd, "\"%s.ranks\" is %s, not an array", where, ranks ? "of another type" : "missing");
    cJSON_ArrayForEach(it, ranks)
    {
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble < r->world) ||
            it->valuedouble != (double)(int)it->valuedouble)
            return cf_jf_refuse(rd, "\"%s.ranks\" holds a value that is no rank of a world of %d", where, r->world);
        cf_strvec_pushf(&gh->ranks, "%d", (int)it->valuedouble);
    }
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(h, "report");
    if (!gh->surveyed)
        return rep ? cf_jf_refuse(rd, "\"%s.report\" is there, but surveyed is false", where) : 0;
    if (!cJSON_IsObject(rep))
        return cf_jf_refuse(rd, "\"%s.report\" is %s, not an object (the host is surveyed)", where,
                            rep ? "of another type" : "missing");
    return read_report(rep, where, &r->surveys[i], &r->per_host[i], rd->err);
}

/* strays.kinds: a count by the name of each kind seen */
static int read_kinds(const struct cf_jf_reader *rd, const cJSON *kinds, struct cf_launch_strays *s)
{
    const cJSON *it;
    if (!cJSON_IsObject(kinds))
        return cf_jf_refuse(rd, "\"strays.kinds\" is %s, not an object", kinds ? "of another type" : "missing");
    cJSON_ArrayForEach(it, kinds)
    {
        int k = 0;
        while (k < CF_STRAY_KINDS && strcmp(it->string, cf_launch_stray_kind_name(k)))
            k++;
        if (k == CF_STRAY_KINDS)
            return cf_jf_refuse(rd, "\"strays.kinds\" names '%s', no kind of stray", it->string);
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 1 && it->valuedouble <= 1e15) ||
            it->valuedouble != floor(it->valuedouble))
            return cf_jf_refuse(rd, "\"strays.kinds.%s\" is not a whole number from 1 to 1e+15", it->string);
        s->kind[k] = (unsigned long)it->valuedouble;
    }
    return 0;
}

static int read_doc(const cJSON *doc, struct cf_gather_result *r, cf_error *err)
{
    const struct cf_jf_reader rd = { err, NULL, "", 0, 0 };
    const char *sch = cf_json_str(doc, "schema");
    if (!sch || strcmp(sch, schema))
        return cf_error_set(err, CF_ERR_FORMAT, "not a gather's document (schema %s, wanted %s): make one with "
                            "cclforge doctor --gather --json", sch ? sch : "missing", schema);
    const cJSON *launcher = cJSON_GetObjectItemCaseSensitive(doc, "launcher");
    if (!cJSON_IsString(launcher) || strlen(launcher->valuestring) >= 64)
        return cf_jf_refuse(&rd, "\"launcher\" is not a launcher's name");
    r->launcher = cf_launch_name(launcher->valuestring);
    if (*launcher->valuestring && !r->launcher)
        return cf_jf_refuse(&rd, "\"launcher\" is '%s', no launcher cclforge knows", launcher->valuestring);
    /* every host's survey and findings beside it, released with it however far the reading goes */
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(doc, "hosts");
    size_t n = cJSON_IsArray(hosts) ? (size_t)cJSON_GetArraySize(hosts) : 0;
    r->surveys = cf_xcalloc(n + 1, sizeof *r->surveys);
    r->per_host = cf_xcalloc(n + 1, sizeof *r->per_host);
    if (cf_jf_read(&rd, &doc_table, doc, r, "") < 0)
        return -1;
    const cJSON *h = hosts->child;
    for (size_t i = 0; i < r->n_hosts; i++, h = h->next)
        if (read_host(&rd, h, i, r) < 0)
            return -1;
    if (read_kinds(&rd, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "strays"), "kinds"),
                   &r->strays) < 0)
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
