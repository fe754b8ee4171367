/* The findings list and its JSON form: the writer and the strict reader every
 * doctor document (cclforge.doctor/1, -gather/1, -compare/1) uses for its
 * "findings" array. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/error.h"
#include "cclforge/json.h"

void cf_findings_add(struct cf_findings *f, enum cf_severity sev, const char *id, const char *subject,
                     const char *remedy, const char *why_fmt, ...)
{
    /* Same id and subject twice (e.g. one library reached two ways) says nothing new. */
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].id, id) && !strcmp(f->v[i].subject, subject ? subject : ""))
            return;
    f->v = cf_xrealloc(f->v, (f->n + 1) * sizeof *f->v);
    struct cf_finding *x = &f->v[f->n++];
    x->severity = sev;
    x->id = cf_strdup(id);
    x->subject = cf_strdup(subject ? subject : "");
    x->remedy = remedy ? cf_strdup(remedy) : NULL;
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, why_fmt);
    cf_sb_addvf(&sb, why_fmt, ap);
    va_end(ap);
    x->why = cf_sb_detach(&sb);
}

void cf_findings_release(struct cf_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].id);
        free(f->v[i].subject);
        free(f->v[i].why);
        free(f->v[i].remedy);
    }
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

enum cf_severity cf_findings_worst(const struct cf_findings *f)
{
    enum cf_severity worst = CF_SEV_INFO;
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].severity > worst)
            worst = f->v[i].severity;
    return worst;
}

size_t cf_findings_count(const struct cf_findings *f, enum cf_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += f->v[i].severity == sev;
    return n;
}

static const char *const severity_names[] = { [CF_SEV_INFO] = "info", [CF_SEV_WARNING] = "warning",
                                              [CF_SEV_ERROR] = "error" };
#define N_SEVERITIES (sizeof severity_names / sizeof severity_names[0])

const char *cf_severity_name(enum cf_severity sev)
{
    return (unsigned)sev < N_SEVERITIES ? severity_names[sev] : "?";
}

int cf_severity_parse(const char *name, enum cf_severity *out)
{
    for (size_t i = 0; name && i < N_SEVERITIES; i++)
        if (!strcmp(name, severity_names[i])) {
            *out = (enum cf_severity)i;
            return 0;
        }
    return -1;
}

void *cf_findings_to_json(const struct cf_findings *f)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < f->n; i++) {
        const struct cf_finding *x = &f->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "severity", cf_severity_name(x->severity));
        cJSON_AddStringToObject(o, "id", x->id);
        cJSON_AddStringToObject(o, "subject", x->subject);
        cJSON_AddStringToObject(o, "why", x->why);
        cf_json_put_str(o, "remedy", x->remedy);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* A string field of finding i; a remedy may be null (nothing to do). */
static int finding_str(const cJSON *o, const char *where, size_t i, const char *key, int may_be_null, char **out,
                       cf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (may_be_null && cJSON_IsNull(v)) {
        *out = NULL;
        return 0;
    }
    if (!cJSON_IsString(v))
        return cf_error_set(err, CF_ERR_FORMAT, "%s[%zu].%s is %s, not a string", where, i, key,
                            v ? "of another type" : "missing");
    *out = cf_strdup(v->valuestring);
    return 0;
}

int cf_findings_from_json(const void *array, const char *where, struct cf_findings *out, cf_error *err)
{
    const cJSON *a = array;
    if (!cJSON_IsArray(a))
        return cf_error_set(err, CF_ERR_FORMAT, "%s is %s, not an array of findings", where,
                            a ? "of another type" : "missing");
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        if (!cJSON_IsObject(it))
            return cf_error_set(err, CF_ERR_FORMAT, "%s[%zu] is not an object", where, i);
        const char *sev = cf_json_str(it, "severity");
        enum cf_severity s;
        if (cf_severity_parse(sev, &s) < 0)
            return cf_error_set(err, CF_ERR_FORMAT, "%s[%zu].severity is %s%s%s, not info, warning or error", where, i,
                                sev ? "'" : "", sev ? sev : "missing", sev ? "'" : "");
        struct cf_finding x = { s, NULL, NULL, NULL, NULL };
        if (finding_str(it, where, i, "id", 0, &x.id, err) < 0 ||
            finding_str(it, where, i, "subject", 0, &x.subject, err) < 0 ||
            finding_str(it, where, i, "why", 0, &x.why, err) < 0 ||
            finding_str(it, where, i, "remedy", 1, &x.remedy, err) < 0) {
            free(x.id);
            free(x.subject);
            free(x.why);
            free(x.remedy);
            return -1;
        }
        /* as written: a saved document's findings are not merged again */
        out->v = cf_xrealloc(out->v, (out->n + 1) * sizeof *out->v);
        out->v[out->n++] = x;
    }
    return 0;
}
