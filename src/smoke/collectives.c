/* The collectives: names, nccl-tests' bus-bandwidth factors and element counts. */
#include <string.h>

#include "cclforge/smoke.h"

/* busbw = algbw * factor, chosen by nccl-tests so that busbw is comparable to the
 * hardware's link bandwidth whatever the rank count (see its PERFORMANCE.md). */
static double factor_all_reduce(int n)
{
    return n > 0 ? 2.0 * (n - 1) / n : 0.0;
}

static double factor_gather_scatter(int n)
{
    return n > 0 ? (double)(n - 1) / n : 0.0;
}

static double factor_one(int n)
{
    (void)n;
    return 1.0;
}

static const struct cf_smoke_op_info op_table[CF_OP_COUNT] = {
    { CF_OP_ALL_REDUCE, "all_reduce", "all_reduce_perf", factor_all_reduce, 1 },
    { CF_OP_BROADCAST, "broadcast", "broadcast_perf", factor_one, 1 },
    { CF_OP_ALL_GATHER, "all_gather", "all_gather_perf", factor_gather_scatter, 1 },
    { CF_OP_REDUCE_SCATTER, "reduce_scatter", "reduce_scatter_perf", factor_gather_scatter, 1 },
    { CF_OP_SENDRECV, "sendrecv", "sendrecv_perf", factor_one, 0 },
};

const struct cf_smoke_op_info *cf_smoke_op_info(enum cf_smoke_op op)
{
    return (unsigned)op < CF_OP_COUNT ? &op_table[op] : NULL;
}

int cf_smoke_op_parse(const char *name, enum cf_smoke_op *out)
{
    /* also accept nccl-tests' binary stems and the camel-case NCCL names */
    static const struct { const char *alias; enum cf_smoke_op op; } aliases[] = {
        { "allreduce", CF_OP_ALL_REDUCE },     { "AllReduce", CF_OP_ALL_REDUCE },
        { "bcast", CF_OP_BROADCAST },          { "Broadcast", CF_OP_BROADCAST },
        { "allgather", CF_OP_ALL_GATHER },     { "AllGather", CF_OP_ALL_GATHER },
        { "reducescatter", CF_OP_REDUCE_SCATTER }, { "ReduceScatter", CF_OP_REDUCE_SCATTER },
        { "send_recv", CF_OP_SENDRECV },       { "SendRecv", CF_OP_SENDRECV },
    };
    for (int i = 0; i < CF_OP_COUNT; i++)
        if (!strcmp(name, op_table[i].name)) {
            *out = op_table[i].op;
            return 0;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias)) {
            *out = aliases[i].op;
            return 0;
        }
    return -1;
}

size_t cf_smoke_count_for(enum cf_smoke_op op, size_t bytes, size_t elem_size, int nranks)
{
    if (!elem_size || nranks < 1)
        return 0;
    size_t count = bytes / elem_size;
    if (op == CF_OP_ALL_GATHER || op == CF_OP_REDUCE_SCATTER)
        count -= count % (size_t)nranks;
    return count;
}
