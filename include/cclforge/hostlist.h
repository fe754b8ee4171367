/* Slurm hostlists: host names compressed exactly as `scontrol show hostlist`
 * writes them ("node[03,07-08]"), ready for --exclude / --nodelist. */
#ifndef CCLFORGE_HOSTLIST_H
#define CCLFORGE_HOSTLIST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The hostlist of names[0..n) in their order, duplicates kept, empty names
 * skipped: a run of names with the same prefix whose trailing numbers count up
 * by one becomes a range, ranges of one prefix that follow each other share a
 * bracket, and a number's zero padding is kept as Slurm keeps it ("n1,n01" is
 * "n[1,01]"). Names are taken literally (no bracket in them is expanded).
 * Returns a new string ("" for none). */
char *cf_hostlist_compress(const char *const *names, size_t n);

/* The hostlist of the distinct names among names[0..n) in natural order (NULL
 * and empty names skipped): the hosts that share something, as a person reads them. */
char *cf_hostlist_of_set(const char *const *names, size_t n);

/* strcmp with runs of digits compared as numbers ("n2" < "n10"; equal numbers
 * with more leading zeros after fewer), for qsort over char * / const char *. */
int cf_hostname_natural_cmp(const char *a, const char *b);
int cf_hostname_natural_ptr_cmp(const void *a, const void *b);

#ifdef __cplusplus
}
#endif
#endif
