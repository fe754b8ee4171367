/* Member names (member_name.h): one pass over the bytes for each question,
 * no allocation but the output. */
#include "pkg/member_name.h"

#include <string.h>

const char *cf_member_name_problem(const char *n, size_t len)
{
    if (!len)
        return "empty name";
    if (len > CF_MEMBER_NAME_MAX)
        return "a name longer than 4096 bytes, which no file system path can be";
    if (n[0] == '/')
        return "absolute path";
    if (memchr(n, '\\', len))
        return "backslash in the name";
    if (len >= 2 && n[1] == ':')
        return "drive letter";
    int named = 0;
    for (size_t i = 0; i < len;) {
        const char *slash = memchr(n + i, '/', len - i);
        size_t end = slash ? (size_t)(slash - n) : len;
        if (end - i == 2 && n[i] == '.' && n[i + 1] == '.')
            return "'..' component (zip slip)";
        named |= end - i > 1 || (end - i == 1 && n[i] != '.');
        i = end + 1;
    }
    return named ? NULL : "no name: only '.' and empty components";
}

int cf_member_name_ok(const char *name)
{
    size_t len = strlen(name);
    return !cf_member_name_problem(name, len) && cf_member_name_is_normal(name, len);
}

long cf_member_name_control(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f))
            return (long)i;
    return -1;
}

int cf_member_name_is_normal(const char *n, size_t len)
{
    for (size_t i = 0; i < len;) {
        const char *slash = memchr(n + i, '/', len - i);
        size_t end = slash ? (size_t)(slash - n) : len;
        if (end == i || (end - i == 1 && n[i] == '.') || (slash && end + 1 == len))
            return 0;
        i = end + 1;
    }
    return 1;
}

void cf_member_name_normalize(const char *n, size_t len, struct strbuf *out)
{
    size_t start_len = out->len;
    for (size_t i = 0; i < len;) {
        const char *slash = memchr(n + i, '/', len - i);
        size_t end = slash ? (size_t)(slash - n) : len;
        size_t k = end - i;
        if (k && !(k == 1 && n[i] == '.')) {
            if (out->len > start_len)
                cf_sb_addc(out, '/');
            cf_sb_add(out, n + i, k);
        }
        i = end + 1;
    }
}

/* One code point's fold from the table, or NULL when it folds to itself
 * (or is not one the table knows). *n: the bytes it takes. */
static const char *fold_of(const unsigned char *p, size_t left, size_t *n)
{
    *n = 1;
    if (left < 2 || (p[1] & 0xc0) != 0x80)
        return NULL;
    if (p[0] >= 0xc2 && p[0] <= 0xc5) { /* U+0080..U+017F */
        *n = 2;
        const char *f = cf_member_fold_latin[((p[0] & 0x1fu) << 6 | (p[1] & 0x3fu)) - 0x80];
        return *f ? f : NULL;
    }
    if (p[0] == 0xcd && p[1] >= 0x80 && p[1] <= 0x84) { /* U+0340..U+0344 */
        *n = 2;
        const char *f = cf_member_fold_marks[p[1] - 0x80];
        return *f ? f : NULL;
    }
    return NULL;
}

void cf_member_name_fold(const char *name, size_t len, struct strbuf *out)
{
    const unsigned char *p = (const unsigned char *)name;
    cf_sb_grow(out, len + 1);
    for (size_t i = 0; i < len;) {
        if (p[i] < 0x80) { /* a run of ASCII at once, lower-cased in place */
            size_t end = i, at = out->len;
            while (end < len && p[end] < 0x80)
                end++;
            cf_sb_add(out, name + i, end - i);
            for (size_t k = at; k < out->len; k++)
                if (out->buf[k] >= 'A' && out->buf[k] <= 'Z')
                    out->buf[k] = (char)(out->buf[k] + ('a' - 'A'));
            i = end;
            continue;
        }
        size_t n;
        const char *f = fold_of(p + i, len - i, &n);
        if (f)
            cf_sb_adds(out, f);
        else
            cf_sb_add(out, name + i, n);
        i += n;
    }
}

int cf_member_name_folds_to_itself(const char *name, size_t len)
{
    const unsigned char *p = (const unsigned char *)name;
    for (size_t i = 0; i < len;) {
        if (p[i] >= 'A' && p[i] <= 'Z')
            return 0;
        size_t n = 1;
        if (p[i] >= 0x80 && fold_of(p + i, len - i, &n))
            return 0;
        i += n;
    }
    return 1;
}

long cf_member_set_add(struct cf_member_set *s, const char *name, size_t len, size_t value)
{
    struct strbuf norm = STRBUF_INIT, key = STRBUF_INIT;
    if (cf_member_name_is_normal(name, len)) {
        cf_member_name_fold(name, len, &key);
    } else {
        cf_member_name_normalize(name, len, &norm);
        cf_member_name_fold(cf_sb_str(&norm), norm.len, &key);
        cf_sb_release(&norm);
    }
    size_t klen = key.len, existing = 0;
    cf_strvec_push_nodup(&s->keys, cf_sb_detach(&key));
    const char *k = s->keys.v[s->keys.n - 1];
    if (cf_name_index_add(&s->ix, k, klen, value, &existing))
        return -1;
    return (long)existing;
}

long cf_member_set_first(struct cf_member_set *s, const char *key, size_t len)
{
    size_t v;
    return s->ix.n && cf_name_index_find(&s->ix, key, len, &v) ? (long)v : -1;
}

void cf_member_set_release(struct cf_member_set *s)
{
    cf_name_index_release(&s->ix);
    cf_strvec_clear(&s->keys);
}

/* How two names with one fold key are one file (the first takes where). */
static const char *const alias_words[] = {
    "both install to ",
    "differ only in case: one file where file names ignore case (macOS, Windows), where one overwrites the "
    "other",
    "are one name once Unicode-normalised (NFC/NFD) and lower-cased: one file on macOS and Windows file systems, "
    "where one overwrites the other",
};

/* 1 when a and b (of one length) differ only in the case of ASCII letters. */
static int ascii_case_only(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        unsigned char lx = x >= 'A' && x <= 'Z' ? x + 32 : x, ly = y >= 'A' && y <= 'Z' ? y + 32 : y;
        if (lx != ly)
            return 0;
    }
    return 1;
}

/* " (bytes c3 a9 here, 65 cc 81 there)": the part between the common prefix
 * and the common suffix of a and b, in hex. */
static void differing_bytes(struct strbuf *out, const char *a, size_t al, const char *b, size_t bl)
{
    size_t pre = 0, suf = 0;
    while (pre < al && pre < bl && a[pre] == b[pre])
        pre++;
    while (suf < al - pre && suf < bl - pre && a[al - 1 - suf] == b[bl - 1 - suf])
        suf++;
    const char *part[2] = { a + pre, b + pre };
    size_t n[2] = { al - pre - suf, bl - pre - suf };
    cf_sb_adds(out, " (bytes");
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < n[k] && i < 16; i++)
            cf_sb_addf(out, " %02x", (unsigned char)part[k][i]);
        cf_sb_adds(out, k ? " in the second)" : " in the first,");
    }
}

void cf_member_alias_describe(struct strbuf *out, const char *a_shown, const char *a, const char *b_shown,
                              const char *b, const char *where)
{
    struct strbuf na = STRBUF_INIT, nb = STRBUF_INIT;
    cf_member_name_normalize(a, strlen(a), &na);
    cf_member_name_normalize(b, strlen(b), &nb);
    size_t kind = 2;
    if (na.len == nb.len && !memcmp(cf_sb_str(&na), cf_sb_str(&nb), na.len))
        kind = 0;
    else if (na.len == nb.len && ascii_case_only(cf_sb_str(&na), cf_sb_str(&nb), na.len))
        kind = 1;
    cf_sb_addf(out, "'%s' and '%s' %s", a_shown, b_shown, alias_words[kind]);
    if (kind == 0)
        cf_sb_addf(out, "%s: pip writes one over the other", where);
    if (kind == 2) /* the two look alike on a screen: the bytes that differ */
        differing_bytes(out, cf_sb_str(&na), na.len, cf_sb_str(&nb), nb.len);
    cf_sb_release(&na);
    cf_sb_release(&nb);
}
