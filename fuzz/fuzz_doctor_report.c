/* libFuzzer target: doctor's HTML reports over untrusted input -- NCCL's
 * topology XML read into the model, and saved JSON documents (a gather's, a
 * host's, two hosts') read by their strict readers and made into pages. Properties: a node's parent comes before it (no
 * cycle), links join nodes that exist, the class matrix is symmetric, and
 * each page ends its document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_report.h"
#include "cclforge/report.h"
#include "fuzz_guard.h"

static void check_model(const struct cf_topo *t)
{
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (t->nodes[i].parent >= (int)i || !t->nodes[i].id || !t->nodes[i].label)
            __builtin_trap();
        for (size_t j = 0; j < t->n_nodes; j++) {
            const char *a = t->cls[i * t->n_nodes + j], *b = t->cls[j * t->n_nodes + i];
            if (!a != !b || (a && strcmp(a, b)))
                __builtin_trap();
        }
    }
    for (size_t i = 0; i < t->n_links; i++)
        if (t->links[i].a < 0 || t->links[i].b < 0 || (size_t)t->links[i].a >= t->n_nodes ||
            (size_t)t->links[i].b >= t->n_nodes)
            __builtin_trap();
}

static void check_page(const struct strbuf *html)
{
    if (!cf_ends_with(cf_sb_str(html), "</body></html>\n"))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data, size, &g) < 0)
        return 0;
    struct cf_topo t;
    cf_error err = CF_ERROR_INIT;
    if (cf_topo_from_xml((const char *)g.data, size, &t, &err) == 0) {
        check_model(&t);
        cf_topo_release(&t);
    }
    cf_error_clear(&err);
    cJSON *doc = cJSON_ParseWithLength((const char *)g.data, size);
    if (doc) {
        struct strbuf html = STRBUF_INIT;
        const cJSON *two[2] = { doc, doc };
        if (cf_doctor_saved_html(two, 1, &html, &err) == 0) /* a host's topology, or a gather's hosts */
            check_page(&html);
        cf_error_clear(&err);
        cf_sb_reset(&html);
        if (cf_doctor_saved_html(two, 2, &html, &err) == 0) /* two hosts' reports side by side */
            check_page(&html);
        cf_error_clear(&err);
        cf_sb_release(&html);
        cJSON_Delete(doc);
    }
    fuzz_guard_release(&g);
    return 0;
}
