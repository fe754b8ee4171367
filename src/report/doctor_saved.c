/* doctor's pages from saved documents (cclforge/report.h, `cclforge report`):
 * each document read by its strict reader (cclforge/doctor_doc.h,
 * cclforge/gather.h), then drawn by the page the run that wrote it draws. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/gather.h"
#include "cclforge/json.h"
#include "cclforge/report.h"

static int topology(const cJSON *doc, struct strbuf *out, cf_error *err)
{
    struct cf_doctor_doc d;
    int rc = cf_doctor_doc_from_json(doc, "the report", &d, err);
    if (rc == 0)
        rc = cf_doctor_topology_html(d.survey.fabric, d.survey.hostname, NULL, out, err);
    cf_doctor_doc_release(&d);
    return rc;
}

static int gathered(const cJSON *doc, struct strbuf *out, cf_error *err)
{
    struct cf_gather_result r;
    int rc = cf_gather_doc_from_json(doc, &r, err);
    if (rc == 0) {
        const char **labels = cf_gather_labels(&r);
        struct cf_hosts_view v = { labels, r.n_hosts, &r.report, &r.missing };
        cf_doctor_hosts_html(&v, out);
        free(labels);
    } else {
        cf_error_prefix(err, "the gather's document");
    }
    cf_gather_result_release(&r);
    return rc;
}

static int hosts(const cJSON *const *docs, size_t n, struct strbuf *out, cf_error *err)
{
    struct cf_doctor_doc *d = cf_xcalloc(n, sizeof *d);
    int rc = 0;
    size_t read = 0;
    while (rc == 0 && read < n) {
        char which[32];
        snprintf(which, sizeof which, "report %zu", read + 1);
        rc = cf_doctor_doc_from_json(docs[read], which, &d[read], err);
        read++;
    }
    if (rc == 0) {
        char **labels = cf_xcalloc(n, sizeof *labels);
        struct cf_consolidated c;
        cf_doctor_docs_consolidate(d, n, labels, &c);
        struct cf_hosts_view v = { (const char *const *)labels, n, &c, NULL };
        cf_doctor_hosts_html(&v, out);
        cf_consolidated_release(&c);
        for (size_t i = 0; i < n; i++)
            free(labels[i]);
        free(labels);
    }
    for (size_t i = 0; i < read; i++)
        cf_doctor_doc_release(&d[i]);
    free(d);
    return rc;
}

int cf_doctor_saved_html(const struct cJSON *const *docs, size_t n, struct strbuf *out, cf_error *err)
{
    if (!n)
        return cf_error_set(err, CF_ERR_USAGE, "no report to show: give doctor --gather --json's document or the "
                            "doctor --json reports of the hosts");
    for (size_t i = 0; i < n; i++) {
        const char *schema = cf_json_str(docs[i], "schema");
        int gather = schema && !strcmp(schema, "cclforge.doctor-gather/1");
        if (gather && n == 1)
            return gathered(docs[0], out, err);
        if (!schema || strcmp(schema, "cclforge.doctor/1"))
            return cf_error_set(err, CF_ERR_FORMAT, "report %zu is %s%s: give one doctor --gather --json document "
                                "(cclforge.doctor-gather/1) or hosts' doctor --json reports (cclforge.doctor/1)",
                                i + 1, schema ? "of schema " : "without a schema", schema ? schema : "");
    }
    return n == 1 ? topology(docs[0], out, err) : hosts(docs, n, out, err);
}
