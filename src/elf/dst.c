/* $ORIGIN / $LIB / $PLATFORM expansion with glibc's rules (elf/dl-load.c). */
#include "cclforge/dst.h"

#include <ctype.h>
#include <string.h>

#include "cclforge/strbuf.h"

enum dst_kind { DST_ORIGIN, DST_LIB, DST_PLATFORM };

static const struct {
    const char *name;
    enum dst_kind kind;
} dst_names[] = {
    { "ORIGIN", DST_ORIGIN },
    { "PLATFORM", DST_PLATFORM },
    { "LIB", DST_LIB },
};

/* Length of the token at s (just after '$') if it names `name`, else 0. A bare
 * name must not run on into more identifier characters; a braced one must close. */
static size_t token_length(const char *s, const char *name)
{
    size_t n = strlen(name);
    int curly = s[0] == '{';
    const char *p = s + curly;
    if (strncmp(p, name, n) != 0)
        return 0;
    if (curly)
        return p[n] == '}' ? n + 2 : 0;
    if (isalnum((unsigned char)p[n]) || p[n] == '_')
        return 0;
    return n;
}

/* Which token starts at s (just after '$'), with its length; -1 when none. */
static int match_token(const char *s, size_t *len)
{
    for (size_t i = 0; i < sizeof dst_names / sizeof dst_names[0]; i++) {
        size_t n = token_length(s, dst_names[i].name);
        if (n) {
            *len = n;
            return (int)dst_names[i].kind;
        }
    }
    return -1;
}

int cf_dst_has_token(const char *s)
{
    for (const char *p = strchr(s, '$'); p; p = strchr(p + 1, '$')) {
        size_t len;
        if (match_token(p + 1, &len) >= 0)
            return 1;
    }
    return 0;
}

char *cf_dst_expand(const char *entry, const char *origin_dir, const char *lib, const char *platform)
{
    struct strbuf out = STRBUF_INIT;
    const char *values[3];
    values[DST_ORIGIN] = origin_dir;
    values[DST_LIB] = lib;
    values[DST_PLATFORM] = platform;
    for (const char *p = entry; *p;) {
        size_t len = 0;
        int kind = *p == '$' ? match_token(p + 1, &len) : -1;
        if (kind < 0) {
            cf_sb_addc(&out, *p++);
            continue;
        }
        if (!values[kind]) {
            cf_sb_release(&out);
            return NULL;
        }
        cf_sb_adds(&out, values[kind]);
        p += 1 + len;
    }
    return cf_sb_detach(&out);
}
