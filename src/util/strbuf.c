#include "cclforge/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sb_empty[1]; /* what cf_sb_str gives an empty strbuf: never written */

void *cf_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        abort(); /* out of memory: nothing sensible to return to */
    return p;
}

void *cf_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        abort();
    return p;
}

void *cf_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        abort();
    return q;
}

void cf_sb_grow(struct strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;
    if (need < sb->len)
        abort(); /* overflow */
    if (need <= sb->alloc)
        return;
    size_t alloc = sb->alloc ? sb->alloc : 64;
    while (alloc < need)
        alloc = alloc * 3 / 2 + 16;
    char *old = sb->alloc ? sb->buf : NULL;
    sb->buf = cf_xrealloc(old, alloc);
    if (!old)
        sb->buf[0] = '\0';
    sb->alloc = alloc;
}

void cf_sb_add(struct strbuf *sb, const void *data, size_t len)
{
    cf_sb_grow(sb, len);
    if (len)
        memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void cf_sb_adds(struct strbuf *sb, const char *s)
{
    cf_sb_add(sb, s, strlen(s));
}

void cf_sb_addc(struct strbuf *sb, char c)
{
    cf_sb_add(sb, &c, 1);
}

void cf_sb_addvf(struct strbuf *sb, const char *fmt, va_list ap)
{
    /* Format into the room there is (most strings fit in 128 bytes), and a
     * second time only when it was too small. */
    cf_sb_grow(sb, 128);
    size_t room = sb->alloc - sb->len;
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(sb->buf + sb->len, room, fmt, cp);
    va_end(cp);
    if (n < 0) {
        sb->buf[sb->len] = '\0';
        return;
    }
    if ((size_t)n >= room) {
        cf_sb_grow(sb, (size_t)n);
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    }
    sb->len += (size_t)n;
}

void cf_sb_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(sb, fmt, ap);
    va_end(ap);
}

void cf_sb_reset(struct strbuf *sb)
{
    cf_sb_setlen(sb, 0);
}

void cf_sb_setlen(struct strbuf *sb, size_t len)
{
    if (!sb->alloc) {
        if (len == 0)
            return;
        abort();
    }
    if (len > sb->len)
        abort();
    sb->len = len;
    sb->buf[len] = '\0';
}

void cf_sb_rtrim(struct strbuf *sb)
{
    while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
        sb->len--;
    if (sb->alloc)
        sb->buf[sb->len] = '\0';
}

char *cf_sb_detach(struct strbuf *sb)
{
    char *s = sb->alloc ? sb->buf : cf_strdup("");
    sb->buf = NULL;
    sb->len = sb->alloc = 0;
    return s;
}

void cf_sb_release(struct strbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->alloc = 0;
}

const char *cf_sb_str(const struct strbuf *sb)
{
    return sb->alloc ? sb->buf : sb_empty;
}

char *cf_strdup(const char *s)
{
    if (!s)
        return NULL;
    return cf_strndup(s, strlen(s));
}

char *cf_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t len = strnlen(s, n);
    char *p = cf_xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *cf_vasprintf(const char *fmt, va_list ap)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addvf(&sb, fmt, ap);
    return cf_sb_detach(&sb);
}

char *cf_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = cf_vasprintf(fmt, ap);
    va_end(ap);
    return s;
}

int cf_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int cf_ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

static void strvec_reserve(struct strvec *sv)
{
    if (sv->n + 2 > sv->alloc) {
        sv->alloc = sv->alloc ? sv->alloc * 2 : 8;
        sv->v = cf_xrealloc(sv->v, sv->alloc * sizeof(*sv->v));
    }
}

void cf_strvec_push_nodup(struct strvec *sv, char *s)
{
    strvec_reserve(sv);
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

void cf_strvec_push(struct strvec *sv, const char *s)
{
    cf_strvec_push_nodup(sv, cf_strdup(s));
}

void cf_strvec_push_all(struct strvec *sv, const char *const *words)
{
    for (; *words; words++)
        cf_strvec_push(sv, *words);
}

void cf_strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cf_strvec_push_nodup(sv, cf_vasprintf(fmt, ap));
    va_end(ap);
}

void cf_strvec_split(struct strvec *sv, const char *s, const char *seps, int keep_empty)
{
    if (!s)
        return;
    const char *p = s;
    for (;;) {
        size_t n = strcspn(p, seps);
        if (n || keep_empty)
            cf_strvec_push_nodup(sv, cf_strndup(p, n));
        if (!p[n])
            break;
        p += n + 1;
    }
}

int cf_strvec_contains(const struct strvec *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return 1;
    return 0;
}

void cf_strvec_clear(struct strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->alloc = 0;
}

char *const *cf_strvec_argv(struct strvec *sv)
{
    if (!sv->v)
        strvec_reserve(sv), sv->v[0] = NULL;
    return sv->v;
}

int cf_str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}
