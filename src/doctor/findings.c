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
#include "cclforge/json_fields.h"
#include "cclforge/strbuf.h"

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

static const char *severity_name(int v)
{
    return cf_severity_name((enum cf_severity)v);
}

/* one finding, as every doctor document writes it; a remedy may be null (nothing to do) */
#define F(key, field, ...) CF_JF_AS(struct cf_finding, key, field, __VA_ARGS__)
static const struct cf_jf finding_fields[] = {
    F("severity", severity, CF_JF_ENUM, .name = severity_name, .nnames = N_SEVERITIES, .flags = CF_JF_REQUIRED),
    F("id", id, CF_JF_STR, .flags = CF_JF_REQUIRED), F("subject", subject, CF_JF_STR, .flags = CF_JF_REQUIRED),
    F("why", why, CF_JF_STR, .flags = CF_JF_REQUIRED),
    F("remedy", remedy, CF_JF_STR, .flags = CF_JF_REQUIRED | CF_JF_NULLABLE),
};
#undef F
static const struct cf_jf_table finding_table = CF_JF_TABLE(struct cf_finding, finding_fields);

void *cf_findings_to_json(const struct cf_findings *f)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < f->n; i++)
        cJSON_AddItemToArray(a, cf_jf_to_json(&finding_table, &f->v[i]));
    return a;
}

int cf_findings_from_json(const void *array, const char *where, struct cf_findings *out, cf_error *err)
{
    const cJSON *a = array;
    if (!cJSON_IsArray(a))
        return cf_error_set(err, CF_ERR_FORMAT, "%s is %s, not an array of findings", where,
                            a ? "of another type" : "missing");
    const struct cf_jf_reader r = { err, NULL, "", 0, 1 };
    size_t i = 0;
    for (const cJSON *it = a->child; it; it = it->next, i++) {
        char *path = cf_asprintf("%s[%zu]", where, i);
        struct cf_finding x = { 0 };
        int rc = cf_jf_read(&r, &finding_table, it, &x, path);
        free(path);
        if (rc < 0) {
            cf_jf_release(&finding_table, &x);
            return -1;
        }
        /* as written: a saved document's findings are not merged again */
        out->v = cf_xrealloc(out->v, (out->n + 1) * sizeof *out->v);
        out->v[out->n++] = x;
    }
    return 0;
}
