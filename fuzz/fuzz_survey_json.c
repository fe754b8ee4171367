/* libFuzzer target for survey files (they come from other hosts): any bytes
 * either fail with an error or load into a survey that diagnoses, compares (as
 * hosts, and its NCCL configuration as a rank's) and serialises back to JSON that loads again to the same document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/ncclconf.h"
#include "cclforge/survey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
    if (!doc)
        return 0;
    struct cf_survey s = CF_SURVEY_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_survey_from_json(doc, &s, &err) == 0) {
        struct cf_findings f = CF_FINDINGS_INIT;
        cf_doctor_diagnose(&s, &f);
        const char *labels[2] = { "a", "b" };
        struct cf_survey pair[2] = { s, s };
        cf_doctor_compare(pair, labels, 2, &f);
        /* doctor --gather compares every rank's NCCL configuration: the loaded one
         * against an empty one on the same host (every variable differs) */
        struct cf_nccl_config empty;
        memset(&empty, 0, sizeof empty);
        struct cf_rank_env ranks[3] = { { 0, "a", s.nccl_config }, { 1, "a", &empty }, { 2, "a", NULL } };
        cf_doctor_compare_ranks(ranks, 3, &f);
        cf_findings_release(&f);
        /* Round trip: what we write, we read back identically. */
        cJSON *out = cf_survey_to_json(&s);
        char *first = cJSON_PrintUnformatted(out);
        struct cf_survey back = CF_SURVEY_INIT;
        if (cf_survey_from_json(out, &back, &err) != 0)
            abort();
        cJSON *again = cf_survey_to_json(&back);
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(again, "host"), "injected_sections");
        cJSON_DeleteItemFromObject(cJSON_GetObjectItem(out, "host"), "injected_sections");
        char *a = cJSON_PrintUnformatted(out), *b = cJSON_PrintUnformatted(again);
        if (a && b && strcmp(a, b) != 0)
            abort();
        free(a);
        free(b);
        free(first);
        cJSON_Delete(out);
        cJSON_Delete(again);
        cf_survey_release(&back);
    }
    cf_error_clear(&err);
    cf_survey_release(&s);
    cJSON_Delete(doc);
    return 0;
}
