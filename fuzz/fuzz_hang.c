/* libFuzzer target: cclforge hang's analysis over untrusted dumps. The input
 * is split at each "\n--\n" into up to 8 dumps (ranks 0 to 7), each read as
 * its first byte says (pickle or JSON), then analysed, written as
 * cclforge.hang/1, read back by the strict reader, and drawn as text and as
 * the page. Properties: every divergence names at least one odd rank and no
 * rank both in and odd, the collectives' numbers ascend; each group's ranks ascend; the document written is
 * read back, and written again the same; the page ends its document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/hang.h"
#include "cclforge/report.h"
#include "fuzz_guard.h"

static void check_groups(const struct cf_hang_result *r)
{
    for (size_t i = 0; i < r->n_groups; i++) {
        const struct cf_hang_group *g = &r->groups[i];
        for (size_t k = 1; k < g->n_ranks; k++)
            if (g->ranks[k] <= g->ranks[k - 1])
                __builtin_trap();
        for (size_t k = 0; k < g->n_div; k++) {
            const struct cf_hang_divergence *d = &g->div[k];
            if (!d->n_odd || !d->why || (k && !d->is_p2p && d->seq <= g->div[k - 1].seq))
                __builtin_trap();
            for (size_t a = 0; a < d->n_in; a++)
                for (size_t b = 0; b < d->n_odd; b++)
                    if (d->ranks_in[a] == d->ranks_odd[b])
                        __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data, size, &g) < 0)
        return 0;
    struct cf_hang_result r;
    memset(&r, 0, sizeof r);
    const uint8_t *p = g.data, *end = g.data + size;
    for (int rank = 0; rank < 8 && p <= end; rank++) {
        const uint8_t *sep = NULL;
        for (const uint8_t *q = p; q + 4 <= end && !sep; q++)
            if (!memcmp(q, "\n--\n", 4))
                sep = q;
        size_t len = (size_t)((sep ? sep : end) - p);
        r.dumps = realloc(r.dumps, (r.n_dumps + 1) * sizeof *r.dumps);
        struct cf_hang_dump *d = &r.dumps[r.n_dumps++];
        memset(d, 0, sizeof *d);
        d->rank = rank;
        d->gpu = -1;
        d->path = strdup("fuzz");
        cf_hang_read_dump(p, len, &r, d);
        r.n_refused += d->refused != NULL;
        if (!sep)
            break;
        p = sep + 4;
    }
    cf_hang_analyse(&r);
    check_groups(&r);
    struct strbuf text = STRBUF_INIT;
    cf_hang_text(&r, &text);
    cJSON *doc = cf_hang_to_json(&r);
    char *json = cJSON_PrintUnformatted(doc);
    struct cf_hang_result back;
    cf_error err = CF_ERROR_INIT;
    if (cf_hang_from_json(doc, &back, &err) < 0)
        __builtin_trap(); /* what the writer writes, the reader reads */
    cJSON *again = cf_hang_to_json(&back);
    char *json2 = cJSON_PrintUnformatted(again);
    if (strcmp(json, json2))
        __builtin_trap();
    struct strbuf html = STRBUF_INIT;
    cf_hang_report_html(&back, json, &html);
    if (!cf_ends_with(cf_sb_str(&html), "</body></html>\n"))
        __builtin_trap();
    cf_sb_release(&html);
    cf_sb_release(&text);
    cJSON_free(json);
    cJSON_free(json2);
    cJSON_Delete(doc);
    cJSON_Delete(again);
    cf_hang_release(&back);
    cf_hang_release(&r);
    fuzz_guard_release(&g);
    return 0;
}
