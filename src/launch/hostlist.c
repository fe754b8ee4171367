/* Slurm's hostlist compression (cclforge/hostlist.h), after Slurm's hostlist.c:
 * a name is a prefix and, when it ends in digits, a number of that many digits
 * (its width); a name joins the range before it when the prefix is the same, its
 * number is one past the range's end and the two widths are "equivalent" (one of
 * them pads nothing the other would). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/hostlist.h"
#include "cclforge/strbuf.h"

/* Slurm reads the number as an unsigned long; past 18 digits it would not fit ours */
#define MAX_DIGITS 18

struct range {
    const char *name;   /* the first name (its prefix is name[0..plen)) */
    size_t plen;
    int numbered;       /* ends in digits */
    unsigned long long lo, hi;
    int width;
};

static int digits_of(unsigned long long v)
{
    int n = 1;
    while (v /= 10)
        n++;
    return n;
}

/* leading zeros v has when written in width digits */
static int zero_padded(unsigned long long v, int width)
{
    int n = digits_of(v);
    return width > n ? width - n : 0;
}

/* Slurm's _width_equiv: whether widths *wn (of n) and *wm (of m) can share one
 * range, settling both on the one that works. */
static int width_equiv(unsigned long long n, int *wn, unsigned long long m, int *wm)
{
    if (*wn == *wm)
        return 1;
    int npad = zero_padded(n, *wn), nmpad = zero_padded(n, *wm);
    int mpad = zero_padded(m, *wm), mnpad = zero_padded(m, *wn);
    if (npad != nmpad && mpad != mnpad)
        return 0;
    if (npad != nmpad)
        *wm = *wn;
    else
        *wn = *wm;
    return 1;
}

static void parse_name(const char *s, struct range *r)
{
    size_t len = strlen(s), i = len;
    while (i > 0 && isdigit((unsigned char)s[i - 1]))
        i--;
    memset(r, 0, sizeof *r);
    r->name = s;
    r->plen = len;
    if (i == len || len - i > MAX_DIGITS)
        return;
    r->numbered = 1;
    r->plen = i;
    r->width = (int)(len - i);
    for (size_t k = i; k < len; k++)
        r->lo = r->lo * 10 + (unsigned long long)(s[k] - '0');
    r->hi = r->lo;
}

static int same_prefix(const struct range *a, const struct range *b)
{
    return a->numbered && b->numbered && a->plen == b->plen && !memcmp(a->name, b->name, a->plen);
}

static void add_range(struct strbuf *sb, const struct range *r)
{
    cf_sb_addf(sb, "%0*llu", r->width, r->lo);
    if (r->hi != r->lo)
        cf_sb_addf(sb, "-%0*llu", r->width, r->hi);
}

char *cf_hostlist_compress(const char *const *names, size_t n)
{
    struct range *rs = cf_xcalloc(n + 1, sizeof *rs);
    size_t nr = 0;
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !names[i][0])
            continue;
        struct range r;
        parse_name(names[i], &r);
        struct range *tail = nr ? &rs[nr - 1] : NULL;
        if (tail && same_prefix(tail, &r) && tail->hi + 1 == r.lo && r.lo > 0) {
            int wt = tail->width, wr = r.width;
            /* Slurm compares the widths at the range's first number */
            if (width_equiv(tail->lo, &wt, r.lo, &wr)) {
                tail->width = wt;
                tail->hi = r.hi;
                continue;
            }
        }
        rs[nr++] = r;
    }
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < nr;) {
        if (sb.len)
            cf_sb_addc(&sb, ',');
        const struct range *r = &rs[i];
        if (!r->numbered) {
            cf_sb_adds(&sb, r->name);
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < nr && same_prefix(r, &rs[j]))
            j++;
        cf_sb_add(&sb, r->name, r->plen);
        int bracket = j - i > 1 || r->lo != r->hi;
        if (bracket)
            cf_sb_addc(&sb, '[');
        for (size_t k = i; k < j; k++) {
            if (k > i)
                cf_sb_addc(&sb, ',');
            add_range(&sb, &rs[k]);
        }
        if (bracket)
            cf_sb_addc(&sb, ']');
        i = j;
    }
    free(rs);
    return cf_sb_detach(&sb);
}

int cf_hostname_natural_cmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    while (*p && *q) {
        if (isdigit(*p) && isdigit(*q)) {
            const unsigned char *p0 = p, *q0 = q;
            while (*p == '0')
                p++;
            while (*q == '0')
                q++;
            const unsigned char *ps = p, *qs = q;
            while (isdigit(*p))
                p++;
            while (isdigit(*q))
                q++;
            size_t lp = (size_t)(p - ps), lq = (size_t)(q - qs);
            if (lp != lq)
                return lp < lq ? -1 : 1;
            int c = memcmp(ps, qs, lp);
            if (c)
                return c < 0 ? -1 : 1;
            size_t zp = (size_t)(ps - p0), zq = (size_t)(qs - q0);
            if (zp != zq)
                return zp < zq ? -1 : 1;
            continue;
        }
        if (*p != *q)
            return *p < *q ? -1 : 1;
        p++;
        q++;
    }
    return *p ? 1 : *q ? -1 : 0;
}

int cf_hostname_natural_ptr_cmp(const void *a, const void *b)
{
    return cf_hostname_natural_cmp(*(const char *const *)a, *(const char *const *)b);
}

char *cf_hostlist_of_set(const char *const *names, size_t n)
{
    const char **sorted = cf_xcalloc(n + 1, sizeof *sorted);
    size_t m = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (names[i] && *names[i])
            sorted[m++] = names[i];
    qsort(sorted, m, sizeof *sorted, cf_hostname_natural_ptr_cmp);
    for (size_t i = 0; i < m; i++)
        if (!k || strcmp(sorted[k - 1], sorted[i]))
            sorted[k++] = sorted[i];
    char *hl = cf_hostlist_compress(sorted, k);
    free(sorted);
    return hl;
}
