/* Fuzz inputs that carry several strings: "a\0b\0c", split into n parts
 * (NUL-terminated copies, caller frees); missing parts are NULL. */
#ifndef CCLFORGE_FUZZ_PARTS_H
#define CCLFORGE_FUZZ_PARTS_H

#include <stdint.h>
#include <string.h>

#include "cclforge/strbuf.h"

static inline void fuzz_split_parts(const uint8_t *data, size_t size, char **parts, int n)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        parts[i] = NULL;
        if (at > size)
            continue;
        const uint8_t *end = memchr(data + at, '\0', size - at);
        size_t len = end ? (size_t)(end - (data + at)) : size - at;
        parts[i] = cf_strndup((const char *)data + at, len);
        at += len + 1;
    }
}

#endif
