/* libFuzzer target for the wheel member-name normaliser (src/pkg/member_name.c),
 * which sees every name of every archive `wheel verify` and `wheel graft`
 * read. Size-driven: the input is a list of names, one per line, so a larger
 * input is more and longer names in one member set (a quadratic pass would
 * hit the per-input timeout). Each name is read through its length from a
 * copy that ends at an unmapped page. Properties: the normal form of a safe
 * name is canonical (no empty or "." component, no '/' at either end) and
 * normalising again changes nothing; the fold key is stable under folding
 * again and has no ASCII capital; the control-character finder agrees with a
 * plain scan; every pair the set reports has equal fold keys of its normal
 * forms, and the set reports exactly as many as names minus distinct keys. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_guard.h"
#include "pkg/member_name.h"

static int canonical(const char *p, size_t n)
{
    if (!n)
        return 1;
    if (p[0] == '/' || p[n - 1] == '/')
        return 0;
    for (size_t i = 0; i < n;) {
        const char *s = memchr(p + i, '/', n - i);
        size_t end = s ? (size_t)(s - p) : n;
        if (end == i || (end - i == 1 && p[i] == '.'))
            return 0;
        i = end + 1;
    }
    return 1;
}

static void key_of(const char *name, size_t len, struct strbuf *key)
{
    struct strbuf norm = STRBUF_INIT;
    cf_member_name_normalize(name, len, &norm);
    cf_member_name_fold(cf_sb_str(&norm), norm.len, key);
    cf_sb_release(&norm);
}

static long plain_control(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f)
            return (long)i;
        if (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] < 0xa0)
            return (long)i;
    }
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data, size, &g) < 0)
        return 0;
    const char *text = (const char *)g.data;
    struct cf_member_set set = CF_MEMBER_SET_INIT;
    struct cf_name_index distinct = CF_NAME_INDEX_INIT;
    struct strvec keys = STRVEC_INIT, names = STRVEC_INIT;
    size_t n_names = 0, n_aliases = 0;
    for (size_t pos = 0; pos <= size;) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t len = (nl ? (size_t)(nl - text) : size) - pos;
        const char *name = text + pos;
        if (cf_member_name_control(name, len) != plain_control((const unsigned char *)name, len))
            abort();
        if (!cf_member_name_problem(name, len) && !memchr(name, '\0', len)) {
            struct strbuf norm = STRBUF_INIT, again = STRBUF_INIT, key = STRBUF_INIT, key2 = STRBUF_INIT;
            cf_member_name_normalize(name, len, &norm);
            cf_member_name_normalize(cf_sb_str(&norm), norm.len, &again);
            if (!canonical(cf_sb_str(&norm), norm.len) || !norm.len || norm.len != again.len ||
                memcmp(cf_sb_str(&norm), cf_sb_str(&again), norm.len))
                abort();
            cf_member_name_fold(cf_sb_str(&norm), norm.len, &key);
            cf_member_name_fold(cf_sb_str(&key), key.len, &key2);
            if (key.len != key2.len || memcmp(cf_sb_str(&key), cf_sb_str(&key2), key.len))
                abort();
            for (size_t i = 0; i < key.len; i++)
                if (key.buf[i] >= 'A' && key.buf[i] <= 'Z')
                    abort();
            cf_strvec_push_nodup(&names, cf_strndup(name, len));
            long other = cf_member_set_add(&set, name, len, n_names++);
            cf_strvec_push_nodup(&keys, cf_sb_detach(&key));
            const char *k = keys.v[keys.n - 1];
            cf_name_index_add(&distinct, k, strlen(k), 0, NULL);
            if (other >= 0) {
                n_aliases++;
                if (strcmp(keys.v[other], k))
                    abort(); /* reported, yet not one file */
                struct strbuf why = STRBUF_INIT;
                const char *a = names.v[other], *b = names.v[names.n - 1];
                cf_member_alias_describe(&why, a, a, b, b, "x");
                if (!why.len)
                    abort();
                cf_sb_release(&why);
            }
            cf_sb_release(&norm);
            cf_sb_release(&again);
            cf_sb_release(&key2);
        }
        if (!nl)
            break;
        pos += len + 1;
    }
    if (n_aliases != n_names - distinct.n)
        abort(); /* a twin missed, or one counted twice */
    cf_member_set_release(&set);
    cf_name_index_release(&distinct);
    cf_strvec_clear(&keys);
    cf_strvec_clear(&names);
    fuzz_guard_release(&g);
    return 0;
}
