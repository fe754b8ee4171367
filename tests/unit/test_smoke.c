/* smoke: data tables, fp16/bf16, exact patterns, sizes, records, and the real NCCL /
 * CUDA runtime loaders (launchers and the rendezvous: test_launch.c). */
#include "testsupport.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/smoke.h"
#include "cclforge/smoke_half.h"
#include "cclforge/clock.h"
#include "smoke/nccl_api.h"
#include "smoke/smoke_internal.h"

#define REAL_NCCL "/usr/local/cuda-13.0/lib/libnccl.so.2"

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

/* Every input the sweep uses, and every sum over nranks of them, is exact. */
static void test_patterns_sum_exactly(void **state)
{
    static const int rank_counts[] = { 1, 2, 3, 4, 8, 64 };
    unsigned char buf[16];
    for (int dt = 0; dt < CF_DT_COUNT; dt++) {
        const struct cf_smoke_dtype_info *info = cf_smoke_dtype_info((enum cf_smoke_dtype)dt);
        for (size_t k = 0; k < sizeof rank_counts / sizeof rank_counts[0]; k++) {
            int n = rank_counts[k];
            int64_t max = 0;
            for (int r = 0; r < n; r++)
                for (size_t i = 0; i < 3000; i++) {
                    int64_t v = cf_smoke_pattern((enum cf_smoke_dtype)dt, n, r, i, 12345);
                    assert_true(v >= 0);
                    if (v > max)
                        max = v;
                    cf_smoke_store((enum cf_smoke_dtype)dt, buf, 0, (double)v);
                    assert_true(cf_smoke_load((enum cf_smoke_dtype)dt, buf, 0) == (double)v);
                }
            assert_true(max * n <= info->exact_limit);
            /* the largest possible sum survives a round trip through the type */
            cf_smoke_store((enum cf_smoke_dtype)dt, buf, 1, (double)(max * n));
            assert_true(cf_smoke_load((enum cf_smoke_dtype)dt, buf, 1) == (double)(max * n));
            if (n <= 64 && dt != CF_DT_BFLOAT16)
                assert_true(max > 1); /* inputs vary, so misplaced data shows */
        }
    }
}

static void test_busbw_factors_match_nccl_tests(void **state)
{
    assert_true(fabs(cf_smoke_op_info(CF_OP_ALL_REDUCE)->busbw_factor(4) - 1.5) < 1e-12);
    assert_true(fabs(cf_smoke_op_info(CF_OP_ALL_REDUCE)->busbw_factor(2) - 1.0) < 1e-12);
    assert_true(fabs(cf_smoke_op_info(CF_OP_ALL_GATHER)->busbw_factor(4) - 0.75) < 1e-12);
    assert_true(fabs(cf_smoke_op_info(CF_OP_REDUCE_SCATTER)->busbw_factor(8) - 0.875) < 1e-12);
    assert_true(cf_smoke_op_info(CF_OP_BROADCAST)->busbw_factor(8) == 1.0);
    assert_true(cf_smoke_op_info(CF_OP_SENDRECV)->busbw_factor(8) == 1.0);
    assert_false(cf_smoke_op_info(CF_OP_SENDRECV)->has_in_place);
    enum cf_smoke_op op;
    assert_int_equal(cf_smoke_op_parse("allreduce", &op), 0);
    assert_int_equal(op, CF_OP_ALL_REDUCE);
    assert_int_equal(cf_smoke_op_parse("reduce_scatter", &op), 0);
    assert_int_equal(op, CF_OP_REDUCE_SCATTER);
    assert_int_equal(cf_smoke_op_parse("alltoall", &op), -1);
    enum cf_smoke_dtype dt;
    assert_int_equal(cf_smoke_dtype_parse("bf16", &dt), 0);
    assert_int_equal(dt, CF_DT_BFLOAT16);
    assert_int_equal(cf_smoke_dtype_info(CF_DT_BFLOAT16)->nccl_type, 9);
    assert_int_equal(cf_smoke_dtype_info(CF_DT_FLOAT32)->nccl_type, 7);
    assert_int_equal(cf_smoke_dtype_parse("fp8", &dt), -1);
}

static void test_sizes_and_counts(void **state)
{
    size_t v;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_smoke_parse_size("8", &v, &err), 0);
    assert_int_equal(v, 8);
    assert_int_equal(cf_smoke_parse_size("64K", &v, &err), 0);
    assert_int_equal(v, 65536);
    assert_int_equal(cf_smoke_parse_size("128M", &v, &err), 0);
    assert_int_equal(v, 128u << 20);
    assert_int_equal(cf_smoke_parse_size("1GB", &v, &err), 0);
    assert_int_equal(v, 1u << 30);
    static const char *bad[] = { "", "x", "-1", "1T", "1KK", "12Kb" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cf_smoke_parse_size(bad[i], &v, &err), -1);
        assert_int_equal(err.kind, CF_ERR_USAGE);
        cf_error_clear(&err);
    }
    /* all_gather / reduce_scatter round down to a multiple of the rank count */
    assert_int_equal(cf_smoke_count_for(CF_OP_ALL_GATHER, 1000, 4, 3), 249);
    assert_int_equal(cf_smoke_count_for(CF_OP_ALL_REDUCE, 1000, 4, 3), 250);
    assert_int_equal(cf_smoke_count_for(CF_OP_REDUCE_SCATTER, 4, 4, 2), 0);
}

static void test_fault_switch_parsing(void **state)
{
    struct cf_smoke_fault f;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_smoke_fault_parse("1:hang:all_gather", &f, &err), 0);
    assert_int_equal(f.action, CF_FAULT_HANG);
    assert_int_equal(f.rank, 1);
    assert_int_equal(f.op, CF_OP_ALL_GATHER);
    static const char *bad[] = { "1:hang", "x:abort:all_reduce", "1:explode:all_reduce", "1:abort:alltoall" };
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
    ev.row.wrong = 2;
    ev.wrong_all_ranks = 7;
    ev.text = "index 4:\texpected 1\ngot 2 \\ done";
    struct strbuf line = STRBUF_INIT;
    cf_smoke_record_encode(&line, REC_RESULT, &ev, NULL, 0);
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
    assert_int_equal(rec.ev.wrong_all_ranks, 7);
    assert_string_equal(rec.ev.text, ev.text);
    assert_true(rec.ev.t > 0);
    /* a library's own output is not a record; a damaged record is refused */
    assert_int_equal(cf_smoke_record_decode("NCCL INFO Bootstrap", &rec), 0);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\trank=x", &rec), -1);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\tbytes=4", &rec), -1);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "Z\trank=0", &rec), -1);
    assert_int_equal(cf_smoke_record_decode(SMOKE_RECORD_PREFIX "R\trank=0\top=99", &rec), -1);
    /* a BEGIN keeps its description and whether it waits for peers */
    cf_sb_reset(&line);
    ev.text = NULL;
    cf_smoke_record_encode(&line, REC_BEGIN, &ev, "ncclCommInitRank (4 ranks)", 1);
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
    if (access(REAL_NCCL, R_OK) != 0)
        skip();
    struct cf_nccl_api api;
    cf_error err = CF_ERROR_INIT;
    if (cf_nccl_api_load(&api, REAL_NCCL, "libnccl.so.2", &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    char v[32];
    cf_nccl_version_string(api.version, v, sizeof v);
    assert_true(api.version >= 20900);
    assert_non_null(api.AllReduce);
    assert_non_null(api.GetLastError);
    /* the library's own words for an error code */
    char *why = cf_nccl_explain(&api, 1, NULL);
    assert_non_null(strstr(why, "ncclResult 1"));
    free(why);
    cf_nccl_api_unload(&api);
    cf_nccl_version_string(22809, v, sizeof v);
    assert_string_equal(v, "2.28.9");
    cf_nccl_version_string(2708, v, sizeof v);
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
    if (cf_gpu_runtime_load(&rt, "cuda", NULL, "/usr/local/cuda-13.0/lib", &err) < 0) {
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
    }
}

static char *const clean_env[] = { "PATH=/usr/bin:/bin", NULL };

static void test_nccl_run_without_gpu_fails_fast_with_nccls_words(void **state)
{
    if (access(REAL_NCCL, R_OK) != 0)
        skip();
    struct cf_smoke_opts o;
    cf_smoke_opts_defaults(&o);
    o.lib_path = REAL_NCCL;
    o.nranks = 3;
    o.envp = clean_env;
    struct collected c = { 0 };
    struct cf_smoke_report rep;
    cf_error err = CF_ERROR_INIT;
    double t0 = cf_now_seconds();
    assert_int_equal(cf_smoke_run(&o, collect, &c, &rep, &err), 0);
    double took = cf_now_seconds() - t0;
    print_message("3-rank nccl run ended in %.2f s: %s\n", took, c.fail_text);
    if (rep.nfailures == 0) { /* a GPU machine: then it must have passed */
        assert_int_equal(rep.failed, 0);
        cf_smoke_report_release(&rep);
        return;
    }
    assert_true(took < 10);
    assert_true(rep.aborted || rep.failed > 0);
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
    char *plugin = cf_asprintf("%s/%s", CCLFORGE_BINARY_DIR, CF_SMOKE_MPI_PLUGIN_NAME);
    if (!ts_have("mpirun") || access(plugin, R_OK) != 0) {
        print_message("mpirun or the MPI plugin is missing: skipped\n");
        free(exe);
        free(plugin);
        skip();
    }
    struct cf_smoke_opts o;
    cf_smoke_opts_defaults(&o);
    o.backend = CF_BACKEND_MPI;
    o.nranks = 2;
    o.dtypes = (1u << CF_DT_COUNT) - 1;
    o.sweep.min_bytes = 64;
    o.sweep.max_bytes = 4096;
    o.sweep.step_factor = 8;
    o.iters = 2;
    o.warmup_iters = 1;
    o.self_exe = exe;
    char *const argv[] = { "smoke", "--backend", "mpi", "-d", "all", "-b", "64", "-e", "4096", "-f", "8",
                           "--iters", "2", "-w", "1", NULL };
    o.self_argv = argv;
    extern char **environ;
    o.envp = environ;
    struct collected c = { 0 };
    struct cf_smoke_report rep;
    cf_error err = CF_ERROR_INIT;
    if (cf_smoke_run(&o, collect, &c, &rep, &err) < 0)
        fail_msg("%s", cf_error_message(&err));
    /* 6 types x 3 sizes x (4 ops x 2 placements + sendrecv) */
    assert_int_equal(rep.nrows, 6 * 3 * 9);
    assert_int_equal(rep.failed, 0);
    assert_int_equal(rep.passed, 6 * 3 * 9);
    assert_int_equal(c.results, 2 * 6 * 3 * 9);
    for (size_t i = 0; i < rep.nrows; i++) {
        const struct cf_smoke_row *r = &rep.rows[i];
        assert_true(r->time_us > 0);
        assert_true(fabs(r->busbw - r->algbw * cf_smoke_op_info(r->op)->busbw_factor(2)) < 1e-9 * (1 + r->busbw));
    }
    assert_non_null(strstr(rep.lib_version, "MPI"));
    cf_smoke_report_release(&rep);
    free(exe);
    free(plugin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fp16_roundtrip_every_pattern),
        cmocka_unit_test(test_bf16_roundtrip_and_rounding),
        cmocka_unit_test(test_patterns_sum_exactly),
        cmocka_unit_test(test_busbw_factors_match_nccl_tests),
        cmocka_unit_test(test_sizes_and_counts),
        cmocka_unit_test(test_fault_switch_parsing),
        cmocka_unit_test(test_records_roundtrip_with_escapes),
        cmocka_unit_test(test_real_nccl_loads_and_reports_version),
        cmocka_unit_test(test_library_without_nccl_api_is_refused),
        cmocka_unit_test(test_cuda_runtime_loads_by_dlopen),
        cmocka_unit_test(test_nccl_run_without_gpu_fails_fast_with_nccls_words),
        cmocka_unit_test(test_mpi_run_two_ranks_through_the_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
