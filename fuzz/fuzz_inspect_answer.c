/* libFuzzer target for inspect's remembered answer (inspect_answer.c): the
 * value of a dependency-cache entry is bytes on disk, replayed to stdout when
 * it decodes, so what decodes must be an exit status of 0 or 1 and bytes the
 * printers could have written (no control character but newline and tab). */
#include <stdint.h>
#include <stdlib.h>

#include "cclforge/inspect.h"
#include "fuzz_guard.h"

static void fuzz_one(const uint8_t *data, size_t size)
{
    int code = -1;
    const char *out = NULL;
    size_t len = 0;
    if (cf_inspect_answer_decode((const char *)data, size, &code, &out, &len) != 0)
        return;
    if ((code != 0 && code != 1) || out < (const char *)data || out + len > (const char *)data + size)
        abort();
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)out[i];
        if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f)
            abort();
    }
}

FUZZ_GUARDED_TARGET(fuzz_one)
