/* Byte sizes as nccl-tests writes them on its command line. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cclforge/smoke.h"

int cf_smoke_parse_size(const char *s, size_t *out, cf_error *err)
{
    static const struct { char suffix; unsigned shift; } units[] = {
        { 'K', 10 }, { 'k', 10 }, { 'M', 20 }, { 'm', 20 }, { 'G', 30 }, { 'g', 30 },
    };
    if (!s || !*s)
        return cf_error_set(err, CF_ERR_USAGE, "empty size");
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return cf_error_set(err, CF_ERR_USAGE, "'%s' is not a size (examples: 8, 64K, 128M, 1G)", s);
    unsigned shift = 0;
    if (*end) {
        int known = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (*end == units[i].suffix) {
                shift = units[i].shift;
                known = 1;
            }
        if (!known || (end[1] && !(end[1] == 'B' && !end[2])))
            return cf_error_set(err, CF_ERR_USAGE, "'%s' is not a size (examples: 8, 64K, 128M, 1G)", s);
    }
    if (v > (SIZE_MAX >> shift))
        return cf_error_set(err, CF_ERR_USAGE, "size '%s' is too large", s);
    *out = (size_t)v << shift;
    return 0;
}
