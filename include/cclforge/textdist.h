/* How far apart two names are: for "did you mean" suggestions (NCCL_SOCKET_IFNAM ->
 * NCCL_SOCKET_IFNAME). */
#ifndef CCLFORGE_TEXTDIST_H
#define CCLFORGE_TEXTDIST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions),
 * case-sensitive; stops counting at cap + 1 (so long strings cost O(len * cap)). */
size_t cf_edit_distance(const char *a, const char *b, size_t cap);

/* The candidate closest to name within max_distance, NULL when none is (ties: the
 * first in candidates' order). */
const char *cf_closest_name(const char *name, const char *const *candidates, size_t n, size_t max_distance);

#ifdef __cplusplus
}
#endif
#endif
