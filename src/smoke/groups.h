/* The bad-node search of --pattern (groups.c): which hosts test together in each
 * round, and what the results say. Pure logic over host indices, so every rank
 * computes the same plan from the same agreed numbers. */
#ifndef CCLFORGE_SMOKE_GROUPS_H
#define CCLFORGE_SMOKE_GROUPS_H

#include <stddef.h>

#include "cclforge/smoke.h"
#include "smoke/stats.h"

/* One round: groups that run at the same time. A rank takes part in group
 * host_group[its host], or, for the inter-host rings, in group k when it is the k-th
 * rank of its host (by_local_index). */
struct smoke_round {
    int ngroups;
    int nhosts;
    int *host_group;   /* nhosts entries: the group of each host, -1 when it sits out */
    int by_local_index;
};
void cf_smoke_round_release(struct smoke_round *r);
/* The group rank `rank` (on host `host`, the `local_index`-th rank there) is in, or -1. */
int cf_smoke_round_color(const struct smoke_round *r, int host, int local_index);

struct smoke_search;
/* per_host: ranks on the host with the fewest (inter rings); min_busbw 0: judge by ratio */
struct smoke_search *cf_smoke_search_new(enum cf_smoke_pattern pattern, int nhosts, int per_host, double min_busbw);
void cf_smoke_search_free(struct smoke_search *s);
/* The next round (release it after cf_smoke_search_result), or 0 when the search is over. */
int cf_smoke_search_next(struct smoke_search *s, struct smoke_round *round);
/* The round's results, group by group (agreed over the world). */
void cf_smoke_search_result(struct smoke_search *s, const struct smoke_round *round,
                            const struct smoke_group_result *res);
/* Whether the i-th group that ran was judged bad against the best of the search (or
 * --min-busbw), and whether its numbers could tell at all. */
int cf_smoke_search_bad(const struct smoke_search *s, size_t i);
int cf_smoke_search_conclusive(const struct smoke_search *s, size_t i);
/* Why the search could not decide (groups its numbers cannot judge, and whether for
 * too few samples or too wide a band), or NULL when it could. */
char *cf_smoke_search_inconclusive(const struct smoke_search *s, char *const *host_names);
/* The hosts the search names bad: is_bad[h] (nhosts flags) set, and how many. The
 * one rule: pairwise, the hosts whose every pair was bad (3 hosts or more, 2 pairs
 * or more); bisect, its culprit; others, a bad group of one host, or the hosts in
 * every bad group and no good one. A rule that would name every host names nobody,
 * and so do numbers that cannot tell (inconclusive). */
int cf_smoke_search_bad_hosts(const struct smoke_search *s, unsigned char *is_bad);
/* One line naming the bad host(s) of cf_smoke_search_bad_hosts, saying all is well,
 * listing the bad groups, or "inconclusive: <why>" naming no host; *bad: the search
 * found something wrong or could not decide (either fails the run). */
char *cf_smoke_search_verdict(const struct smoke_search *s, char *const *host_names, int *bad);
/* "h0+h2", "h0+h1+h2 (local rank 1 of each)" */
void cf_smoke_group_label(const struct smoke_round *r, int group, char *const *host_names, char *out, size_t cap);

#endif
