/* smoke: data tables, fp16/bf16, exact patterns, sizes, records, and the real NCCL /
 * CUDA runtime loaders (launchers and the rendezvous: test_launch.c). */
#include "testsupport.h"

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/smoke.h"
#include "cclforge/smoke_half.h"
#include "cclforge/fs.h"
#include "smoke/groups.h"
#include "smoke/mpi_api.h"
#include "smoke/nccl_api.h"
#include "smoke/smoke_internal.h"
#include "smoke/stats.h"


static void test_fp16_roundtrip_every_pattern(void **state)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = cf_f16_to_f32((uint16_t)h);
        if (f != f)
            continue; /* NaN payloads need not survive */
        assert_int_equal(cf_f32_to_f16(f), h);
    }
    assert_int_equal(cf_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(cf_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(cf_f32_to_f16(65520.0f), 0x7c00);        /* rounds to infinity */
    assert_int_equal(cf_f32_to_f16(2049.0f), 0x6800);         /* ties to even: 2048 */
    assert_int_equal(cf_f32_to_f16(2051.0f), 0x6802);         /* ties to even: 2052 */
    assert_int_equal(cf_f32_to_f16(5.9604645e-8f), 0x0001);   /* smallest subnormal */
    assert_int_equal(cf_f32_to_f16(-2.0f), 0xc000);
    assert_true(cf_f16_to_f32(0x7e00) != cf_f16_to_f32(0x7e00)); /* NaN */
}

static void test_bf16_roundtrip_and_rounding(void **state)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = cf_bf16_to_f32((uint16_t)h);
        if (f != f)
            continue;
        assert_int_equal(cf_f32_to_bf16(f), h);
    }
    assert_int_equal(cf_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(cf_f32_to_bf16(257.0f), 0x4380); /* 257 is not representable: ties to even 256 */
    assert_true(cf_bf16_to_f32(cf_f32_to_bf16(NAN)) != cf_bf16_to_f32(cf_f32_to_bf16(NAN)));
}

static const int rank_counts[] = { 1, 2, 3, 4, 8, 64 };

/* Every input, and every reduction over n ranks of them, is exact in the type; the
 * inputs have no period (a block misplaced by any shift shows). The old inputs
 * repeated every 1021 elements: this test fails for them. */
static void test_data_is_exact_and_never_repeats(void **state)
{
    unsigned char buf[16];
    enum { N = 4096, MAX_SHIFT = 2048 };
    double *v = cf_xmalloc(N * sizeof *v);
    for (int dt = 0; dt < CF_DT_COUNT; dt++) {
        const struct cf_smoke_dtype_info *info = cf_smoke_dtype_info((enum cf_smoke_dtype)dt);
        for (int red = 0; red <= CF_RED_COUNT; red++) {
            for (size_t k = 0; k < sizeof rank_counts / sizeof rank_counts[0]; k++) {
                struct cf_smoke_data d = { (enum cf_smoke_dtype)dt, (enum cf_smoke_redop)red, rank_counts[k],
                                           0x1234abcdull + (uint64_t)k };
                for (int r = 0; r < d.nranks; r += d.nranks > 8 ? 21 : 1)
                    for (size_t i = 0; i < 300; i++) {
                        double x = cf_smoke_input(&d, r, i);
                        assert_true(x >= 0 && x <= (double)info->exact_limit);
                        cf_smoke_store(d.dtype, buf, 0, x);
                        assert_true(cf_smoke_load(d.dtype, buf, 0) == x);
                    }
                for (size_t i = 0; red < CF_RED_COUNT && i < 300; i++) {
                    double y = cf_smoke_reduced(&d, i);
                    if (red == CF_RED_AVG && info->is_float) {
                        /* stored in the type, the average is within the tolerance */
                        cf_smoke_store(d.dtype, buf, 0, y);
                        double back = cf_smoke_load(d.dtype, buf, 0);
                        assert_true(fabs(back - y) <= cf_smoke_tolerance(&d, y));
                        continue;
                    }
                    /* a product m x 2^k may pass the integer range: it is still exact */
                    assert_true(y >= 0 && (red == CF_RED_PROD || y <= (double)info->exact_limit));
                    cf_smoke_store(d.dtype, buf, 0, y);
                    if (cf_smoke_load(d.dtype, buf, 0) != y)
                        fail_msg("%s %s over %d ranks: %.17g is not exact", info->name,
                                 red < CF_RED_COUNT ? cf_smoke_redop_info(red)->name : "none", d.nranks, y);
                }
                if (red == CF_RED_PROD || (red == CF_RED_AVG && info->is_float))
                    continue; /* mostly 1s and 0s by design */
                if ((red == CF_RED_SUM || red == CF_RED_AVG) && info->exact_limit / d.nranks < 2)
                    continue; /* int8 over 64 ranks: only 0 keeps every sum exact */
                for (size_t i = 0; i < N; i++)
                    v[i] = cf_smoke_input(&d, d.nranks - 1, i);
                for (int shift = 1; shift < MAX_SHIFT; shift++) {
                    int differs = 0;
                    for (size_t i = 0; i + (size_t)shift < N && !differs; i++)
                        differs = v[i] != v[i + (size_t)shift];
                    if (!differs)
                        fail_msg("%s over %d ranks repeats every %d elements", info->name, d.nranks, shift);
                }
            }
        }
    }
    free(v);
}

static void test_ops_and_factors_match_nccl_tests(void **state)
{
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_ALL_REDUCE), 4) - 1.5) < 1e-12);
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_ALL_REDUCE), 2) - 1.0) < 1e-12);
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_ALL_GATHER), 4) - 0.75) < 1e-12);
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_REDUCE_SCATTER), 8) - 0.875) < 1e-12);
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_ALLTOALL), 4) - 0.75) < 1e-12);
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_GATHER), 4) - 0.75) < 1e-12);
    assert_true(fabs(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_SCATTER), 2) - 0.5) < 1e-12);
    assert_true(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_BROADCAST), 8) == 1.0);
    assert_true(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_REDUCE), 8) == 1.0);
    assert_true(cf_smoke_busbw_factor(cf_smoke_op_info(CF_OP_SENDRECV), 8) == 1.0);
    assert_false(cf_smoke_op_info(CF_OP_SENDRECV)->checks_in_place);
    assert_false(cf_smoke_op_info(CF_OP_ALLTOALL)->checks_in_place);
    assert_true(cf_smoke_op_info(CF_OP_REDUCE)->rooted && cf_smoke_op_info(CF_OP_REDUCE)->reduces);
    enum cf_smoke_op op;
    static const struct { const char *name; enum cf_smoke_op op; } names[] = {
        { "allreduce", CF_OP_ALL_REDUCE }, { "reduce_scatter", CF_OP_REDUCE_SCATTER },
        { "alltoall_perf", CF_OP_ALLTOALL }, { "gather", CF_OP_GATHER }, { "scatter_perf", CF_OP_SCATTER },
        { "reduce", CF_OP_REDUCE },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_int_equal(cf_smoke_op_parse(names[i].name, &op), 0);
        assert_int_equal(op, names[i].op);
    }
    assert_int_equal(cf_smoke_op_parse("hypercube", &op), -1);
    enum cf_smoke_dtype dt;
    assert_int_equal(cf_smoke_dtype_parse("bf16", &dt), 0);
    assert_int_equal(dt, CF_DT_BFLOAT16);
    assert_int_equal((int)CF_DT_BFLOAT16, 9); /* ncclBfloat16 */
    assert_int_equal((int)CF_DT_FLOAT32, 7);  /* ncclFloat32 */
    assert_int_equal((int)CF_DT_UINT8, 1);    /* ncclUint8 */
    assert_int_equal(cf_smoke_dtype_parse("fp8", &dt), -1);
    enum cf_smoke_redop r;
    assert_int_equal(cf_smoke_redop_parse("avg", &r), 0);
    assert_int_equal((int)r, 4); /* ncclAvg */
    assert_int_equal(cf_smoke_redop_parse("mulsum", &r), -1);
}

static void test_sizes_counts_and_layouts(void **state)
{
    /* nccl-tests' GetCollByteCount: each rank's share rounds down to 16 bytes; the
     * size column is max(send, recv), the count column the share */
    static const struct {
        enum cf_smoke_op op;
        size_t bytes;
        enum cf_smoke_dtype dt;
        int n;
        size_t count, send, recv, size;
    } cases[] = {
        { CF_OP_ALL_GATHER, 1000, CF_DT_FLOAT32, 3, 80, 80, 240, 960 },
        { CF_OP_ALL_REDUCE, 1000, CF_DT_FLOAT32, 3, 250, 250, 250, 1000 },
        { CF_OP_REDUCE_SCATTER, 4, CF_DT_FLOAT32, 2, 0, 0, 0, 0 },
        { CF_OP_REDUCE_SCATTER, 1024, CF_DT_FLOAT32, 3, 84, 252, 84, 1008 },
        { CF_OP_ALL_GATHER, 100, CF_DT_INT8, 3, 32, 32, 96, 96 },
        { CF_OP_ALLTOALL, 1024, CF_DT_FLOAT64, 3, 42, 126, 126, 1008 },
        { CF_OP_GATHER, 4096, CF_DT_FLOAT16, 4, 512, 512, 2048, 4096 },
        { CF_OP_SCATTER, 4096, CF_DT_FLOAT16, 5, 408, 2040, 408, 4080 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cf_smoke_layout l;
        cf_smoke_layout_for(cases[i].op, cases[i].bytes, cases[i].dt, cases[i].n, 1, &l);
        if (l.count != cases[i].count || l.send_elems != cases[i].send || l.recv_elems != cases[i].recv ||
            l.bytes != cases[i].size)
            fail_msg("case %zu: count %zu send %zu recv %zu size %zu", i, l.count, l.send_elems, l.recv_elems,
                     l.bytes);
    }
    /* in place: rank 1's send share sits at its slot of the all_gather buffer */
    struct cf_smoke_layout l;
    cf_smoke_layout_for(CF_OP_ALL_GATHER, 1024, CF_DT_FLOAT32, 2, 1, &l);
    assert_int_equal(l.send_offset, 128);
    /* the sweep: -f wins over -i (nccl-tests' TimeTest), -f 1 steps by -i, and it ends at -e */
    struct cf_smoke_sweep sw = { 1024, 4096, 2, 1000 };
    assert_int_equal(cf_smoke_next_size(&sw, 1024), 2048);
    assert_int_equal(cf_smoke_next_size(&sw, 4096), 0);
    sw.step_factor = 1;
    assert_int_equal(cf_smoke_next_size(&sw, 1024), 2024);
    assert_int_equal(cf_smoke_next_size(&sw, 3100), 0);
    sw.step_factor = 4;
    assert_int_equal(cf_smoke_next_size(&sw, 0), 0); /* -b 0 does not spin */
}

static void test_fault_switch_parsing(void **state)
{
    struct cf_smoke_fault f;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_smoke_fault_parse("1:hang:all_gather", &f, &err), 0);
    assert_int_equal(f.action, CF_FAULT_HANG);
    assert_int_equal(f.rank, 1);
    assert_int_equal(f.op, CF_OP_ALL_GATHER);
    assert_int_equal(cf_smoke_fault_parse("0:slow:alltoall", &f, &err), 0);
    assert_int_equal(f.action, CF_FAULT_SLOW);
    assert_int_equal(f.op, CF_OP_ALLTOALL);
    static const char *bad[] = { "1:hang", "x:abort:all_reduce", "1:explode:all_reduce", "1:abort:hypercube" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cf_smoke_fault_parse(bad[i], &f, &err), -1);
        assert_int_equal(f.action, CF_FAULT_NONE);
        cf_error_clear(&err);
    }
}

static void test_records_roundtrip_with_escapes(void **state)
{
    struct cf_smoke_event ev = { .kind = CF_EV_RESULT, .rank = 3, .local_rank = 1 };
    ev.row.op = CF_OP_REDUCE_SCATTER;
    ev.row.dtype = CF_DT_BFLOAT16;
    ev.row.in_place = 1;
    ev.row.bytes = 65536;
    ev.row.count = 32768;
    ev.row.time_us = 12.5;
    ev.row.algbw = 5.2428800000000001;
    ev.row.wrong = 7;
    ev.row.redop = CF_RED_AVG;
    ev.row.root = -1;
    ev.row.group = 3;
    ev.row.nranks = 3;
    ev.row.slowest_rank = 5;
    ev.row.slowest_us = 30.25;
    ev.row.median_us = 12;
    double times[3] = { 12, 30.25, 1e-3 };
    int ranks[3] = { 0, 5, 9 };
    ev.row.rank_time_us = times;
    ev.row.rank_of = ranks;
    ev.own_wrong = 2;
    ev.leader = 1;
    ev.text = "index 4:\texpected 1\ngot 2 \\ done";
    struct strbuf line = STRBUF_INIT;
    cf_smoke_record_encode(&line, REC_RESULT, &ev, 0);
    assert_int_equal(line.buf[line.len - 1], '\n');
    assert_null(memchr(line.buf, '\n', line.len - 1)); /* one line, whatever the text */
    cf_sb_setlen(&line, line.len - 1);
    struct smoke_record rec = { 0 };
    assert_int_equal(cf_smoke_record_decode(cf_sb_str(&line), &rec), 1);
    assert_int_equal(rec.type, REC_RESULT);
    assert_int_equal(rec.ev.rank, 3);
    assert_int_equal(rec.ev.local_rank, 1);
    assert_int_equal(rec.ev.row.op, CF_OP_REDUCE_SCATTER);
    assert_int_equal(rec.ev.row.dtype, CF_DT_BFLOAT16);
    assert_int_equal(rec.ev.row.bytes, 65536);
    assert_true(rec.ev.row.algbw == ev.row.algbw);
    assert_int_equal(rec.ev.row.wrong, 7);
    assert_int_equal(rec.ev.own_wrong, 2);
    assert_int_equal(rec.ev.row.redop, CF_RED_AVG);
    assert_int_equal(rec.ev.row.root, -1);
    assert_int_equal(rec.ev.row.slowest_rank, 5);
    assert_true(rec.ev.leader);
    assert_int_equal(rec.ntimes, 3);
    assert_true(rec.ev.row.rank_time_us[1] == 30.25 && rec.ev.row.rank_time_us[2] == 1e-3);
    assert_int_equal(rec.ev.row.rank_of[2], 9);
    assert_string_equal(rec.ev.text, ev.text);
    assert_true(rec.ev.t > 0);
    /* a library's own output is not a record; a damaged record is refused */
    assert_int_equal(cf_smoke_record_decode("NCCL INFO Bootstrap", &rec), 0);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\trank=x", &rec), -1);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\tbytes=4", &rec), -1);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "Z\trank=0", &rec), -1);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\trank=0\top=99", &rec), -1);
    /* per-rank lists must match the row's rank count */
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\trank=0\tnranks=2\ttimes=1,2,3", &rec), -1);
    /* a transport and a group record carry their own fields */
    struct cf_smoke_event tev = { .kind = CF_EV_TRANSPORT, .rank = 1 };
    tev.conn.rank = 1;
    tev.conn.peer = 2;
    snprintf(tev.conn.kind, sizeof tev.conn.kind, "NET");
    snprintf(tev.conn.via, sizeof tev.conn.via, "NET/AWS Libfabric/0(0)/GDRDMA");
    tev.conn.channels = 4;
    cf_sb_reset(&line);
    cf_smoke_record_encode(&line, cf_smoke_record_type_for(CF_EV_TRANSPORT), &tev, 0);
    cf_sb_setlen(&line, line.len - 1);
    assert_int_equal(cf_smoke_record_decode(cf_sb_str(&line), &rec), 1);
    assert_int_equal(rec.ev.kind, CF_EV_TRANSPORT);
    assert_string_equal(rec.ev.conn.via, tev.conn.via);
    assert_int_equal(rec.ev.conn.channels, 4);
    /* a BEGIN keeps its description and whether it waits for peers */
    cf_sb_reset(&line);
    ev.text = NULL;
    ev.text = "ncclCommInitRank (4 ranks)";
    cf_smoke_record_encode(&line, REC_BEGIN, &ev, 1);
    cf_sb_setlen(&line, line.len - 1);
    assert_int_equal(cf_smoke_record_decode(cf_sb_str(&line), &rec), 1);
    assert_int_equal(rec.type, REC_BEGIN);
    assert_true(rec.waits);
    assert_string_equal(rec.ev.text, "ncclCommInitRank (4 ranks)");
    cf_smoke_record_release(&rec);
    cf_sb_release(&line);
}

static void test_real_nccl_loads_and_reports_version(void **state)
{
    struct ts_nccl nccl;
    if (ts_find_nccl(&nccl) != 0) {
        print_message("SKIP: no libnccl.so.2 with its nccl.h found (set CUDA_HOME)\n");
        skip();
    }
    struct cf_nccl_api api;
    cf_error err = CF_ERROR_INIT;
    if (cf_nccl_api_load(&api, nccl.lib, "libnccl.so.2", &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    char v[32];
    cf_nccl_version_string(api.version, v, sizeof v);
    assert_int_equal(api.version, nccl.code); /* ncclGetVersion says what its nccl.h says */
    assert_string_equal(v, nccl.version);
    assert_non_null(api.AllReduce);
    assert_non_null(api.GetLastError);
    /* the library's own words for an error code */
    char *why = cf_nccl_explain(&api, 1, NULL);
    assert_non_null(strstr(why, "ncclResult 1"));
    free(why);
    cf_nccl_api_unload(&api);
    cf_nccl_version_string(2708, v, sizeof v); /* before 2.9: X*1000 + Y*100 + Z */
    assert_string_equal(v, "2.7.8");
}

static void test_library_without_nccl_api_is_refused(void **state)
{
    struct cf_nccl_api api;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_nccl_api_load(&api, "libz.so.1", NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "does not provide the NCCL C API"));
    assert_non_null(strstr(cf_error_message(&err), "ncclGetVersion"));
    cf_error_clear(&err);
    assert_int_equal(cf_nccl_api_load(&api, "/nonexistent/libnccl.so.2", NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "cannot load the comm library /nonexistent/libnccl.so.2"));
    cf_error_clear(&err);
}

static void test_cuda_runtime_loads_by_dlopen(void **state)
{
    struct cf_gpu_runtime rt;
    cf_error err = CF_ERROR_INIT;
    const char *cuda = ts_cuda_root();
    char *libdir = cuda ? cf_path_join(cuda, "lib64") : NULL;
    int loaded = cf_gpu_runtime_load(&rt, "cuda", NULL, libdir, &err);
    free(libdir);
    if (loaded < 0) {
        print_message("no CUDA runtime here: %s\n", cf_error_message(&err));
        cf_error_clear(&err);
        skip();
    }
    assert_string_equal(rt.api, "cuda");
    int count = -1;
    int rc = rt.GetDeviceCount(&count);
    char *why = cf_gpu_explain(&rt, "GetDeviceCount", rc);
    print_message("cudaGetDeviceCount -> %d, count %d: %s\n", rc, count, why);
    assert_non_null(strstr(why, "cudaGetDeviceCount"));
    free(why);
    cf_gpu_runtime_unload(&rt);
    /* a runtime that is not one */
    assert_int_equal(cf_gpu_runtime_load(&rt, "hip", "libz.so.1", NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "hipGetDeviceCount"));
    cf_error_clear(&err);
}

/* ---- whole runs through the library ---- */

struct collected {
    int infos, results, fails, logs;
    char uid[8][32];
    char fail_text[1024];
};

static void collect(void *ctx, const struct cf_smoke_event *ev)
{
    struct collected *c = ctx;
    switch (ev->kind) {
    case CF_EV_INFO:
        c->infos++;
        if (ev->key && !strcmp(ev->key, "unique_id_fnv1a") && ev->rank >= 0 && ev->rank < 8)
            snprintf(c->uid[ev->rank], sizeof c->uid[0], "%s", ev->value);
        break;
    case CF_EV_RESULT: c->results++; break;
    case CF_EV_FAIL:
        c->fails++;
        snprintf(c->fail_text, sizeof c->fail_text, "%s", ev->text ? ev->text : "");
        break;
    case CF_EV_LOG: c->logs++; break;
    default: break;
    }
}

static char *const clean_env[] = { "PATH=/usr/bin:/bin", NULL };

static void test_nccl_run_without_gpu_fails_fast_with_nccls_words(void **state)
{
    struct ts_nccl nccl;
    if (ts_find_nccl(&nccl) != 0) {
        print_message("SKIP: no libnccl.so.2 with its nccl.h found (set CUDA_HOME)\n");
        skip();
    }
    struct cf_smoke_opts o;
    cf_smoke_opts_defaults(&o);
    o.lib_path = nccl.lib;
    o.nranks = 3;
    o.envp = clean_env;
    /* the supervisor starts cclforge again as the ranks, with these arguments */
    char *exe = cf_asprintf("%s/cclforge", CCLFORGE_BINARY_DIR);
    o.self_exe = exe;
    char *const argv[] = { "smoke", "--lib", (char *)nccl.lib, "-n", "3", NULL };
    o.self_argv = argv;
    struct collected c = { 0 };
    struct cf_smoke_report rep;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_smoke_run(&o, collect, &c, &rep, &err), 0);
    print_message("3-rank nccl run ended: %s\n", c.fail_text);
    free(exe);
    if (rep.nfailures == 0) { /* a GPU machine: then it must have passed */
        assert_int_equal(rep.failed, 0);
        cf_smoke_report_release(&rep);
        return;
    }
    assert_true(rep.aborted || rep.failed > 0);
    /* fast: every rank ended on NCCL's own error, none at a timeout */
    assert_int_equal(c.fails, 3);
    assert_non_null(strstr(c.fail_text, "ncclCommInitRank failed"));
    assert_non_null(strstr(rep.lib_version, "NCCL 2."));
    /* every rank got the very bytes rank 0 made */
    assert_true(c.uid[0][0]);
    assert_string_equal(c.uid[0], c.uid[1]);
    assert_string_equal(c.uid[0], c.uid[2]);
    cf_smoke_report_release(&rep);
}

static void test_mpi_run_two_ranks_through_the_library(void **state)
{
    char *exe = cf_asprintf("%s/cclforge", CCLFORGE_BINARY_DIR);
    void *libmpi = dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL);
    if (!ts_have("mpirun") || !libmpi) {
        print_message("mpirun or Open MPI's libmpi.so.40 is missing: skipped\n");
        free(exe);
        skip();
    }
    struct cf_smoke_opts o;
    cf_smoke_opts_defaults(&o);
    o.backend = CF_BACKEND_MPI;
    o.nranks = 2;
    o.dtypes = (1u << CF_DT_COUNT) - 1;
    o.redops = (1u << CF_RED_COUNT) - 1;
    o.sweep.min_bytes = 64;
    o.sweep.max_bytes = 4096;
    o.sweep.step_factor = 8;
    o.iters = 2;
    o.warmup_iters = 1;
    o.self_exe = exe;
    char *const argv[] = { "smoke", "--backend", "mpi", "-d", "all", "-o", "all", "-b", "64", "-e", "4096", "-f",
                           "8", "--iters", "2", "-w", "1", NULL };
    o.self_argv = argv;
    extern char **environ;
    o.envp = environ;
    struct collected c = { 0 };
    struct cf_smoke_report rep;
    cf_error err = CF_ERROR_INIT;
    if (cf_smoke_run(&o, collect, &c, &rep, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    /* 10 types x 3 sizes x 2 placements x (3 reducing ops x 5 reductions + 6 others) */
    size_t want = 10 * 3 * 2 * (3 * 5 + 6);
    if (rep.nrows != want || rep.failed)
        fail_msg("%zu rows (wanted %zu), %ld failed: %s", rep.nrows, want, rep.failed, rep.verdict);
    assert_int_equal(c.results, 2 * (int)want);
    for (size_t i = 0; i < rep.nrows; i++) {
        const struct cf_smoke_row *r = &rep.rows[i];
        assert_true(r->time_us > 0);
        assert_true(fabs(r->busbw - r->algbw * cf_smoke_busbw_factor(cf_smoke_op_info(r->op), 2)) < 1e-9 * (1 + r->busbw));
        assert_true(r->slowest_rank == 0 || r->slowest_rank == 1);
        assert_true(r->slowest_us >= r->median_us);
    }
    assert_non_null(rep.verdict);
    assert_true(!strncmp(rep.verdict, "ok: ", 4));
    assert_non_null(strstr(rep.lib_version, "MPI"));
    /* the supervisor's mpirun is Open MPI's: its ranks chose its ABI and said so */
    assert_non_null(rep.mpi_abi);
    assert_string_equal(rep.mpi_abi, "Open MPI");
    assert_non_null(strstr(rep.lib_path, "libmpi.so.40"));
    assert_non_null(strstr(rep.mpi_chosen_by, "OMPI_COMM_WORLD_RANK"));
    cf_smoke_report_release(&rep);
    free(exe);
}

/* ---- which libmpi, by which rule ---- */

static void expect_candidates(const char *mpi_lib, char *const *envp, const char *const *tail, const char *abi,
                              const char *chosen)
{
    struct strvec c = STRVEC_INIT;
    const struct cf_mpi_abi *expect = NULL;
    char *chosen_by = NULL;
    cf_mpi_candidates(mpi_lib, envp, &c, &expect, &chosen_by);
    size_t n = 0;
    while (tail[n])
        n++;
    if (c.n < n)
        fail_msg("%zu candidates, wanted at least %zu", c.n, n);
    /* the tail: what the loader is asked for (beside-the-launcher paths may come first) */
    for (size_t i = 0; i < n; i++)
        assert_string_equal(c.v[c.n - n + i], tail[i]);
    if (abi)
        assert_string_equal(expect ? expect->name : "(any)", abi);
    else
        assert_null(expect);
    if (!strstr(chosen_by, chosen))
        fail_msg("chosen by '%s', wanted '%s'", chosen_by, chosen);
    cf_strvec_clear(&c);
    free(chosen_by);
}

static void test_mpi_library_choice(void **state)
{
    (void)state;
    const char *const ompi[] = { "libmpi.so.40", NULL };
    const char *const mpich[] = { "libmpi.so.12", "libmpich.so.12", NULL };
    const char *const every[] = { "libmpi.so.40", "libmpi.so.12", "libmpich.so.12", NULL };
    const char *const mine[] = { "/opt/my/libmpi.so", NULL };
    char *const none[] = { "HOME=/root", NULL };
    expect_candidates(NULL, none, every, NULL, "default order");
    char *const under_mpirun[] = { "OMPI_COMM_WORLD_RANK=1", "I_MPI_ROOT=/opt/intel/mpi", NULL };
    expect_candidates(NULL, under_mpirun, ompi, "Open MPI", "OMPI_COMM_WORLD_RANK"); /* a rank variable wins */
    char *const under_hydra[] = { "OMPI_MCA_btl=self", "PMI_RANK=0", "PMI_SIZE=2", NULL };
    expect_candidates(NULL, under_hydra, mpich, "MPICH", "PMI_RANK");
    char *const intel[] = { "I_MPI_PIN=0", NULL };
    expect_candidates(NULL, intel, mpich, "MPICH", "I_MPI_PIN"); /* a prefix when no rank variable */
    char *const hydra_only[] = { "HYDRA_TOPO_DEBUG=1", NULL };
    expect_candidates(NULL, hydra_only, mpich, "MPICH", "HYDRA_TOPO_DEBUG");
    char *const ompi_env[] = { "OMPI_MCA_btl=self", NULL };
    expect_candidates(NULL, ompi_env, ompi, "Open MPI", "OMPI_MCA_btl");
    char *const env_lib[] = { "CCLFORGE_MPI_LIB=/opt/my/libmpi.so", "PMI_RANK=0", NULL };
    expect_candidates(NULL, env_lib, mine, NULL, "CCLFORGE_MPI_LIB"); /* explicit: alone, any ABI */
    const char *const flag[] = { "/x/libmpi.so.12", NULL };
    expect_candidates("/x/libmpi.so.12", env_lib, flag, NULL, "--mpi-lib");
}

static void test_mpi_load_errors(void **state)
{
    (void)state;
    struct cf_mpi_api api;
    cf_error err = CF_ERROR_INIT;
    char *const none[] = { "HOME=/root", NULL };
    assert_int_equal(cf_mpi_api_load(&api, "/nonexistent/libmpi.so.40", none, &err), -1);
    const char *msg = cf_error_message(&err);
    print_message("%s\n", msg);
    assert_non_null(strstr(msg, "/nonexistent/libmpi.so.40: "));
    assert_non_null(strstr(msg, "chosen by --mpi-lib"));
    assert_non_null(strstr(msg, "install Open MPI"));
    assert_non_null(strstr(msg, "or MPICH (pip install mpich"));
    assert_non_null(strstr(msg, "give --mpi-lib PATH (or CCLFORGE_MPI_LIB)"));
    cf_error_clear(&err);
    /* a library that is no MPI: refused by the markers, not called */
    assert_int_equal(cf_mpi_api_load(&api, "libc.so.6", none, &err), -1);
    msg = cf_error_message(&err);
    assert_non_null(strstr(msg, "libc.so.6: not an MPI library of a known ABI (it exports none of "
                                "ompi_mpi_comm_world (Open MPI), MPIR_Dup_fn (MPICH))"));
    cf_error_clear(&err);
    /* under Hydra only the MPICH ABI is tried, and the fix names it */
    char *const hydra[] = { "PMI_RANK=0", "LD_LIBRARY_PATH=/nonexistent", NULL };
    void *mpich = dlopen("libmpi.so.12", RTLD_NOW | RTLD_NOLOAD);
    if (!mpich) {
        assert_int_equal(cf_mpi_api_load(&api, NULL, hydra, &err), -1);
        msg = cf_error_message(&err);
        assert_non_null(strstr(msg, "chosen by the launcher's PMI_RANK"));
        assert_non_null(strstr(msg, "libmpi.so.12: "));
        assert_non_null(strstr(msg, "libmpich.so.12: "));
        assert_null(strstr(msg, "libmpi.so.40"));
        assert_non_null(strstr(msg, "install MPICH (pip install mpich"));
        assert_null(strstr(msg, "install Open MPI"));
        cf_error_clear(&err);
    }
}

static void test_mpi_load_open_mpi(void **state)
{
    (void)state;
    struct cf_mpi_api api;
    cf_error err = CF_ERROR_INIT;
    char *const under_mpirun[] = { "OMPI_COMM_WORLD_RANK=0", NULL };
    if (cf_mpi_api_load(&api, NULL, under_mpirun, &err) < 0) {
        print_message("no Open MPI: %s\n", cf_error_message(&err));
        cf_error_clear(&err);
        skip();
    }
    assert_string_equal(api.abi->name, "Open MPI");
    assert_non_null(strstr(api.path, "libmpi.so.40"));
    /* the handles are the library's own globals, RTLD_GLOBAL: visible to everyone */
    assert_true(api.h[CF_MPI_COMM_WORLD] == (cf_mpi_handle)dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world"));
    assert_true(api.h[CF_MPI_FLOAT] == (cf_mpi_handle)dlsym(RTLD_DEFAULT, "ompi_mpi_float"));
    assert_true(api.in_place == (void *)1 && api.status_ignore == NULL);
    cf_mpi_api_unload(&api);
}


/* ---- NCCL's own log: the fixtures are NCCL's format strings of four versions ---- */

static struct cf_smoke_nccl_log parse_fixture(const char *name)
{
    char *path = cf_asprintf("%s/tests/fixtures/nccl-log/%s", CCLFORGE_SOURCE_DIR, name);
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, 1 << 20, &text, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    struct cf_smoke_nccl_log log;
    cf_smoke_nccl_log_parse(cf_sb_str(&text), text.len, &log);
    cf_sb_release(&text);
    free(path);
    return log;
}

static const struct cf_smoke_transport_conn *conn(const struct cf_smoke_nccl_log *log, int rank, int peer,
                                                  const char *via)
{
    for (size_t i = 0; i < log->nconns; i++)
        if (log->conns[i].rank == rank && log->conns[i].peer == peer && !strcmp(log->conns[i].via, via))
            return &log->conns[i];
    fail_msg("no connection %d -> %d via %s among %zu", rank, peer, via, log->nconns);
    return NULL;
}

static void test_nccl_logs_of_four_versions(void **state)
{
    struct cf_smoke_nccl_log log = parse_fixture("v2.12.12.log"); /* busId in hex */
    assert_string_equal(log.net, "Socket");
    assert_true(cf_strvec_contains(&log.warnings, "NET/IB : No device found."));
    assert_int_equal(log.nconns, 3);
    assert_string_equal(conn(&log, 0, 1, "P2P/IPC/read")->kind, "P2P");
    assert_string_equal(conn(&log, 1, 2, "NET/Socket/0")->kind, "NET");
    conn(&log, 3, 0, "NET/Socket/0"); /* a [receive] line: the sender first */
    cf_smoke_nccl_log_release(&log);

    log = parse_fixture("v2.18.3.log");
    assert_string_equal(log.net, "IB");
    assert_int_equal(log.nconns, 5); /* the ring dump "Channel 00/02 :" is not one */
    conn(&log, 1, 0, "P2P/IPC/read");
    const struct cf_smoke_transport_conn *ib = conn(&log, 1, 2, "NET/IB/0/GDRDMA");
    assert_true(cf_smoke_transport_applies(CF_TRANSPORT_IB, ib) && cf_smoke_transport_matches(CF_TRANSPORT_IB, ib));
    assert_false(cf_smoke_transport_matches(CF_TRANSPORT_SOCKET, ib));
    const struct cf_smoke_transport_conn *shm = conn(&log, 0, 1, "SHM/direct/direct");
    assert_true(cf_smoke_transport_applies(CF_TRANSPORT_P2P, shm));
    assert_false(cf_smoke_transport_matches(CF_TRANSPORT_P2P, shm));
    assert_false(cf_smoke_transport_applies(CF_TRANSPORT_IB, shm));
    cf_smoke_nccl_log_release(&log);

    /* an IB host that fell back to sockets: what --expect-transport ib catches */
    log = parse_fixture("v2.21.5.log");
    assert_string_equal(log.net, "Socket");
    assert_true(cf_strvec_contains(&log.warnings, "NET/IB : No device found."));
    const struct cf_smoke_transport_conn *sock = conn(&log, 3, 0, "NET/Socket/0");
    assert_int_equal(sock->channels, 2); /* channels 00 and 01 */
    assert_true(cf_smoke_transport_applies(CF_TRANSPORT_IB, sock) && !cf_smoke_transport_matches(CF_TRANSPORT_IB, sock));
    conn(&log, 2, 3, "P2P/CUMEM/read");
    cf_smoke_nccl_log_release(&log);

    log = parse_fixture("v2.28.9.log"); /* a plugin whose name has a space, timestamped WARNs */
    assert_string_equal(log.plugin, "AWS Libfabric");
    assert_string_equal(log.net, "AWS Libfabric");
    conn(&log, 0, 1, "P2P/CUMEM/read");
    conn(&log, 0, 1, "P2P/direct pointer");
    conn(&log, 1, 2, "NET/AWS Libfabric/0(0)/GDRDMA/Shared");
    conn(&log, 1, 0, "SHM/CE/direct");
    assert_true(cf_strvec_contains(&log.warnings,
                                   "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'"));
    cf_smoke_nccl_log_release(&log);

    /* not NCCL's, truncated, or empty: nothing, and no harm */
    static const char *junk[] = { "", "NCCL INFO", "x NCCL INFO Channel 0", "h:1:1 [0] NCCL INFO Channel 00 : 0[",
                                  "h:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via" };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        cf_smoke_nccl_log_parse(junk[i], strlen(junk[i]), &log);
        assert_true(log.nconns == 0 || !strcmp(log.conns[0].via, ""));
        cf_smoke_nccl_log_release(&log);
    }
}

/* ---- robust statistics: medians, spreads, bands ---- */

/* a group's result: median bw, its band +-band x bw, from `samples` samples a test */
static struct smoke_group_result result_of(double bw, double band, int samples, int failed)
{
    struct smoke_group_result r;
    memset(&r, 0, sizeof r);
    r.avg_busbw = r.bw.median = bw;
    r.bw.spread = 2 * band;
    r.bw.have_band = samples >= SMOKE_MIN_BAND_SAMPLES;
    r.bw.lo = r.bw.have_band ? bw * (1 - band) : 0;
    r.bw.hi = r.bw.have_band ? bw * (1 + band) : 0;
    r.tests = 1;
    r.samples = samples;
    r.failed = failed;
    return r;
}


static void test_stats_median_spread_and_band(void **state)
{
    (void)state;
    double odd[] = { 3, 1, 2 }, even[] = { 4, 1, 3, 2 };
    assert_true(cf_smoke_median(odd, 3) == 2.0);
    assert_true(cf_smoke_median(even, 4) == 2.5);
    /* the band's order statistic: P(Binomial(n, 1/2) < k) <= 5% */
    static const int band[][2] = { { 1, 0 }, { 2, 0 }, { 4, 0 }, { 5, 1 }, { 6, 1 }, { 8, 2 }, { 9, 2 },
                                   { 10, 2 }, { 20, 6 }, { 64, 25 } };
    for (size_t i = 0; i < sizeof band / sizeof band[0]; i++)
        if (cf_smoke_band_rank(band[i][0]) != band[i][1])
            fail_msg("n %d: band rank %d, want %d", band[i][0], cf_smoke_band_rank(band[i][0]), band[i][1]);
    /* the reported fault: two iterations, one waited 12 ms for a core */
    double two[] = { 12000, 100 };
    struct smoke_time_stats st;
    cf_smoke_time_stats(two, 2, &st);
    assert_true(st.median == 6050 && st.fast == 100 && st.slow == 12000 && st.band_fast == 0 && st.band_slow == 0);
    struct smoke_bw_figure f;
    cf_smoke_bw_figure(&st, 1000, &f); /* busbw = 1000 / time */
    assert_false(f.have_band);
    assert_true(fabs(f.spread - (6050.0 / 100 - 6050.0 / 12000)) < 1e-12);
    /* twenty samples, two of them hit: the median and band stay on the others */
    double twenty[20];
    for (int i = 0; i < 20; i++)
        twenty[i] = 100 + i; /* 100 .. 119 */
    twenty[3] = 12000;
    twenty[11] = 9000;
    cf_smoke_time_stats(twenty, 20, &st);
    /* sorted: 100 101 102 104 .. 110 112 .. 119 9000 12000 */
    assert_true(st.median == (110 + 112) / 2.0);
    assert_true(st.fast == 102 && st.slow == 119); /* k = 3: the third from each end */
    assert_true(st.band_fast == 106 && st.band_slow == 116); /* k = 6 */
    cf_smoke_bw_figure(&st, 1000, &f);
    assert_true(f.have_band && f.median == 1000 / 111.0 && f.lo == 1000 / 116.0 && f.hi == 1000 / 106.0);
    assert_true(fabs(f.spread - (111.0 / 102 - 111.0 / 119)) < 1e-12);
    /* one sample: no spread at all */
    double one[] = { 5 };
    cf_smoke_time_stats(one, 1, &st);
    cf_smoke_bw_figure(&st, 1000, &f);
    assert_true(f.median == 200 && f.spread < 0 && !f.have_band);
}

static void test_stats_group_tally_and_pack(void **state)
{
    (void)state;
    struct smoke_tally t;
    memset(&t, 0, sizeof t);
    struct smoke_bw_figure a = { 4, 0.1, 3, 5, 1 }, b = { 8, 0.3, 7, 9, 1 }, c = { 2, 0.2, 1, 3, 1 };
    cf_smoke_tally_add(&t, 4.5, &a, 20, 1);
    cf_smoke_tally_add(&t, 8.5, &b, 20, 1);
    cf_smoke_tally_add(&t, 2.5, &c, 20, 0);
    struct smoke_group_result r, back;
    cf_smoke_tally_result(&t, &r);
    assert_true(r.avg_busbw == 15.5 / 3 && r.bw.median == 4 && r.bw.spread == 0.2 && r.bw.lo == 3 && r.bw.hi == 5);
    assert_true(r.bw.have_band && r.tests == 3 && r.samples == 20 && r.failed);
    double w[SMOKE_RESULT_WORDS];
    cf_smoke_result_pack(&r, w);
    cf_smoke_result_unpack(w, &back);
    assert_memory_equal(&r.bw, &back.bw, sizeof r.bw);
    assert_true(back.avg_busbw == r.avg_busbw && back.tests == 3 && back.samples == 20 && back.failed);
    /* a test without a band (too few samples) leaves the group without one */
    struct smoke_bw_figure d = { 6, -1, 0, 0, 0 };
    cf_smoke_tally_add(&t, 6, &d, 2, 1);
    cf_smoke_tally_result(&t, &r);
    assert_true(!r.bw.have_band && r.bw.spread < 0 && r.samples == 2 && r.bw.median == 5);
    cf_smoke_tally_reset(&t);
    cf_smoke_tally_result(&t, &r);
    assert_true(r.tests == 0 && r.bw.median == 0);
    cf_smoke_tally_release(&t);
}

/* the one host the search names bad, -1 for none, -2 for several */
static int named_host(const struct smoke_search *s, int nhosts)
{
    unsigned char is_bad[64];
    assert_true(nhosts <= 64);
    int n = cf_smoke_search_bad_hosts(s, is_bad), found = -1;
    for (int h = 0; h < nhosts; h++)
        if (is_bad[h])
            found = h;
    return n > 1 ? -2 : n == 1 ? found : -1;
}

/* pairwise over 4 hosts from given results (by pair a-b), the verdict and whether it decided */
static char *pairwise_of(struct smoke_group_result (*pair)[4], int *culprit, int *bad, char **why)
{
    struct smoke_search *s = cf_smoke_search_new(CF_PATTERN_PAIRWISE, 4, 1, 0);
    struct smoke_round round;
    while (cf_smoke_search_next(s, &round)) {
        struct smoke_group_result res[2];
        for (int g = 0; g < round.ngroups; g++) {
            int a = -1, b = -1;
            for (int h = 0; h < 4; h++)
                if (cf_smoke_round_color(&round, h, 0) == g)
                    *(a < 0 ? &a : &b) = h;
            res[g] = pair[a][b];
        }
        cf_smoke_search_result(s, &round, res);
        cf_smoke_round_release(&round);
    }
    char *names[] = { "n0", "n1", "n2", "n3" };
    *why = cf_smoke_search_inconclusive(s, names);
    char *v = cf_smoke_search_verdict(s, names, bad);
    *culprit = named_host(s, 4);
    cf_smoke_search_free(s);
    return v;
}

static void test_search_says_inconclusive(void **state)
{
    (void)state;
    struct smoke_group_result pair[4][4];
    int culprit, bad;
    char *why, *v;
    /* the fault: two iterations a pair, noise makes most pairs look slow against the luckiest */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            pair[a][b] = result_of(a == 0 && b == 1 ? 1.0 : 0.3, 0.5, 2, 0);
    v = pairwise_of(pair, &culprit, &bad, &why);
    assert_string_equal(why, "pairwise: 2 timed samples per test cannot tell a slow group from a noisy one (a "
                             "median's 90% band needs 5: --iters 5 or more)");
    assert_string_equal(v, "inconclusive: pairwise: 2 timed samples per test cannot tell a slow group from a noisy "
                           "one (a median's 90% band needs 5: --iters 5 or more)");
    assert_true(culprit == -1 && bad == 1); /* names nobody, and is no pass */
    free(v);
    free(why);
    /* enough samples, clear numbers: n3 is slow in every pair that holds it */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            pair[a][b] = result_of(b == 3 ? 0.01 : 1.0, 0.2, 20, 0);
    v = pairwise_of(pair, &culprit, &bad, &why);
    assert_null(why);
    assert_string_equal(v, "pairwise: host n3 is bad: every one of its 3 pairs was (3 of 6 pairs bad)");
    assert_int_equal(culprit, 3);
    free(v);
    /* enough samples, but one pair's band straddles half the best's: cannot tell */
    pair[1][2] = result_of(0.6, 0.5, 20, 0); /* band 0.3-0.9 against half of 0.8-1.2: 0.4-0.6 */
    v = pairwise_of(pair, &culprit, &bad, &why);
    assert_non_null(why);
    assert_string_equal(why, "pairwise: 1 of 6 groups cannot be told slow or not at this spread: n1+n2 (median "
                             "0.6 GB/s, band 0.3-0.9) against half of n0+n2 (median 1 GB/s, band 0.8-1.2); run "
                             "more --iters or on quieter hosts");
    assert_true(culprit == -1 && bad == 1 && !strncmp(v, "inconclusive: pairwise: 1 of 6", 30));
    free(v);
    free(why);
    /* a band wholly under half the best's band is slow; wholly over it, fine */
    pair[1][2] = result_of(0.3, 0.2, 20, 0); /* 0.24-0.36 < 0.4 */
    v = pairwise_of(pair, &culprit, &bad, &why);
    assert_null(why);
    /* n3's every pair is bad; n1+n2 alone names neither */
    assert_string_equal(v, "pairwise: host n3 is bad: every one of its 3 pairs was (4 of 6 pairs bad)");
    assert_int_equal(culprit, 3);
    free(v);
    pair[1][2] = result_of(0.7, 0.1, 20, 0); /* 0.63-0.77 >= 0.6 */
    v = pairwise_of(pair, &culprit, &bad, &why);
    assert_null(why);
    assert_int_equal(culprit, 3);
    free(v);
    /* wrong results need no band: a failed pair is bad with two samples */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            pair[a][b] = result_of(1.0, 0.1, 2, b == 3);
    pair[0][1] = result_of(1.0, 0.1, 2, 1);
    pair[0][2] = result_of(1.0, 0.1, 2, 1);
    pair[1][2] = result_of(1.0, 0.1, 2, 1); /* every pair failed but none is compared by speed */
    v = pairwise_of(pair, &culprit, &bad, &why);
    assert_null(why);
    assert_string_equal(v, "pairwise: bad groups: n0+n3 n1+n2 n1+n3 n0+n2 n2+n3 n0+n1");
    free(v);
}

/* pairwise over 6 hosts: a pair is slow when it holds a host of slow_mask, or is the
 * pair noisy_a-noisy_b; the verdict, and the hosts named in *named (a mask) */
static char *pairwise6(unsigned slow_mask, int noisy_a, int noisy_b, unsigned *named, int *bad)
{
    struct smoke_search *s = cf_smoke_search_new(CF_PATTERN_PAIRWISE, 6, 1, 0);
    struct smoke_round round;
    while (cf_smoke_search_next(s, &round)) {
        struct smoke_group_result res[3];
        for (int g = 0; g < round.ngroups; g++) {
            int a = -1, b = -1;
            for (int h = 0; h < 6; h++)
                if (cf_smoke_round_color(&round, h, 0) == g)
                    *(a < 0 ? &a : &b) = h;
            int slow = ((slow_mask >> a) | (slow_mask >> b)) & 1;
            slow |= (a == noisy_a && b == noisy_b) || (a == noisy_b && b == noisy_a);
            res[g] = result_of(slow ? 0.05 : 1.0, 0.1, 20, 0);
        }
        cf_smoke_search_result(s, &round, res);
        cf_smoke_round_release(&round);
    }
    char *names[] = { "h1", "h2", "h3", "h4", "h10", "h6" };
    char *v = cf_smoke_search_verdict(s, names, bad);
    unsigned char is_bad[6];
    int n = cf_smoke_search_bad_hosts(s, is_bad);
    *named = 0;
    for (int h = 0; h < 6; h++)
        *named |= (unsigned)is_bad[h] << h;
    assert_int_equal(n, __builtin_popcount(*named));
    /* the verdict names exactly the hosts the search names */
    unsigned in_verdict = 0;
    const char *list = !strncmp(v, "pairwise: hosts ", 16) ? v + 16 : !strncmp(v, "pairwise: host ", 15) ? v + 15 : NULL;
    const char *end = list ? strstr(list, " is bad:") : NULL;
    if (list && !end)
        end = strstr(list, " are bad:");
    for (const char *p = list; p && end && p < end;) {
        const char *q = strstr(p, ", ");
        size_t len = (size_t)((q && q < end ? q : end) - p);
        for (int h = 0; h < 6; h++)
            if (strlen(names[h]) == len && !strncmp(p, names[h], len))
                in_verdict |= 1u << h;
        p += len + 2;
    }
    if (in_verdict != *named)
        fail_msg("the verdict names %#x, the search %#x: %s", in_verdict, *named, v);
    cf_smoke_search_free(s);
    return v;
}

static void test_pairwise_bad_hosts_one_rule(void **state)
{
    (void)state;
    unsigned named;
    int bad;
    /* one bad host: its every pair is slow */
    char *v = pairwise6(1u << 2, -1, -1, &named, &bad);
    assert_string_equal(v, "pairwise: host h3 is bad: every one of its 5 pairs was (5 of 15 pairs bad)");
    assert_true(named == 1u << 2 && bad);
    free(v);
    /* two bad hosts: no host is in every bad pair, yet each is named (natural order) */
    v = pairwise6(1u << 1 | 1u << 4, -1, -1, &named, &bad);
    assert_string_equal(v, "pairwise: hosts h2, h10 are bad: every one of their pairs was (9 of 15 pairs bad)");
    assert_true(named == (1u << 1 | 1u << 4) && bad);
    free(v);
    /* noise in one pair: both its hosts are fine with every other peer, so nobody is named */
    v = pairwise6(0, 0, 3, &named, &bad);
    assert_string_equal(v, "pairwise: bad group: h1+h4");
    assert_true(named == 0 && bad);
    free(v);
    /* nothing wrong */
    v = pairwise6(0, -1, -1, &named, &bad);
    assert_string_equal(v, "pairwise: every group passed");
    assert_true(named == 0 && !bad);
    free(v);
}

/* ---- the bad-node search, on made-up results ---- */

/* busbw of a round's group: 1 GB/s, or 0.01 when it holds the bad host (-1: none) */
static int run_search(enum cf_smoke_pattern p, int nhosts, int bad, int fail_instead, double min_busbw,
                      char **verdict, int *found_bad)
{
    struct smoke_search *s = cf_smoke_search_new(p, nhosts, 1, min_busbw);
    struct smoke_round round;
    int rounds = 0;
    while (cf_smoke_search_next(s, &round)) {
        struct smoke_group_result res[64];
        assert_true(round.ngroups <= 64);
        for (int g = 0; g < round.ngroups; g++) {
            int has = bad >= 0 && cf_smoke_round_color(&round, bad, 0) == g;
            int members = 0;
            for (int h = 0; h < nhosts; h++)
                members += cf_smoke_round_color(&round, h, 0) == g;
            assert_true(members >= (p == CF_PATTERN_INTRA ? 1 : 2));
            /* a failing group may well be the fastest: that must not make the others look slow */
            res[g] = result_of(has ? (fail_instead ? 50.0 : 0.01) : 1.0, 0.1, 20, has && fail_instead);
        }
        cf_smoke_search_result(s, &round, res);
        cf_smoke_round_release(&round);
        assert_true(++rounds < 64);
    }
    char *names[16];
    for (int h = 0; h < nhosts; h++)
        names[h] = cf_asprintf("h%d", h);
    *verdict = cf_smoke_search_verdict(s, names, found_bad);
    int culprit = named_host(s, nhosts);
    for (int h = 0; h < nhosts; h++)
        free(names[h]);
    cf_smoke_search_free(s);
    return culprit;
}

static void test_pairwise_meets_every_pair_once(void **state)
{
    for (int n = 2; n <= 9; n++) {
        struct smoke_search *s = cf_smoke_search_new(CF_PATTERN_PAIRWISE, n, 1, 0);
        int met[9][9] = { { 0 } };
        struct smoke_round round;
        int rounds = 0;
        while (cf_smoke_search_next(s, &round)) {
            int used[9] = { 0 };
            for (int g = 0; g < round.ngroups; g++) {
                int a = -1, b = -1;
                for (int h = 0; h < n; h++)
                    if (cf_smoke_round_color(&round, h, 0) == g) {
                        assert_false(used[h]); /* disjoint in a round */
                        used[h] = 1;
                        if (a < 0)
                            a = h;
                        else
                            b = h;
                    }
                assert_true(a >= 0 && b > a);
                met[a][b]++;
            }
            struct smoke_group_result res[16];
            memset(res, 0, sizeof res);
            cf_smoke_search_result(s, &round, res);
            cf_smoke_round_release(&round);
            rounds++;
        }
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                if (met[a][b] != 1)
                    fail_msg("%d hosts: pair %d-%d met %d times", n, a, b, met[a][b]);
        assert_int_equal(rounds, n % 2 ? n : n - 1);
        cf_smoke_search_free(s);
    }
}

static void test_search_names_the_bad_host(void **state)
{
    static const enum cf_smoke_pattern patterns[] = { CF_PATTERN_PAIRWISE, CF_PATTERN_BISECT };
    for (size_t k = 0; k < 2; k++)
        for (int mode = 0; mode < 3; mode++) /* slow by ratio, slow under --min-busbw, wrong results */
            for (int n = 2; n <= 8; n++)
                for (int bad = -1; bad < n; bad++) {
                    char *v;
                    int found_bad;
                    int culprit = run_search(patterns[k], n, bad, mode == 2, mode == 1 ? 0.5 : 0, &v, &found_bad);
                    if (bad < 0 && found_bad)
                        fail_msg("%s, %d hosts, nobody bad, mode %d: %s", cf_smoke_pattern_name(patterns[k]), n, mode,
                                 v);
                    if (n == 2 && bad >= 0) {
                        /* two hosts: a failure or --min-busbw blames the link between them; a
                         * ratio has nothing to compare with, and blames nobody */
                        if (culprit != -1 || (mode && !strstr(v, "the link between h0 and h1")))
                            fail_msg("%s, 2 hosts, mode %d: %s", cf_smoke_pattern_name(patterns[k]), mode, v);
                    } else if (culprit != bad) {
                        fail_msg("%s, %d hosts, bad %d, mode %d: named %d: %s", cf_smoke_pattern_name(patterns[k]),
                                 n, bad, mode, culprit, v);
                    }
                    free(v);
                }
    /* intra: the host whose own group is slow */
    char *v;
    int found_bad;
    assert_int_equal(run_search(CF_PATTERN_INTRA, 4, 2, 0, 0, &v, &found_bad), 2);
    free(v);
    assert_int_equal(run_search(CF_PATTERN_INTRA, 4, -1, 0, 0, &v, &found_bad), -1);
    assert_non_null(strstr(v, "every group passed"));
    free(v);
}

/* The tolerance is 2 ulp of the type at the expected value: computed from the
 * IEEE bits (cclforge links no libm), checked here against libm's frexp and
 * ldexp over normal, subnormal and huge values of every float type. */
static void test_tolerance_matches_libm(void **state)
{
    (void)state;
    static const int mantissa_bits[CF_DT_COUNT] = {
        [CF_DT_FLOAT16] = 10, [CF_DT_BFLOAT16] = 7, [CF_DT_FLOAT32] = 23, [CF_DT_FLOAT64] = 52,
    };
    const double edges[] = { 0x1p-1074, 0x1.8p-1070, 0x1p-1023, 0x1.fffffffffffffp-1023, 0x1p-1022,
                             1.0, 0.75, 3.0, 65504.0, 0x1.fffffffffffffp1023 };
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int dt = 0; dt < CF_DT_COUNT; dt++) {
        if (!cf_smoke_dtype_info((enum cf_smoke_dtype)dt)->is_float)
            continue;
        struct cf_smoke_data d = { (enum cf_smoke_dtype)dt, CF_RED_AVG, 2, 1 };
        for (int i = 0; i < 200000 + (int)(sizeof edges / sizeof edges[0]); i++) {
            double v;
            if (i < (int)(sizeof edges / sizeof edges[0])) {
                v = edges[i];
            } else {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: every exponent, subnormals included */
                uint64_t bits = x & ~(1ull << 63);
                memcpy(&v, &bits, sizeof v);
                if (!isfinite(v) || v == 0)
                    continue;
            }
            int e;
            frexp(v, &e);
            double want = 2 * ldexp(1.0, e - 1 - mantissa_bits[dt]);
            if (cf_smoke_tolerance(&d, v) != want || cf_smoke_tolerance(&d, -v) != want)
                fail_msg("%s: tolerance at %a is %a, libm says %a", cf_smoke_dtype_info(dt)->name, v,
                         cf_smoke_tolerance(&d, v), want);
        }
        assert_true(cf_smoke_tolerance(&d, INFINITY) == 0 && cf_smoke_tolerance(&d, 0) == 0);
    }
}

/* A smoke that completed no test is a failure that says so, never "ok: 0
 * tests passed"; only the process that reports (the supervisor, rank 0)
 * says it. */
static void test_verdict_nothing_ran(void **state)
{
    (void)state;
    struct cf_smoke_opts o;
    cf_smoke_opts_defaults(&o);
    struct cf_smoke_report rep;
    memset(&rep, 0, sizeof rep);
    rep.role = CF_ROLE_SUPERVISOR;
    cf_smoke_verdict(&rep, &o);
    assert_true(rep.failed > 0);
    assert_non_null(rep.verdict);
    assert_non_null(strstr(rep.verdict, "FAIL: no test ran"));
    cf_smoke_report_release(&rep);
    memset(&rep, 0, sizeof rep);
    rep.role = CF_ROLE_RANK;
    rep.rank = 1;
    cf_smoke_verdict(&rep, &o);
    assert_int_equal(rep.nproblems, 0);
    cf_smoke_report_release(&rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_roundtrip_every_pattern),
        cmocka_unit_test(test_bf16_roundtrip_and_rounding),
        cmocka_unit_test(test_data_is_exact_and_never_repeats),
        cmocka_unit_test(test_tolerance_matches_libm),
        cmocka_unit_test(test_ops_and_factors_match_nccl_tests),
        cmocka_unit_test(test_sizes_counts_and_layouts),
        cmocka_unit_test(test_fault_switch_parsing),
        cmocka_unit_test(test_records_roundtrip_with_escapes),
        cmocka_unit_test(test_nccl_logs_of_four_versions),
        cmocka_unit_test(test_pairwise_meets_every_pair_once),
        cmocka_unit_test(test_search_names_the_bad_host),
        cmocka_unit_test(test_stats_median_spread_and_band),
        cmocka_unit_test(test_stats_group_tally_and_pack),
        cmocka_unit_test(test_search_says_inconclusive),
        cmocka_unit_test(test_pairwise_bad_hosts_one_rule),
        cmocka_unit_test(test_real_nccl_loads_and_reports_version),
        cmocka_unit_test(test_library_without_nccl_api_is_refused),
        cmocka_unit_test(test_cuda_runtime_loads_by_dlopen),
        cmocka_unit_test(test_nccl_run_without_gpu_fails_fast_with_nccls_words),
        cmocka_unit_test(test_mpi_run_two_ranks_through_the_library),
        cmocka_unit_test(test_mpi_library_choice),
        cmocka_unit_test(test_mpi_load_errors),
        cmocka_unit_test(test_mpi_load_open_mpi),
        cmocka_unit_test(test_verdict_nothing_ran),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
