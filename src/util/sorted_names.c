/* Names sorted for look-up (cclforge/sorted_names.h). */
#include <stdlib.h>
#include <string.h>

#include "cclforge/sorted_names.h"
#include "cclforge/strbuf.h"

/* qsort takes no context for cmp and is not stable: a merge sort keeps equal
 * names in the order of their positions */
static void merge_sort(struct cf_sorted_name *v, struct cf_sorted_name *tmp, size_t n,
                       int (*cmp)(const char *, const char *))
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(v, tmp, h, cmp);
    merge_sort(v + h, tmp, n - h, cmp);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp(v[j].name, v[i].name) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

void cf_sorted_names_build(struct cf_sorted_names *x, const char *const *names, size_t n,
                         int (*cmp)(const char *, const char *))
{
    x->v = cf_xcalloc(n + 1, sizeof *x->v);
    x->n = 0;
    for (size_t i = 0; i < n; i++)
        if (names[i])
            x->v[x->n++] = (struct cf_sorted_name){ names[i], i };
    struct cf_sorted_name *tmp = cf_xcalloc(x->n + 1, sizeof *tmp);
    merge_sort(x->v, tmp, x->n, cmp ? cmp : strcmp);
    free(tmp);
}

long cf_sorted_names_find(const struct cf_sorted_names *x, const char *s, size_t len)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) { /* the first entry not below s[0..len) */
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(x->v[mid].name, s, len);
        if (!c && x->v[mid].name[len])
            c = 1; /* the name is longer: after s */
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < x->n && !strncmp(x->v[lo].name, s, len) && !x->v[lo].name[len])
        return (long)x->v[lo].ix;
    return -1;
}

void cf_sorted_names_release(struct cf_sorted_names *x)
{
    free(x->v);
    x->v = NULL;
    x->n = 0;
}
