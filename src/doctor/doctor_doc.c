/* cclforge.doctor/1 (cclforge/doctor_doc.h): what `cclforge doctor --json`
 * writes -- a host's survey, its findings and their count -- and its strict
 * reader, for `cclforge report`, doctor compare and the hosts page. A saved
 * document may hold anything, so the reader refuses what the writer never
 * writes, naming the field, rather than show a page that guesses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"

#define DOC_MAX (64u << 20)

static const char schema[] = "cclforge.doctor/1";
/* "summary": the findings counted by severity */
struct summary {
    size_t errors, warnings, info;
};
#define A_COUNT(f) CF_JF_AS(struct summary, #f, f, CF_JF_SIZE, .flags = CF_JF_REQUIRED)
static const struct cf_jf summary_fields[] = { A_COUNT(errors), A_COUNT(warnings), A_COUNT(info) };
static const struct cf_jf_table summary_table = CF_JF_TABLE(struct summary, summary_fields);

static struct summary summary_of(const struct cf_findings *f)
{
    return (struct summary){ cf_findings_count(f, CF_SEV_ERROR), cf_findings_count(f, CF_SEV_WARNING),
                             cf_findings_count(f, CF_SEV_INFO) };
}

void *cf_doctor_doc_to_json(const struct cf_survey *s, const struct cf_findings *f)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", schema);
    cJSON *sections = cf_survey_to_json(s);
    for (cJSON *it = sections->child; it;) {
        cJSON *next = it->next;
        cJSON_AddItemToObject(doc, it->string, cJSON_DetachItemViaPointer(sections, it));
        it = next;
    }
    cJSON_Delete(sections);
    cJSON_AddItemToObject(doc, "findings", cf_findings_to_json(f));
    const struct summary sum = summary_of(f);
    cJSON_AddItemToObject(doc, "summary", cf_jf_to_json(&summary_table, &sum));
    return doc;
}

/* "summary": each count what the findings hold */
static int read_summary(const cJSON *doc, const struct cf_findings *f, cf_error *err)
{
    const struct cf_jf_reader r = { err, NULL, "", 0, 0 };
    struct summary got = { 0 }, want = summary_of(f);
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    if (!sum)
        return cf_jf_refuse(&r, "\"summary\" is missing");
    if (cf_jf_read(&r, &summary_table, sum, &got, "summary") < 0)
        return -1;
    return cf_jf_same_numbers(&r, &summary_table, &got, &want, "summary");
}

static int read_doc(const cJSON *doc, const char *name, int survey_too, struct cf_doctor_doc *d, cf_error *err)
{
    memset(d, 0, sizeof *d);
    /* the sections first: a hand-written --survey subset is named by what it lacks */
    if (cf_survey_from_json(doc, &d->survey, err) < 0)
        return cf_error_prefix(err, "%s", name);
    if (cf_survey_check_whole(&d->survey, name, err) < 0)
        return -1;
    const char *sch = cf_json_str(doc, "schema");
    if (survey_too && sch && !strcmp(sch, "cclforge.survey/1"))
        return cf_survey_host_from_json(doc, &d->survey, err) < 0 ? cf_error_prefix(err, "%s", name) : 0;
    if (!sch || strcmp(sch, schema))
        return cf_error_set(err, CF_ERR_FORMAT, "%s is not a doctor report (schema %s, wanted %s): make one with "
                            "cclforge doctor --json", name, sch ? sch : "missing", schema);
    if (cf_survey_host_from_json(doc, &d->survey, err) < 0 ||
        cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(doc, "findings"), "findings", &d->findings, err) < 0 ||
        read_summary(doc, &d->findings, err) < 0)
        return cf_error_prefix(err, "%s", name);
    return 0;
}

int cf_doctor_doc_from_json(const void *json, const char *name, struct cf_doctor_doc *d, cf_error *err)
{
    return read_doc(json, name, 0, d, err);
}

int cf_doctor_doc_load(const char *path, int survey_too, struct cf_doctor_doc *d, cf_error *err)
{
    memset(d, 0, sizeof *d);
    struct strbuf text = STRBUF_INIT;
    if (cf_read_file(path, DOC_MAX, &text, err) < 0) {
        cf_sb_release(&text);
        return cf_error_prefix(err, "reading %s", path);
    }
    cJSON *doc = cJSON_ParseWithLength(cf_sb_str(&text), text.len);
    cf_sb_release(&text);
    if (!doc)
        return cf_error_set(err, CF_ERR_FORMAT, "%s is not JSON: write it with `cclforge doctor --json > FILE`", path);
    int rc = read_doc(doc, path, survey_too, d, err);
    cJSON_Delete(doc);
    return rc;
}

void cf_doctor_doc_release(struct cf_doctor_doc *d)
{
    cf_survey_release(&d->survey);
    cf_findings_release(&d->findings);
}

void cf_doctor_docs_consolidate(const struct cf_doctor_doc *docs, size_t n, char **labels,
                                struct cf_consolidated *out)
{
    struct cf_survey *s = cf_xcalloc(n + 1, sizeof *s);
    struct cf_findings *per = cf_xcalloc(n + 1, sizeof *per);
    for (size_t i = 0; i < n; i++) {
        s[i] = docs[i].survey; /* shallow: owned by docs */
        per[i] = docs[i].findings;
        const char *name = s[i].hostname ? s[i].hostname : "host";
        labels[i] = cf_strdup(name);
        /* two reports from one host name still need telling apart */
        for (unsigned k = 2; k < 1u << 20; k++) {
            size_t j = 0;
            while (j < i && strcmp(labels[j], labels[i]))
                j++;
            if (j == i)
                break;
            free(labels[i]);
            labels[i] = cf_asprintf("%s#%u", name, k);
        }
    }
    cf_doctor_consolidate(s, (const char *const *)labels, per, n, out);
    free(s);
    free(per);
}
