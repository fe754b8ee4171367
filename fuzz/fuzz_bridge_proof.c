/* libFuzzer target: the bridge plan's reader of the preprocessor's answers
 * (-H's header tree and -dM's macros, text that user headers shape). The input
 * is the tree, a NUL, then the macros. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/bridge_internal.h"
#include "cclforge/strbuf.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 2);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = text[size + 1] = 0;
    const char *tree = text, *macros = text + strlen(text) + 1;
    static const char *const roots[] = { "/r/include/rccl", "/r/cuda/cuda-12/include", "/r/include", "/t/include" };
    struct cf_bridge_plan p;
    memset(&p, 0, sizeof p);
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        cf_bridge_item_push(&p.includes, &p.n_includes, roots[i], "fuzz");
    cf_bridge_read_proof(&p, tree, macros);
    for (size_t k = 0; k < sizeof p.headers / sizeof p.headers[0]; k++) {
        /* a version only for a header that resolved, and that under a planned root */
        if (p.headers[k].version && !p.headers[k].path)
            abort();
        if (p.headers[k].path && strncmp(p.headers[k].path, "/r/", 3) && strncmp(p.headers[k].path, "/t/", 3))
            abort();
    }
    cf_bridge_plan_release(&p);
    free(text);
}

FUZZ_GUARDED_TARGET(fuzz_one)
