/* Host names written as a Slurm hostlist, as `scontrol show hostlist` compresses
 * them: "node01,node02,node03,node07,gpu-a" -> "gpu-a,node[01-03,07]". */
#ifndef CCLFORGE_HOSTLIST_H
#define CCLFORGE_HOSTLIST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Names that share a prefix and end in numbers of one width become prefix[ranges];
 * the others stay as they are. Duplicates appear once; prefixes in sorted order.
 * Returns a malloc'ed string ("" for none). */
char *cf_hostlist_compress(const char *const *names, size_t n);

#ifdef __cplusplus
}
#endif
#endif
