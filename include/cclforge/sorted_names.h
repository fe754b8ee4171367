/* Names sorted for look-up, each with its position in the caller's array.
 * qsort and bsearch take no context, so the (name, position) pairs are what
 * is sorted; the reports and the smoke matrix look hosts and labels up this
 * way. */
#ifndef CCLFORGE_SORTED_NAMES_H
#define CCLFORGE_SORTED_NAMES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cf_sorted_name {
    const char *name; /* borrowed from the caller's array */
    size_t ix;        /* its position there */
};

struct cf_sorted_names {
    struct cf_sorted_name *v; /* sorted by name, equal names by position */
    size_t n;
};

/* An index of names[0..n), NULL entries left out, ordered by cmp (strcmp when
 * NULL; a natural host order such as cf_hostname_natural_cmp for display). */
void cf_sorted_names_build(struct cf_sorted_names *x, const char *const *names, size_t n,
                         int (*cmp)(const char *, const char *));

/* The position of the first name exactly s[0..len) (s need not end there), or
 * -1. Only for an index built with strcmp's order. */
long cf_sorted_names_find(const struct cf_sorted_names *x, const char *s, size_t len);

void cf_sorted_names_release(struct cf_sorted_names *x);

#ifdef __cplusplus
}
#endif
#endif
