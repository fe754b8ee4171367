/* The collectives: names, nccl-tests' bus-bandwidth factors, and how each one's
 * buffers relate to the per-rank share (nccl-tests' GetCollByteCount). */
#include <string.h>

#include "cclforge/smoke.h"

/* busbw = algbw * factor, chosen by nccl-tests so that busbw is comparable to the
 * hardware's link bandwidth whatever the rank count (its doc/PERFORMANCE.md). */
double cf_smoke_busbw_factor(const struct cf_smoke_op_info *info, int n)
{
    switch (info->busbw) {
    case CF_BUSBW_TWICE_SHARE: return n > 0 ? 2.0 * (n - 1) / n : 0.0;
    case CF_BUSBW_SHARE: return n > 0 ? (double)(n - 1) / n : 0.0;
    case CF_BUSBW_ONE: break;
    }
    return 1.0;
}

/* nccl-tests 2.19.6: src/<op>.cu, <Op>GetBw and <Op>GetCollByteCount; sendrecv and
 * alltoall run their in-place form unchecked (reportErrors = 0 there). */
static const struct cf_smoke_op_info op_table[CF_OP_COUNT] = {
    { CF_OP_ALL_REDUCE, "all_reduce", "all_reduce_perf", CF_BUSBW_TWICE_SHARE, CF_SHARE_NONE, 1, 0, 1 },
    { CF_OP_BROADCAST, "broadcast", "broadcast_perf", CF_BUSBW_ONE, CF_SHARE_NONE, 0, 1, 1 },
    { CF_OP_ALL_GATHER, "all_gather", "all_gather_perf", CF_BUSBW_SHARE, CF_SHARE_SEND, 0, 0, 1 },
    { CF_OP_REDUCE_SCATTER, "reduce_scatter", "reduce_scatter_perf", CF_BUSBW_SHARE, CF_SHARE_RECV, 1, 0,
      1 },
    { CF_OP_SENDRECV, "sendrecv", "sendrecv_perf", CF_BUSBW_ONE, CF_SHARE_NONE, 0, 0, 0 },
    { CF_OP_REDUCE, "reduce", "reduce_perf", CF_BUSBW_ONE, CF_SHARE_NONE, 1, 1, 1 },
    { CF_OP_ALLTOALL, "alltoall", "alltoall_perf", CF_BUSBW_SHARE, CF_SHARE_BOTH, 0, 0, 0 },
    { CF_OP_GATHER, "gather", "gather_perf", CF_BUSBW_SHARE, CF_SHARE_SEND, 0, 1, 1 },
    { CF_OP_SCATTER, "scatter", "scatter_perf", CF_BUSBW_SHARE, CF_SHARE_RECV, 0, 1, 1 },
};

const struct cf_smoke_op_info *cf_smoke_op_info(enum cf_smoke_op op)
{
    return (unsigned)op < CF_OP_COUNT ? &op_table[op] : NULL;
}

int cf_smoke_op_parse(const char *name, enum cf_smoke_op *out)
{
    /* also accept nccl-tests' binary names and stems and the camel-case NCCL names */
    static const struct { const char *alias; enum cf_smoke_op op; } aliases[] = {
        { "allreduce", CF_OP_ALL_REDUCE },         { "AllReduce", CF_OP_ALL_REDUCE },
        { "bcast", CF_OP_BROADCAST },              { "Broadcast", CF_OP_BROADCAST },
        { "allgather", CF_OP_ALL_GATHER },         { "AllGather", CF_OP_ALL_GATHER },
        { "reducescatter", CF_OP_REDUCE_SCATTER }, { "ReduceScatter", CF_OP_REDUCE_SCATTER },
        { "send_recv", CF_OP_SENDRECV },           { "SendRecv", CF_OP_SENDRECV },
        { "Reduce", CF_OP_REDUCE },                { "all_to_all", CF_OP_ALLTOALL },
        { "AlltoAll", CF_OP_ALLTOALL },            { "Gather", CF_OP_GATHER },
        { "Scatter", CF_OP_SCATTER },
    };
    for (int i = 0; i < CF_OP_COUNT; i++)
        if (!strcmp(name, op_table[i].name) || !strcmp(name, op_table[i].nccl_tests)) {
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

/* ncclRedOp_t's order; nccl-tests' -o words ("mulsum", a ncclRedOpCreatePreMulSum op, is not offered) */
static const struct cf_smoke_redop_info redop_table[CF_RED_COUNT] = {
    { CF_RED_SUM, "sum" }, { CF_RED_PROD, "prod" }, { CF_RED_MAX, "max" }, { CF_RED_MIN, "min" },
    { CF_RED_AVG, "avg" },
};

const struct cf_smoke_redop_info *cf_smoke_redop_info(enum cf_smoke_redop r)
{
    return (unsigned)r < CF_RED_COUNT ? &redop_table[r] : NULL;
}

int cf_smoke_redop_parse(const char *name, enum cf_smoke_redop *out)
{
    for (int i = 0; i < CF_RED_COUNT; i++)
        if (!strcmp(name, redop_table[i].name)) {
            *out = redop_table[i].redop;
            return 0;
        }
    return -1;
}
