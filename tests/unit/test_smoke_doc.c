/* The smoke document's one home: the reader then the writer gives back the very
 * bytes `cclforge smoke --json` wrote (the documents under
 * tests/fixtures/documents/); a live run's model (events and report) writes the
 * document's fields in its order; the reader never invents a result (no
 * verdict reads "unknown") and refuses an impossible value naming its field. */
#include "testsupport.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/report.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/strbuf.h"

#define FIXTURES CCLFORGE_SOURCE_DIR "/tests/fixtures/documents"

static void test_fixtures_read_and_write_back_the_same_bytes(void **state)
{
    (void)state;
    DIR *dir = opendir(FIXTURES);
    assert_non_null(dir);
    struct dirent *e;
    int seen = 0;
    while ((e = readdir(dir))) {
        if (strncmp(e->d_name, "smoke_", 6) || !strstr(e->d_name, ".json"))
            continue;
        char *path = cf_asprintf("%s/%s", FIXTURES, e->d_name);
        struct strbuf text = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_read_file(path, 1 << 20, &text, &err), 0);
        cJSON *json = cJSON_ParseWithLength(text.buf, text.len);
        assert_non_null(json);
        struct cf_smoke_doc d;
        if (cf_smoke_doc_read(json, &d, &err) < 0)
            fail_msg("%s: %s", e->d_name, cf_error_message(&err));
        char *again = cf_smoke_doc_json(&d, 0);
        /* smoke prints the document and a newline */
        size_t at = 0;
        while (at < text.len && text.buf[at] == again[at])
            at++;
        if (at != text.len - 1 || again[at] || text.buf[at] != '\n')
            fail_msg("%s: the writer's bytes differ from the saved document's at byte %zu", e->d_name, at);
        free(again);
        /* and the page renders from the model */
        struct cf_pair_matrix m;
        assert_int_equal(cf_pair_matrix_build(&d, &m, NULL), 0);
        struct strbuf html = STRBUF_INIT;
        cf_smoke_report_html(&d, &m, text.buf, &html);
        assert_non_null(strstr(cf_sb_str(&html), "id=\"verdict\""));
        cf_sb_release(&html);
        cf_pair_matrix_release(&m);
        cf_smoke_doc_release(&d);
        cJSON_Delete(json);
        cf_sb_release(&text);
        free(path);
        seen++;
    }
    closedir(dir);
    assert_true(seen >= 3);
}

/* a live run: the events' rank-level records and the report, written in the document's order */
static void test_live_model_writes_the_document(void **state)
{
    (void)state;
    struct cf_smoke_doc d;
    cf_smoke_doc_init(&d);
    struct cf_smoke_event ev = { .kind = CF_EV_INFO, .rank = 0, .key = "hostname", .value = "a" };
    cf_smoke_doc_note(&d, &ev);
    ev.key = "nccl_warn";
    ev.value = "one";
    cf_smoke_doc_note(&d, &ev);
    ev.value = "two";
    cf_smoke_doc_note(&d, &ev);
    ev.key = "hostname"; /* set again: moves after the list */
    ev.value = "b";
    cf_smoke_doc_note(&d, &ev);
    struct cf_smoke_event res = { .kind = CF_EV_RESULT, .rank = 1, .local_rank = 1, .own_wrong = 0,
                                  .own_time_us = 2.5 };
    res.row = (struct cf_smoke_row){ .op = CF_OP_ALL_REDUCE, .dtype = CF_DT_FLOAT32, .redop = CF_RED_SUM, .root = -1,
                                     .bytes = 1024 };
    cf_smoke_doc_note(&d, &res);
    struct cf_smoke_event fail = { .kind = CF_EV_FAIL, .rank = 1, .local_rank = 1, .text = "died" };
    cf_smoke_doc_note(&d, &fail);

    struct cf_smoke_host hosts[2] = { { "a", "host memory", 10, NULL }, { "a", "host memory", 11, NULL } };
    double times[2] = { 2.0, 3.0 };
    int rank_of[2] = { 0, 1 };
    struct cf_smoke_row row = { .op = CF_OP_ALL_REDUCE, .dtype = CF_DT_FLOAT32, .redop = CF_RED_SUM, .root = -1,
                                .bytes = 1024, .count = 256, .time_us = 3, .algbw = 0.5, .busbw = 0.5, .wrong = 0,
                                .ok = 1, .nranks = 2, .slowest_rank = 1, .slowest_us = 3, .median_us = 2.5,
                                .rank_time_us = times, .rank_of = rank_of, .iters = 5, .busbw_spread = -1 };
    struct cf_smoke_report rep = { .role = CF_ROLE_SUPERVISOR, .launcher = "local", .backend = "mpi", .nranks = 2,
                                   .hosts = hosts, .rows = &row, .nrows = 1, .verdict = "ok: 1 test passed",
                                   .passed = 1, .avg_busbw = 0.5 };
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_of_run(&d, &rep, 1, &m, NULL), 0);
    char *text = cf_smoke_doc_json(&d, 0);
    cJSON *json = cJSON_Parse(text);
    assert_non_null(json);
    static const char *const keys[] = { "schema", "role", "backend", "launcher", "nranks", "lib_version",
                                        "lib_path", "mpi_abi", "mpi_chosen_by", "ok", "verdict", "conclusive",
                                        "bad_hosts", "passed", "failed", "aborted", "interrupted",
                                        "out_of_bounds", "avg_busbw_gbps", "skipped", "ranks", "rows", "groups",
                                        "network", "transports", "failures", "problems", "rank_info",
                                        "rank_results", "rank_failures", "exclude" };
    const cJSON *it = json->child;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++, it = it->next) {
        assert_non_null(it);
        assert_string_equal(it->string, keys[i]);
    }
    assert_null(it);
    const cJSON *info = cJSON_GetObjectItem(cJSON_GetObjectItem(json, "rank_info"), "0");
    assert_string_equal(info->child->string, "nccl_warn");
    assert_int_equal(cJSON_GetArraySize(info->child), 2);
    assert_string_equal(info->child->next->valuestring, "b");
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(json, "rows"), 0);
    assert_string_equal(cJSON_GetObjectItem(r0, "slowest_host")->valuestring, "a");
    assert_true(fabs(cJSON_GetObjectItem(r0, "slowest_vs_median")->valuedouble - 1.2) < 1e-12);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(json, "ok")));
    assert_string_equal(cJSON_GetObjectItem(json, "exclude")->valuestring, "");
    /* the reader takes it back whole */
    struct cf_smoke_doc back;
    assert_int_equal(cf_smoke_doc_read(json, &back, NULL), 0);
    char *again = cf_smoke_doc_json(&back, 0);
    assert_string_equal(again, text);
    free(again);
    cf_smoke_doc_release(&back);
    cJSON_Delete(json);
    free(text);
    cf_pair_matrix_release(&m);
    cf_smoke_doc_release(&d);
}

/* a saved document of two ranks, one row of the fields given */
static cJSON *doc_with(const char *head, const char *row)
{
    char *text = cf_asprintf("{\"schema\":\"cclforge.smoke/2\",\"role\":\"supervisor\",%s\"nranks\":2,"
                             "\"ranks\":[{\"rank\":0,\"hostname\":\"a\"},{\"rank\":1,\"hostname\":\"b\"}],"
                             "\"groups\":[],\"rows\":[{%s}]}",
                             head, row);
    cJSON *json = cJSON_Parse(text);
    free(text);
    assert_non_null(json);
    return json;
}

static void test_no_verdict_reads_unknown(void **state)
{
    (void)state;
    cJSON *json = doc_with("", "\"bytes\":1024,\"busbw_gbps\":1");
    struct cf_smoke_doc d;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(json, &d, &m, NULL), 0);
    assert_null(d.verdict);
    assert_int_equal(d.ok, -1);
    struct strbuf html = STRBUF_INIT;
    cf_smoke_report_html(&d, &m, "{}", &html);
    assert_non_null(strstr(cf_sb_str(&html), "<p class=\"verdict warning\" id=\"verdict\">unknown</p>"));
    assert_null(strstr(cf_sb_str(&html), "passed</p>"));
    cf_sb_release(&html);
    /* written back, the verdict stays unknown: null, never made up */
    char *text = cf_smoke_doc_json(&d, 0);
    assert_non_null(strstr(text, "\"verdict\":\tnull"));
    assert_non_null(strstr(text, "\"ok\":\tnull"));
    free(text);
    cf_pair_matrix_release(&m);
    cf_smoke_doc_release(&d);
    cJSON_Delete(json);
}

static void test_impossible_values_refused_by_name(void **state)
{
    (void)state;
    static const struct { const char *head, *row, *says; } cases[] = {
        { "\"verdict\":\"ok\",", "\"bytes\":-1", "\"rows[0].bytes\" is -1, out of range" },
        { "\"verdict\":\"ok\",", "\"bytes\":1024,\"busbw_gbps\":1e308", "\"rows[0].busbw_gbps\" is 1e+308, out of range" },
        { "\"verdict\":\"ok\",", "\"bytes\":1024,\"group\":99999999",
          "\"rows[0].group\" is 99999999: no such group" },
        { "\"verdict\":\"ok\",", "\"bytes\":1024,\"time_us\":-3", "\"rows[0].time_us\" is -3" },
        { "\"verdict\":\"ok\",", "\"bytes\":1.5", "\"rows[0].bytes\" is 1.5, not a whole number" },
        { "\"verdict\":\"ok\",", "\"bytes\":\"1K\"", "\"rows[0].bytes\" is not a number" },
        { "\"verdict\":\"ok\",", "\"bytes\":1024,\"slowest_rank\":7", "\"rows[0].slowest_rank\" is 7: no such rank" },
        { "\"verdict\":\"ok\",", "\"bytes\":1024,\"rank_time_us\":[{\"rank\":2,\"time_us\":1}]",
          "\"rows[0].rank_time_us[0].rank\" is 2: no such rank" },
        { "\"verdict\":\"ok\",", "\"bytes\":1024,\"op\":\"not_an_op\"", "\"rows[0].op\" is 'not_an_op'" },
        { "\"verdict\":7,", "\"bytes\":1024", "\"verdict\" is not a string" },
        { "\"ok\":\"yes\",", "\"bytes\":1024", "\"ok\" is not true or false" },
        { "\"avg_busbw_gbps\":2e6,", "\"bytes\":1024", "\"avg_busbw_gbps\" is 2e+06, out of range" },
        { "\"nranks\":3,", "\"bytes\":1024", "\"ranks\" lists 2 ranks, \"nranks\" says 3" },
        { "\"transports\":[{\"rank\":0,\"peer\":5}],", "\"bytes\":1024", "\"transports[0].peer\" is 5: no such rank" },
        { "\"bad_hosts\":[\"c\"],", "\"bytes\":1024", "\"bad_hosts[0]\" names a host that no rank ran on" },
        { "\"rank_info\":{\"9\":{}},", "\"bytes\":1024", "\"rank_info.9\": no such rank" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *json = doc_with(cases[i].head, cases[i].row);
        struct cf_smoke_doc d;
        cf_error err = CF_ERROR_INIT;
        if (cf_smoke_doc_read(json, &d, &err) == 0)
            fail_msg("case %zu accepted", i);
        assert_int_equal(err.kind, CF_ERR_FORMAT);
        if (!strstr(cf_error_message(&err), cases[i].says))
            fail_msg("case %zu: %s", i, cf_error_message(&err));
        cf_error_clear(&err);
        cJSON_Delete(json);
    }
}

/* past 2 MB the page embeds the model's slim form: one line, the per-test arrays named */
static void test_slim_form(void **state)
{
    (void)state;
    cJSON *json = doc_with("\"verdict\":\"ok\",\"exclude\":\"\",", "\"bytes\":1024");
    struct cf_smoke_doc d;
    assert_int_equal(cf_smoke_doc_read(json, &d, NULL), 0);
    char *slim = cf_smoke_doc_json(&d, CF_SMOKE_DOC_SLIM);
    assert_null(strchr(slim, '\n'));
    assert_null(strstr(slim, "\"rows\":"));
    assert_non_null(strstr(slim, "\"exclude\":\"\",\"left_out_of_report\":[\"rows\",\"groups\",\"transports\","
                                 "\"rank_info\",\"rank_results\",\"rank_failures\"]}"));
    free(slim);
    cf_smoke_doc_release(&d);
    cJSON_Delete(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_read_and_write_back_the_same_bytes),
        cmocka_unit_test(test_live_model_writes_the_document),
        cmocka_unit_test(test_no_verdict_reads_unknown),
        cmocka_unit_test(test_impossible_values_refused_by_name),
        cmocka_unit_test(test_slim_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
