/* libFuzzer target for $ORIGIN/$LIB/$PLATFORM expansion: the input is
 * "entry\0origin\0lib\0platform", missing parts are NULL (unknown). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/dst.h"
#include "fuzz_parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *parts[4];
    fuzz_split_parts(data, size, parts, 4);
    if (!parts[0])
        return 0;
    char *out = cf_dst_expand(parts[0], parts[1], parts[2], parts[3]);
    int has = cf_dst_has_token(parts[0]);
    /* Without tokens the entry comes back unchanged. */
    if (!has && (!out || strcmp(out, parts[0]) != 0))
        abort();
    /* With every value known, nothing is dropped. */
    if (parts[1] && parts[2] && parts[3] && !out)
        abort();
    free(out);
    for (int i = 0; i < 4; i++)
        free(parts[i]);
    return 0;
}
