#include "cclforge/numparse.h"

#include "cclforge/strbuf.h"

#include <string.h>

char *cf_version_at(const char *s)
{
    if (!s)
        return NULL;
    while (*s == ' ')
        s++;
    size_t n = strspn(s, "0123456789.");
    while (n && s[n - 1] == '.')
        n--;
    return n ? cf_strndup(s, n) : NULL;
}

int cf_parse_small(const char *s, int max)
{
    long v = 0;
    if (!s)
        return 0;
    while (*s == ' ')
        s++;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > max)
            return max;
    }
    return (int)v;
}
