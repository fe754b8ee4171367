/* libFuzzer target for the reader of NCCL's own log (the transports of
 * --expect-transport). Properties: every connection it reports has a kind that is
 * the first component of its "via", a channel count of at least 1, and bounded
 * strings; reading never runs past the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an unterminated copy: the parser must respect len, not look for a NUL */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    struct cf_smoke_nccl_log log;
    cf_smoke_nccl_log_parse(text, size, &log);
    for (size_t i = 0; i < log.nconns; i++) {
        const struct cf_smoke_transport_conn *c = &log.conns[i];
        size_t k = strlen(c->kind);
        if (c->channels < 1 || c->rank < 0 || c->peer < 0 || k >= sizeof c->kind || strlen(c->via) >= sizeof c->via ||
            strncmp(c->via, c->kind, k))
            abort();
        for (int t = CF_TRANSPORT_ANY; t <= CF_TRANSPORT_SHM; t++)
            if (cf_smoke_transport_matches((enum cf_smoke_transport)t, c) &&
                !cf_smoke_transport_applies((enum cf_smoke_transport)t, c) && t != CF_TRANSPORT_ANY)
                abort(); /* a match is always of the class it constrains */
    }
    cf_smoke_nccl_log_release(&log);
    free(text);
    return 0;
}
