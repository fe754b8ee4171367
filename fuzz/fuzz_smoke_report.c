/* libFuzzer target for the smoke report's readers of untrusted input: a saved
 * smoke JSON document through the strict reader (cf_smoke_doc_open: the model
 * and its matrix) and cf_smoke_report_html, and host names through
 * cf_hostlist_compress, and a rank's links in the line form ranks exchange
 * (cf_rank_links_parse; what parses formats back the same). Properties: no
 * crash, no leak; a model's indexes stay inside it; what the writer writes of
 * an accepted document the reader accepts again and the writer writes the same;
 * the hostlist of any non-empty names is not empty. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/hostlist.h"
#include "cclforge/report.h"
#include "cclforge/path_capacity.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/strbuf.h"

/* the writer's text of an accepted document reads back to the same text */
static void check_round_trip(const struct cf_smoke_doc *d)
{
    char *text = cf_smoke_doc_json(d, 0);
    cJSON *again = cJSON_Parse(text);
    struct cf_smoke_doc d2;
    if (!again || cf_smoke_doc_read(again, &d2, NULL) < 0)
        abort();
    char *text2 = cf_smoke_doc_json(&d2, 0);
    if (strcmp(text, text2))
        abort();
    free(text2);
    cf_smoke_doc_release(&d2);
    cJSON_Delete(again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = cf_strndup((const char *)data, size);
    cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
    if (doc) {
        struct cf_smoke_doc d;
        struct cf_pair_matrix m;
        if (cf_smoke_doc_open(doc, &d, &m, NULL) == 0) {
            if (m.shown >= m.nsizes && m.nsizes)
                abort();
            struct cf_pair_ref worst[8];
            size_t k = cf_pair_matrix_worst(&m, m.shown, worst, 8);
            for (size_t i = 0; i < k; i++)
                if (worst[i].a >= m.nhosts || worst[i].b >= m.nhosts)
                    abort();
            struct strbuf html = STRBUF_INIT;
            cf_smoke_report_html(&d, &m, in, &html);
            cf_sb_release(&html);
            check_round_trip(&d);
            cf_pair_matrix_release(&m);
            cf_smoke_doc_release(&d);
        }
        cJSON_Delete(doc);
    }
    struct cf_rank_link links[CF_RANK_LINKS_MAX], again[CF_RANK_LINKS_MAX];
    size_t nl = cf_rank_links_parse(in, links, CF_RANK_LINKS_MAX);
    struct strbuf line = STRBUF_INIT;
    cf_rank_links_format(links, nl, &line);
    if (cf_rank_links_parse(cf_sb_str(&line), again, CF_RANK_LINKS_MAX) != nl)
        abort();
    if (nl && cf_path_capacity(links, nl, again, nl, NULL) < 0)
        abort();
    struct strbuf words = STRBUF_INIT;
    if (cf_gpu_capacity(links, nl, &words) < 0)
        abort();
    cf_sb_release(&words);
    cf_sb_release(&line);
    struct strvec names = STRVEC_INIT;
    cf_strvec_split(&names, in, ",\n", 0);
    char *list = cf_hostlist_compress((const char *const *)names.v, names.n);
    if (names.n && !list[0])
        abort();
    free(list);
    cf_strvec_clear(&names);
    free(in);
    return 0;
}
