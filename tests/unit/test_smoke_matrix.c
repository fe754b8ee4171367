/* The host x host model of a smoke document (read by its strict reader): which hosts are bad (the run's
 * "bad_hosts"; nobody from an older document without it) and their hostlist,
 * the display order, the classes of cells, the pairs' own figures when rows are
 * missing, an inconclusive run naming nobody, and malformed documents refused
 * with the field named. */
#include "testsupport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/report.h"
#include "cclforge/strbuf.h"

/* a pairwise document over names[0..n): pair (i, j) slow when i or j is in `slow`,
 * failed when in `failed` (bit masks); rows only when `rows`; "bad_hosts" (what the
 * run's search named) the hosts of slow | failed */
static cJSON *pairwise_doc(const char *const *names, int n, unsigned slow, unsigned failed, int rows)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, "{\"schema\":\"cclforge.smoke/2\",\"ranks\":[");
    for (int i = 0; i < n; i++)
        cf_sb_addf(&sb, "%s{\"rank\":%d,\"hostname\":\"%s\"}", i ? "," : "", i, names[i]);
    struct strbuf g = STRBUF_INIT, r = STRBUF_INIT;
    int id = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            id++;
            int s = ((slow >> i) | (slow >> j)) & 1, f = ((failed >> i) | (failed >> j)) & 1;
            double bw = s ? 1.0 : 10.0 + i + j;
            cf_sb_addf(&g, "%s{\"id\":%d,\"label\":\"%s+%s\",\"nhosts\":2,\"avg_busbw_gbps\":%g,\"failed\":%s,"
                           "\"bad\":%s}",
                       id > 1 ? "," : "", id, names[i], names[j], bw, f ? "true" : "false", s || f ? "true" : "false");
            for (int k = 0; rows && k < 2; k++)
                cf_sb_addf(&r, "%s{\"op\":\"all_reduce\",\"bytes\":%d,\"busbw_gbps\":%g,\"ok\":%s,\"group\":%d,"
                               "\"rank_time_us\":[{\"rank\":%d},{\"rank\":%d}]}",
                           r.len ? "," : "", k ? 4096 : 1024, bw / (k ? 1 : 2), f ? "false" : "true", id, i, j);
        }
    cf_sb_adds(&sb, "],\"bad_hosts\":[");
    for (int i = 0, k = 0; i < n; i++)
        if (((slow | failed) >> i) & 1)
            cf_sb_addf(&sb, "%s\"%s\"", k++ ? "," : "", names[i]);
    cf_sb_addf(&sb, "],\"groups\":[%s],\"rows\":[%s]}", cf_sb_str(&g), cf_sb_str(&r));
    cJSON *doc = cJSON_Parse(cf_sb_str(&sb));
    assert_non_null(doc);
    cf_sb_release(&sb);
    cf_sb_release(&g);
    cf_sb_release(&r);
    return doc;
}

/* the model and its matrix, built from a document by cf_smoke_doc_open */
static void release(struct cf_smoke_doc *d, struct cf_pair_matrix *m)
{
    cf_pair_matrix_release(m);
    cf_smoke_doc_release(d);
}

static size_t ix_of(const struct cf_pair_matrix *m, const char *h)
{
    for (size_t i = 0; i < m->nhosts; i++)
        if (!strcmp(m->host[i], h))
            return i;
    fail_msg("no host %s", h);
    return 0;
}

static void test_one_slow_host(void **state)
{
    (void)state;
    const char *names[] = { "n10", "n2", "n1", "n03", "n4" };
    cJSON *doc = pairwise_doc(names, 5, 1u << 3, 0, 1);
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_true(m.pairwise);
    assert_int_equal(m.nbad, 1);
    assert_string_equal(m.exclude, "n03");
    /* bad first, then natural order */
    const char *order[] = { "n03", "n1", "n2", "n4", "n10" };
    for (int i = 0; i < 5; i++)
        assert_string_equal(m.host[i], order[i]);
    assert_int_equal(m.nsizes, 2);
    assert_true(m.size[m.shown].bytes == 4096);
    const struct cf_pair_size *s = &m.size[m.shown];
    for (size_t j = 1; j < 5; j++) {
        assert_int_equal(s->cell[0 * 5 + j].cls, CF_PAIR_SLOW);
        assert_int_equal(s->cell[j * 5 + 0].cls, CF_PAIR_SLOW);
    }
    assert_int_equal(s->cell[1 * 5 + 2].cls, CF_PAIR_OK);
    assert_true(fabs(s->cell[1 * 5 + 2].busbw - 13.0) < 1e-4); /* n1 + n2: 10 + 2 + 1 */
    struct cf_pair_ref w[3];
    assert_int_equal(cf_pair_matrix_worst(&m, m.shown, w, 3), 3);
    assert_int_equal(w[0].a, 0);
    assert_int_equal(m.npairs_tested, 10);
    release(&sd, &m);
    cJSON_Delete(doc);
}

static void test_two_bad_hosts_and_failed(void **state)
{
    (void)state;
    const char *names[] = { "n1", "n2", "n3", "n4", "n5", "n6" };
    cJSON *doc = pairwise_doc(names, 6, 1u << 1, 1u << 4, 1);
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_string_equal(m.exclude, "n[2,5]");
    size_t a = ix_of(&m, "n5"), b = ix_of(&m, "n1");
    assert_int_equal(m.size[m.shown].cell[a * 6 + b].cls, CF_PAIR_FAILED);
    release(&sd, &m);
    cJSON_Delete(doc);
}

static void test_missing_rows(void **state)
{
    (void)state;
    /* a launcher's table: only the groups of rank 0 have rows; here none */
    const char *names[] = { "a", "b", "c", "d" };
    cJSON *doc = pairwise_doc(names, 4, 1u << 2, 0, 0);
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_int_equal(m.nsizes, 1);
    assert_true(m.size[0].bytes < 0);
    assert_string_equal(m.size[0].op, "every test");
    assert_int_equal(m.npairs_tested, 6);
    assert_string_equal(m.exclude, "c");
    release(&sd, &m);
    cJSON_Delete(doc);
}

static void test_inconclusive_names_nobody(void **state)
{
    (void)state;
    const char *names[] = { "a", "b", "c" };
    cJSON *doc = pairwise_doc(names, 3, 1u << 0, 0, 1);
    cJSON_AddBoolToObject(doc, "conclusive", 0);
    cJSON_AddStringToObject(doc, "inconclusive_why", "spread too wide");
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_false(m.conclusive);
    assert_string_equal(m.inconclusive_why, "spread too wide");
    assert_int_equal(m.nbad, 0);
    assert_string_equal(m.exclude, "");
    struct strbuf html = STRBUF_INIT;
    cf_smoke_report_html(&sd, &m, "{}", &html);
    assert_non_null(strstr(cf_sb_str(&html), "<b>Inconclusive</b>: spread too wide"));
    assert_null(strstr(cf_sb_str(&html), "id=\"exclude\""));
    cf_sb_release(&html);
    release(&sd, &m);
    cJSON_Delete(doc);
}

static void test_names_with_plus(void **state)
{
    (void)state;
    /* labels split where both halves are known hosts; no rows to name members */
    const char *names[] = { "x+y", "x", "y+z" };
    cJSON *doc = pairwise_doc(names, 3, 1u << 0, 0, 0);
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_true(m.pairwise);
    assert_string_equal(m.exclude, "x+y");
    release(&sd, &m);
    cJSON_Delete(doc);
}

static void test_intra_bad_host(void **state)
{
    (void)state;
    cJSON *doc = cJSON_Parse("{\"schema\":\"cclforge.smoke/2\",\"ranks\":[{\"hostname\":\"a\"},{\"hostname\":\"b\"}],"
                             "\"bad_hosts\":[\"b\"],\"groups\":[{\"id\":1,\"label\":\"a\",\"nhosts\":1,\"bad\":false},"
                             "{\"id\":2,\"label\":\"b\",\"nhosts\":1,\"bad\":true}],"
                             "\"rows\":[{\"group\":1,\"rank_time_us\":[{\"rank\":0}]},"
                             "{\"group\":2,\"rank_time_us\":[{\"rank\":1}]}]}");
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_false(m.pairwise);
    assert_string_equal(m.exclude, "b");
    release(&sd, &m);
    cJSON_Delete(doc);
}

/* the model names the hosts the run named, and none of its own: a pair that is
 * slow without "bad_hosts" naming its hosts names nobody */
static void test_bad_hosts_from_the_run(void **state)
{
    (void)state;
    const char *names[] = { "a", "b", "c", "d" };
    cJSON *doc = pairwise_doc(names, 4, 1u << 2, 0, 1);
    cJSON_ReplaceItemInObject(doc, "bad_hosts", cJSON_CreateArray());
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_true(m.bad_hosts_known);
    assert_int_equal(m.nbad, 0);
    assert_string_equal(m.exclude, "");
    release(&sd, &m);
    /* an older document, without the field: nobody named, and the page says why */
    cJSON_DeleteItemFromObject(doc, "bad_hosts");
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_false(m.bad_hosts_known);
    assert_int_equal(m.nbad, 0);
    assert_string_equal(m.exclude, "");
    assert_true(m.host_bad[0] == 0 && !strcmp(m.host[0], "a"));
    struct strbuf html = STRBUF_INIT;
    cf_smoke_report_html(&sd, &m, "{}", &html);
    assert_non_null(strstr(cf_sb_str(&html), "this document predates <code>bad_hosts</code>"));
    assert_null(strstr(cf_sb_str(&html), "id=\"exclude\""));
    cf_sb_release(&html);
    release(&sd, &m);
    /* two named, in any order and once each: natural order, one hostlist */
    cJSON *list = cJSON_CreateArray();
    cJSON_AddItemToArray(list, cJSON_CreateString("d"));
    cJSON_AddItemToArray(list, cJSON_CreateString("b"));
    cJSON_AddItemToArray(list, cJSON_CreateString("d"));
    cJSON_AddItemToObject(doc, "bad_hosts", list);
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_int_equal(m.nbad, 2);
    assert_string_equal(m.exclude, "b,d");
    assert_true(!strcmp(m.host[0], "b") && !strcmp(m.host[1], "d") && m.host_bad[1] && !m.host_bad[2]);
    release(&sd, &m);
    cJSON_Delete(doc);
}

/* each pair against its path: the links of its hosts' ranks ("ranks[].links") */
static void test_capacity(void **state)
{
    (void)state;
    const char *names[] = { "a", "b", "c", "d", "e" };
    cJSON *doc = pairwise_doc(names, 5, 0, 0, 1);
    static const char *const links[] = {
        "[{\"name\":\"e0\",\"kind\":\"eth\",\"line_gbit\":10,\"capacity_gbps\":1.25,\"limit\":\"line\",\"net\":\"10.0.0.1/24\"}]",
        "[{\"name\":\"e0\",\"kind\":\"eth\",\"line_gbit\":10,\"capacity_gbps\":1.25,\"limit\":\"line\",\"net\":\"10.0.0.2/24\"}]",
        "[{\"name\":\"e0\",\"kind\":\"eth\",\"line_gbit\":10,\"capacity_gbps\":1.25,\"limit\":\"line\",\"net\":\"10.0.0.3/24\"}]",
        "[{\"name\":\"e1\",\"kind\":\"eth\",\"line_gbit\":1,\"capacity_gbps\":0.125,\"limit\":\"line\",\"net\":\"10.0.0.4/24\"}]",
        NULL, /* e recorded none: its pairs are against the median */
    };
    cJSON *ranks = cJSON_GetObjectItem(doc, "ranks");
    for (int i = 0; i < 5; i++)
        if (links[i])
            cJSON_AddItemToObject(cJSON_GetArrayItem(ranks, i), "links", cJSON_Parse(links[i]));
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    size_t a = ix_of(&m, "a"), b = ix_of(&m, "b"), d = ix_of(&m, "d"), e = ix_of(&m, "e");
    assert_true(fabs(cf_pair_matrix_capacity(&m, a, b, NULL) - 1.25) < 1e-6);
    assert_true(fabs(cf_pair_matrix_capacity(&m, d, a, NULL) - 0.125) < 1e-6); /* the slower end */
    assert_true(cf_pair_matrix_capacity(&m, a, e, NULL) == 0);
    struct strbuf w = STRBUF_INIT;
    cf_pair_matrix_capacity(&m, a, b, &w);
    assert_string_equal(cf_sb_str(&w), "e0 10 Gb/s \xe2\x86\x94 e0 10 Gb/s on the network 10.0.0.0/24 both hosts share");
    cf_sb_release(&w);
    /* a share as the page and the terminal write it */
    static const struct { double share; const char *text; } shares[] = {
        { 0.42, "42 %" }, { 0.00073, "0.073 %" }, { 0, "0 %" }, { 1.5, "150 %" }, { 0.0099, "0.99 %" },
    };
    for (size_t i = 0; i < sizeof shares / sizeof *shares; i++) {
        char text[32];
        cf_pair_share_text(shares[i].share, text, sizeof text);
        assert_string_equal(text, shares[i].text);
    }
    struct strbuf html = STRBUF_INIT;
    cf_smoke_report_html(&sd, &m, "{}", &html);
    assert_non_null(strstr(cf_sb_str(&html), "Capacities: 1.25 GB/s (3 pairs), 0.125 GB/s (3 pairs)."));
    assert_non_null(strstr(cf_sb_str(&html), "The 4 pairs whose capacity is unknown are given against the median pair"));
    assert_non_null(strstr(cf_sb_str(&html), "data-capacity=\"0.125\""));
    cf_sb_release(&html);
    release(&sd, &m);
    cJSON_Delete(doc);
}

/* groups of other patterns: within a host against its GPUs' slowest link, across
 * hosts against the slowest pair of them; a group whose hosts the rows do not tell has none */
static void test_group_capacity(void **state)
{
    (void)state;
    const char *text =
        "{\"schema\":\"cclforge.smoke/2\",\"ranks\":["
        "{\"rank\":0,\"hostname\":\"a\",\"links\":[{\"name\":\"0000:03:00.0\",\"kind\":\"nvlink\",\"line_gbit\":3600,"
        "\"capacity_gbps\":450,\"limit\":\"line\"},{\"name\":\"e0\",\"kind\":\"eth\",\"line_gbit\":100,"
        "\"capacity_gbps\":12.5,\"limit\":\"line\",\"net\":\"10.0.0.1/24\"}]},"
        "{\"rank\":1,\"hostname\":\"a\",\"links\":[{\"name\":\"0000:04:00.0\",\"kind\":\"nvlink\",\"line_gbit\":1800,"
        "\"capacity_gbps\":225,\"limit\":\"line\"},{\"name\":\"e0\",\"kind\":\"eth\",\"line_gbit\":100,"
        "\"capacity_gbps\":12.5,\"limit\":\"line\",\"net\":\"10.0.0.1/24\"}]},"
        "{\"rank\":2,\"hostname\":\"b\",\"links\":[{\"name\":\"0000:03:00.0\",\"kind\":\"pcie\",\"line_gbit\":252,"
        "\"capacity_gbps\":31.5,\"limit\":\"line\"},{\"name\":\"e0\",\"kind\":\"eth\",\"line_gbit\":25,"
        "\"capacity_gbps\":3.125,\"limit\":\"line\",\"net\":\"10.0.0.2/24\"}]},"
        "{\"rank\":3,\"hostname\":\"b\"}],"
        "\"groups\":[{\"id\":1,\"label\":\"a\",\"nhosts\":1,\"avg_busbw_gbps\":180},"
        "{\"id\":2,\"label\":\"b\",\"nhosts\":1,\"avg_busbw_gbps\":20},"
        "{\"id\":3,\"label\":\"a+b (local rank 0 of each)\",\"nhosts\":2,\"avg_busbw_gbps\":3},"
        "{\"id\":4,\"label\":\"a+b (local rank 1 of each)\",\"nhosts\":2,\"avg_busbw_gbps\":3}],"
        "\"rows\":[{\"op\":\"all_reduce\",\"bytes\":1024,\"busbw_gbps\":180,\"group\":1,"
        "\"rank_time_us\":[{\"rank\":0},{\"rank\":1}]},"
        "{\"op\":\"all_reduce\",\"bytes\":1024,\"busbw_gbps\":20,\"group\":2,"
        "\"rank_time_us\":[{\"rank\":2},{\"rank\":3}]},"
        "{\"op\":\"all_reduce\",\"bytes\":1024,\"busbw_gbps\":3,\"group\":3,"
        "\"rank_time_us\":[{\"rank\":0},{\"rank\":2}]}]}";
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    struct cf_smoke_doc sd;
    struct cf_pair_matrix m;
    assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
    assert_false(m.pairwise);
    assert_int_equal(m.ngroups, 4);
    assert_non_null(m.group_capacity);
    assert_true(fabs(m.group_capacity[0] - 225) < 1e-3); /* a's slower GPU */
    assert_true(fabs(m.group_capacity[1] - 31.5) < 1e-3); /* b: its one GPU that said, over PCIe */
    assert_true(fabs(m.group_capacity[2] - 3.125) < 1e-3); /* a <-> b: b's 25 Gb/s end */
    assert_true(m.group_capacity[3] == 0); /* no row tells group 4's hosts */
    assert_int_equal(m.group_example_ix, 0);
    assert_string_equal(m.group_example, "nvlink of GPU 0000:04:00.0, 225 GB/s, the slowest of 2 GPUs' links");
    struct strbuf html = STRBUF_INIT;
    cf_smoke_report_html(&sd, &m, "{}", &html);
    assert_non_null(strstr(cf_sb_str(&html), "data-capacity=\"225\" data-of-capacity=\"0.8\""));
    assert_non_null(strstr(cf_sb_str(&html), "data-capacity=\"3.125\" data-of-capacity=\"0.96\""));
    assert_non_null(strstr(cf_sb_str(&html), "For example, group a: nvlink of GPU 0000:04:00.0"));
    cf_sb_release(&html);
    release(&sd, &m);
    cJSON_Delete(doc);
}

/* two ranks on a host of a direct mesh (DGX-1V: GPU0 and GPU1 share one NVLink of six;
 * GPU0 and GPU5 none): the group is against the links between its GPUs, not each
 * one's six; with no direct link, against nothing */
static void test_group_capacity_peers(void **state)
{
    (void)state;
    static const char *const pairs[][2] = { { "0000:07:00.0", "25" }, { "0000:8a:00.0", "0" } };
    for (size_t t = 0; t < 2; t++) {
        char *text = cf_asprintf(
            "{\"schema\":\"cclforge.smoke/2\",\"ranks\":["
            "{\"rank\":0,\"hostname\":\"a\",\"links\":["
            "{\"name\":\"0000:03:00.0\",\"kind\":\"nvlink\",\"line_gbit\":1200,\"capacity_gbps\":150,\"limit\":\"line\"},"
            "{\"name\":\"0000:03:00.0\",\"kind\":\"nvlink\",\"line_gbit\":200,\"capacity_gbps\":25,\"limit\":\"line\","
            "\"peer\":\"0000:07:00.0\"},"
            "{\"name\":\"0000:03:00.0\",\"kind\":\"nvlink\",\"line_gbit\":400,\"capacity_gbps\":50,\"limit\":\"line\","
            "\"peer\":\"0000:0b:00.0\"}]},"
            "{\"rank\":1,\"hostname\":\"a\",\"links\":["
            "{\"name\":\"%s\",\"kind\":\"nvlink\",\"line_gbit\":1200,\"capacity_gbps\":150,\"limit\":\"line\"},"
            "{\"name\":\"%s\",\"kind\":\"nvlink\",\"line_gbit\":200,\"capacity_gbps\":25,\"limit\":\"line\","
            "\"peer\":\"0000:03:00.0\"}]}],"
            "\"groups\":[{\"id\":1,\"label\":\"a\",\"nhosts\":1,\"avg_busbw_gbps\":20}],"
            "\"rows\":[{\"op\":\"all_reduce\",\"bytes\":1024,\"busbw_gbps\":20,\"group\":1,"
            "\"rank_time_us\":[{\"rank\":0},{\"rank\":1}]}]}",
            pairs[t][0], pairs[t][0]);
        cJSON *doc = cJSON_Parse(text);
        free(text);
        assert_non_null(doc);
        struct cf_smoke_doc sd;
        struct cf_pair_matrix m;
        assert_int_equal(cf_smoke_doc_open(doc, &sd, &m, NULL), 0);
        assert_int_equal(m.ngroups, 1);
        assert_true(fabs(m.group_capacity[0] - atof(pairs[t][1])) < 1e-3);
        if (t == 0)
            assert_string_equal(m.group_example,
                                "nvlink of GPU 0000:03:00.0 to the others, 25 GB/s, the slowest of 2 GPUs' links");
        else
            assert_null(m.group_example);
        release(&sd, &m);
        cJSON_Delete(doc);
    }
}

static void test_malformed(void **state)
{
    (void)state;
    static const struct { const char *doc, *says; } cases[] = {
        { "{\"schema\":\"cclforge.doctor/1\"}", "not a cclforge smoke document" },
        { "[1]", "not a cclforge smoke document" },
        { "{\"schema\":\"cclforge.smoke/2\",\"ranks\":{}}", "\"ranks\" is not an array" },
        { "{\"schema\":\"cclforge.smoke/2\",\"ranks\":[{\"hostname\":3}]}", "hostname" },
        { "{\"schema\":\"cclforge.smoke/2\",\"groups\":[{\"id\":\"1\"}]}", "group" },
        { "{\"schema\":\"cclforge.smoke/2\",\"groups\":[{\"id\":1,\"label\":\"a+b\",\"nhosts\":2}],"
          "\"ranks\":[{\"hostname\":\"a\"},{\"hostname\":\"b\"}],\"rows\":[{\"group\":1,\"bytes\":-5}]}",
          "out of range" },
        { "{\"schema\":\"cclforge.smoke/2\",\"conclusive\":\"no\"}", "\"conclusive\"" },
        { "{\"schema\":\"cclforge.smoke/2\",\"bad_hosts\":\"a\"}", "\"bad_hosts\" is not an array" },
        { "{\"schema\":\"cclforge.smoke/2\",\"ranks\":[{\"hostname\":\"a\"}],\"bad_hosts\":[1]}",
          "other than a host name" },
        { "{\"schema\":\"cclforge.smoke/2\",\"ranks\":[{\"hostname\":\"a\"}],\"bad_hosts\":[\"z\"]}",
          "no rank ran on" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *doc = cJSON_Parse(cases[i].doc);
        struct cf_smoke_doc sd;
        struct cf_pair_matrix m;
        cf_error err = CF_ERROR_INIT;
        if (cf_smoke_doc_open(doc, &sd, &m, &err) == 0)
            fail_msg("case %zu accepted", i);
        if (!strstr(cf_error_message(&err), cases[i].says))
            fail_msg("case %zu: %s", i, cf_error_message(&err));
        cf_error_clear(&err);
        cJSON_Delete(doc);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_slow_host),          cmocka_unit_test(test_two_bad_hosts_and_failed),
        cmocka_unit_test(test_missing_rows),           cmocka_unit_test(test_inconclusive_names_nobody),
        cmocka_unit_test(test_names_with_plus),        cmocka_unit_test(test_intra_bad_host),
        cmocka_unit_test(test_bad_hosts_from_the_run),
        cmocka_unit_test(test_capacity),               cmocka_unit_test(test_group_capacity),
        cmocka_unit_test(test_group_capacity_peers),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
