/* Slurm hostlist compression (cclforge/hostlist.h): the inverse of
 * cf_slurm_hostlist_expand for the names a launcher reports. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/hostlist.h"
#include "cclforge/strbuf.h"

struct name {
    const char *s;
    size_t prefix;       /* bytes before the trailing digits */
    size_t width;        /* trailing digits; 0 none */
    size_t pad;          /* width when zero-padded ("07"), else 0: only equal pads share brackets */
    unsigned long long num;
};

enum { MAX_DIGITS = 18 }; /* longer digit runs are kept as plain names */

static int by_prefix_width_num(const void *a, const void *b)
{
    const struct name *x = a, *y = b;
    size_t n = x->prefix < y->prefix ? x->prefix : y->prefix;
    int c = memcmp(x->s, y->s, n);
    if (c)
        return c;
    if (x->prefix != y->prefix)
        return x->prefix < y->prefix ? -1 : 1;
    if ((x->width > 0) != (y->width > 0))
        return x->width < y->width ? -1 : 1;
    if (x->pad != y->pad)
        return x->pad < y->pad ? -1 : 1;
    if (x->num != y->num)
        return x->num < y->num ? -1 : 1;
    return strcmp(x->s, y->s);
}

static int same_group(const struct name *a, const struct name *b)
{
    return a->width && b->width && a->prefix == b->prefix && a->pad == b->pad && !memcmp(a->s, b->s, a->prefix);
}

static void add_num(struct strbuf *sb, const struct name *x)
{
    cf_sb_add(sb, x->s + x->prefix, x->width);
}

char *cf_hostlist_compress(const char *const *names, size_t n)
{
    struct name *v = cf_xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        const char *s = names[i] ? names[i] : "";
        size_t len = strlen(s), d = len;
        while (d > 0 && s[d - 1] >= '0' && s[d - 1] <= '9')
            d--;
        v[i].s = s;
        v[i].prefix = len;
        /* a name with brackets or commas would read as a list: kept whole */
        if (len - d && len - d <= MAX_DIGITS && !strpbrk(s, "[],")) {
            v[i].prefix = d;
            v[i].width = len - d;
            v[i].num = strtoull(s + d, NULL, 10);
            v[i].pad = s[d] == '0' && len - d > 1 ? len - d : 0;
        }
    }
    qsort(v, n, sizeof *v, by_prefix_width_num);
    /* node01..node09 are padded to two digits, node10 is natural but as wide: one range */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].width && v[i].width && v[j].prefix == v[i].prefix && !memcmp(v[i].s, v[j].s, v[i].prefix))
            j++;
        int padded[MAX_DIGITS + 1] = { 0 };
        for (size_t k = i; k < j; k++)
            padded[v[k].pad] = 1;
        for (size_t k = i; k < j; k++)
            if (!v[k].pad && v[k].width && padded[v[k].width])
                v[k].pad = v[k].width;
        i = j;
    }
    qsort(v, n, sizeof *v, by_prefix_width_num);
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n;) {
        if (i && !strcmp(v[i].s, v[i - 1].s)) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && same_group(&v[i], &v[j]))
            j++;
        if (sb.len)
            cf_sb_addc(&sb, ',');
        if (j - i == 1 || !v[i].width) {
            cf_sb_adds(&sb, v[i].s);
            i++;
            continue;
        }
        cf_sb_add(&sb, v[i].s, v[i].prefix);
        cf_sb_addc(&sb, '[');
        for (size_t k = i; k < j;) {
            size_t e = k;
            while (e + 1 < j && (v[e + 1].num == v[e].num || v[e + 1].num == v[e].num + 1))
                e++;
            if (k > i)
                cf_sb_addc(&sb, ',');
            add_num(&sb, &v[k]);
            if (v[e].num != v[k].num) {
                cf_sb_addc(&sb, '-');
                add_num(&sb, &v[e]);
            }
            k = e + 1;
        }
        cf_sb_addc(&sb, ']');
        i = j;
    }
    free(v);
    return cf_sb_detach(&sb);
}
