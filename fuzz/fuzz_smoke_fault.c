/* libFuzzer target for the smoke fault spec (CCLFORGE_SMOKE_FAULT,
 * "RANK:ACTION:OP"), read through smoke's public parser only. Properties: a
 * spec either fails with a message or yields an action, a rank and an op in
 * range. */
#include <stdint.h>
#include <stdlib.h>

#include "cclforge/smoke.h"
#include "cclforge/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *spec = cf_strndup((const char *)data, size);
    struct cf_smoke_fault f;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_smoke_fault_parse(spec, &f, &err);
    /* CF_FAULT_SLOW is the last action (cclforge/smoke.h); a non-empty spec that parses names one */
    if (rc == 0 && (f.action > CF_FAULT_SLOW || (spec[0] && f.action == CF_FAULT_NONE) || f.rank < 0 ||
                    (int)f.op < 0 || f.op > CF_OP_COUNT))
        abort();
    if (rc < 0 && !cf_error_message(&err)[0])
        abort();
    cf_error_clear(&err);
    free(spec);
    return 0;
}
