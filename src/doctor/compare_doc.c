/* doctor compare (cclforge/doctor_doc.h): several saved cclforge.doctor/1
 * documents read strictly, compared across hosts, and the result's document,
 * cclforge.doctor-compare/1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/json.h"

int cf_compare_run(char *const *files, size_t n, struct cf_compare *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    out->docs = cf_xcalloc(n + 1, sizeof *out->docs);
    out->labels = cf_xcalloc(n + 1, sizeof *out->labels);
    out->files = files;
    for (size_t i = 0; i < n; i++) {
        out->n = i + 1; /* released with the others */
        if (cf_doctor_doc_load(files[i], 1, &out->docs[i], err) < 0)
            return -1;
        /* two reports from one host name still need telling apart */
        const char *host = out->docs[i].survey.hostname;
        out->labels[i] = host ? host : files[i];
        for (size_t k = 0; k < i; k++)
            if (!strcmp(out->labels[k], out->labels[i]))
                out->labels[i] = files[i];
    }
    struct cf_survey *hosts = cf_xcalloc(n + 1, sizeof *hosts);
    for (size_t i = 0; i < n; i++)
        hosts[i] = out->docs[i].survey; /* shallow */
    cf_doctor_consolidate(hosts, out->labels, NULL, n, &out->cons);
    free(hosts);
    return 0;
}

void cf_compare_release(struct cf_compare *c)
{
    for (size_t i = 0; i < c->n; i++)
        cf_doctor_doc_release(&c->docs[i]);
    free(c->docs);
    free(c->labels);
    cf_consolidated_release(&c->cons);
    memset(c, 0, sizeof *c);
}

void cf_compare_host_row(const struct cf_survey *s, struct strbuf *comm, struct strbuf *torch, struct strbuf *archs)
{
    const struct cf_comm_lib *cl = cf_survey_active_comm(s);
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (cl)
        cf_sb_addf(comm, "%s %s (%d)", cf_comm_lib_profile(cl)->display, cl->version && *cl->version ? cl->version : "-",
                   cl->version_code);
    else
        cf_sb_adds(comm, "none");
    cf_sb_adds(torch, t && t->version ? t->version : "none");
    struct strvec v = STRVEC_INIT;
    cf_survey_gpu_archs(s, 1, &v);
    for (size_t k = 0; k < v.n; k++)
        cf_sb_addf(archs, "%s%s", k ? " " : "", v.v[k]);
    cf_sb_adds(archs, v.n ? "" : "none");
    cf_strvec_clear(&v);
}

void *cf_compare_to_json(const struct cf_compare *c)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.doctor-compare/1");
    cJSON *arr = cJSON_AddArrayToObject(doc, "hosts");
    for (size_t i = 0; i < c->n; i++) {
        const struct cf_survey *s = &c->docs[i].survey;
        cJSON *h = cJSON_CreateObject();
        const struct cf_comm_lib *cl = cf_survey_active_comm(s);
        const struct cf_libtorch *t = cf_survey_torch(s);
        cJSON_AddStringToObject(h, "label", c->labels[i]);
        cJSON_AddStringToObject(h, "file", c->files[i]);
        cf_json_put_str(h, "comm", cl && cl->version ? cf_comm_lib_profile(cl)->kind : NULL);
        cJSON_AddNumberToObject(h, "comm_version_code", cl ? cl->version_code : 0);
        cf_json_put_str(h, "torch_version", t ? t->version : NULL);
        struct strvec archs = STRVEC_INIT;
        cf_survey_gpu_archs(s, 1, &archs);
        cf_json_put_strvec(h, "gpu_archs", &archs);
        cf_strvec_clear(&archs);
        cJSON_AddItemToArray(arr, h);
    }
    cf_consolidated_to_json(&c->cons, doc);
    return doc;
}
