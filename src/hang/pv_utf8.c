/* Whether a dump's string is UTF-8: Python refuses a pickle whose string is
 * not, and what cclforge writes from a dump (JSON, HTML, the terminal) must
 * be. Surrogates (ED A0..BF) are refused too: UTF-8 has none. */
#include <string.h>

#include "hang/pv_doc.h"

size_t cf_pv_utf8_invalid_at(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        /* eight ASCII bytes at a time, the common case */
        if (len - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ULL)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
        if (c >= 0xc2 && c <= 0xdf)
            n = 2;
        else if (c >= 0xe0 && c <= 0xef) {
            n = 3;
            if (c == 0xe0)
                lo = 0xa0; /* no overlong forms */
            else if (c == 0xed)
                hi = 0x9f; /* no surrogates */
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 4;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f; /* nothing past U+10FFFF */
        } else {
            return i;
        }
        if (len - i < n || s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k < n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
        i += n;
    }
    return len;
}
