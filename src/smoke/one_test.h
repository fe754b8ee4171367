/* One test (one_test.c): one collective at one size, type, reduction, root and
 * placement, on the current communicator: fill, warm up, barrier, time, check,
 * agree with the other ranks, report. */
#ifndef CCLFORGE_SMOKE_ONE_TEST_H
#define CCLFORGE_SMOKE_ONE_TEST_H

#include "smoke/smoke_internal.h"
#include "smoke/stats.h"

#define SMOKE_ERRLEN 1024

struct smoke_test_ctx {
    const struct cf_smoke_opts *o;
    struct cf_smoke_backend *b;
    struct smoke_sink *sink;
    int world_rank;
    int rank, nranks;       /* in the current group */
    const int *world_of;    /* group rank -> world rank (nranks entries) */
    int group;              /* the --pattern group (0: the world) */
    void *dsend, *drecv;    /* backend memory, cap bytes each */
    unsigned char *hsend, *hrecv;
    size_t cap;
    char errbuf[SMOKE_ERRLEN];
    struct smoke_tally tally; /* the tests of the current group */
};

/* nccl-tests' warm-up before the timed sizes of one collective, type, reduction and root. */
int cf_smoke_warmup(struct smoke_test_ctx *t, enum cf_smoke_op op, enum cf_smoke_dtype dt,
                    enum cf_smoke_redop redop, int root);

enum { SMOKE_TEST_RAN = 0, SMOKE_TEST_SKIPPED = 1 };
/* SMOKE_TEST_RAN, SMOKE_TEST_SKIPPED (nothing to run at this size), or -1 with errbuf. */
int cf_smoke_one_test(struct smoke_test_ctx *t, enum cf_smoke_op op, enum cf_smoke_dtype dt,
                      enum cf_smoke_redop redop, int root, size_t bytes, int in_place);

#endif
