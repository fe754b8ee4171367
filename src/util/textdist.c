/* Edit distance for "did you mean": optimal string alignment over a band of
 * width cap around the diagonal, three rolling rows. */
#include "cclforge/textdist.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

size_t cf_edit_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t over = cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return over;
    size_t *prev2 = cf_xcalloc(lb + 1, sizeof *prev2);
    size_t *prev = cf_xcalloc(lb + 1, sizeof *prev);
    size_t *cur = cf_xcalloc(lb + 1, sizeof *cur);
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        size_t row_min = cur[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t d = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d > over ? over : d;
            if (cur[j] < row_min)
                row_min = cur[j];
        }
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
        if (row_min > cap) { /* every path is already too long */
            free(prev2);
            free(prev);
            free(cur);
            return over;
        }
    }
    size_t d = prev[lb] > over ? over : prev[lb];
    free(prev2);
    free(prev);
    free(cur);
    return d;
}

const char *cf_closest_name(const char *name, const char *const *candidates, size_t n, size_t max_distance)
{
    const char *best = NULL;
    size_t best_d = max_distance + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = cf_edit_distance(name, candidates[i], best_d - 1 < max_distance ? best_d - 1 : max_distance);
        if (d < best_d && d <= max_distance) {
            best = candidates[i];
            best_d = d;
            if (d == 0)
                break;
        }
    }
    return best;
}
