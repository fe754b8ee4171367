/* The host x host picture of a smoke run, built from its document's typed model
 * (cclforge/smoke_doc.h: a live run's or a saved one's): per host pair and test size
 * the busbw, its spread over the iterations and a class (ok, slow, failed,
 * untested); the hosts in an order where the bad ones come first, so that their
 * rows and columns stand out; the bad hosts (the document's "bad_hosts", which
 * the run's search decided) as a Slurm hostlist. The HTML report
 * and the terminal matrix both draw this one model. */
#ifndef CCLFORGE_SMOKE_MATRIX_H
#define CCLFORGE_SMOKE_MATRIX_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/path_capacity.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ordered from good to bad: the worst class of a set is its maximum */
enum cf_pair_class { CF_PAIR_UNTESTED, CF_PAIR_OK, CF_PAIR_SLOW, CF_PAIR_FAILED, CF_PAIR_CLASS_COUNT };
/* "untested", "ok", "slow", "failed" */
const char *cf_pair_class_name(enum cf_pair_class c);

/* a spread (relative, of the per-iteration busbw) over this is marked as wide */
#define CF_PAIR_WIDE_SPREAD 0.2

struct cf_pair_cell {
    float busbw;        /* GB/s, mean of the pair's tests of this size; NaN: none */
    float spread;       /* relative spread over its iterations; < 0: not reported */
    unsigned char cls;  /* enum cf_pair_class */
};

struct cf_pair_size {
    char *op;                   /* "all_reduce" */
    double bytes;
    struct cf_pair_cell *cell;  /* nhosts x nhosts by display index, symmetric */
    double median;              /* median busbw over the tested pairs that did not fail (0: none) */
};

struct cf_pair_matrix {
    size_t nhosts;
    char **host;                /* display order: bad hosts first, then in natural order */
    unsigned char *host_bad;    /* by display index */
    int pairwise;               /* every group was a pair of hosts: the matrix means something */
    size_t nsizes;
    struct cf_pair_size *size;  /* by op (as they first ran), then bytes */
    size_t shown;               /* the size drawn first: the largest */
    int conclusive;             /* the document says the numbers can tell (absent: yes) */
    char *inconclusive_why;     /* when not conclusive (NULL: no reason given) */
    int bad_hosts_known;        /* the document has "bad_hosts" (the run's search named them); 0: an
                                 * older document, which names no host */
    char **bad;                 /* bad hosts ("bad_hosts"), natural order (none when inconclusive) */
    size_t nbad;
    char *exclude;              /* the bad hosts as a Slurm hostlist ("" for none) */
    size_t npairs_tested;
    struct cf_rank_link **links; /* by display index: the links of the host's ranks ("ranks[].links") */
    size_t *nlinks;
    float *capacity;            /* nhosts x nhosts by display index: the path's capacity, GB/s (0 unknown);
                                 * NULL when no rank recorded a link */
    size_t ngroups;             /* the document's "groups", in its order */
    float *group_capacity;      /* by that order: the capacity of the group's path, GB/s (0 unknown): within
                                 * one host its GPUs' slowest link, across hosts the smallest capacity
                                 * between two of them; NULL when no rank recorded a link */
    char *group_example;        /* what the first group with a capacity rests on, in words; NULL none */
    size_t group_example_ix;
};

/* A share (busbw over its reference, 0.42 for 42 %) as the report and the terminal
 * write it: whole percents, two figures under 1 % (a shaped link's "0.073 %"). */
void cf_pair_share_text(double share, char *buf, size_t cap);

/* The capacity of the path between display hosts a and b, GB/s (0 unknown), and
 * what it rests on (cf_path_capacity's words) when words is not NULL. */
double cf_pair_matrix_capacity(const struct cf_pair_matrix *m, size_t a, size_t b, struct strbuf *words);

/* Builds the matrix of d. -1 with err when it is more than a report draws (or
 * "bad_hosts" names a host no rank ran on, which the reader refuses first); a
 * document without pairs gives a model with pairwise = 0 (hosts and bad hosts
 * still set). */
int cf_pair_matrix_build(const struct cf_smoke_doc *d, struct cf_pair_matrix *m, cf_error *err);
void cf_pair_matrix_release(struct cf_pair_matrix *m);

/* A pair, by display index (a < b). */
struct cf_pair_ref {
    size_t a, b;
};
/* Up to max pairs of size s, worst first (class, then lowest busbw); returns how many. */
size_t cf_pair_matrix_worst(const struct cf_pair_matrix *m, size_t s, struct cf_pair_ref *out, size_t max);

#ifdef __cplusplus
}
#endif
#endif
