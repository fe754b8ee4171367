/* Slurm hostlists as `scontrol show hostlist` writes them: fixed cases (each
 * checked against scontrol), then random lists compared with scontrol itself
 * when it is installed (a private slurm.conf: no controller is asked), and the
 * natural order bad hosts are sorted in. */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/hostlist.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

static char *compress_list(const char *list)
{
    struct strvec sv = STRVEC_INIT;
    cf_strvec_split(&sv, list, ",", 0);
    char *s = cf_hostlist_compress((const char *const *)sv.v, sv.n);
    cf_strvec_clear(&sv);
    return s;
}

static void test_cases(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } cases[] = {
        { "n3,n1,n2", "n[3,1-2]" },
        { "n1,n1", "n[1,1]" },
        { "n1,n01", "n[1,01]" },
        { "n01,n02,n1", "n[01-02,1]" },
        { "n9,n10,n11", "n[9-11]" },
        { "n09,n10", "n[09-10]" },
        { "n1,m1,n2", "n1,m1,n2" },
        { "a,b,a1,a2", "a,b,a[1-2]" },
        { "rack03-node17,rack03-node18,rack04-node01", "rack03-node[17-18],rack04-node01" },
        { "n1,n2,m3,n3", "n[1-2],m3,n3" },
        { "n0,n00,n000", "n[0,00,000]" },
        { "n99,n100", "n[99-100]" },
        { "n001,n002,n1000", "n[001-002,1000]" },
        { "foo", "foo" },
        { "n-1,n-2", "n-[1-2]" },
        { "n007,n008,n010", "n[007-008,010]" },
        { "123,124", "[123-124]" },
        { "n12345678901,n12345678902", "n[12345678901-12345678902]" },
        { "n01,n1,n2", "n[01,1-2]" },
        { "n1,n02,n3", "n[1,02,3]" },
        { "n9,n010", "n[9,010]" },
        { "n010,n011,n12", "n[010-011,12]" },
        { "n0,n1", "n[0-1]" },
        { "n,n1", "n,n1" },
        { "n1,n2,n1", "n[1-2,1]" },
        { "", "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = compress_list(cases[i].in);
        if (strcmp(got, cases[i].out))
            fail_msg("%s: got %s, scontrol writes %s", cases[i].in, got, cases[i].out);
        free(got);
    }
}

/* scontrol's answer for list, or NULL when it cannot give one here */
static char *scontrol(const char *conf, const char *list)
{
    const char *argv[] = { "scontrol", "show", "hostlist", list, NULL };
    char *env = cf_asprintf("SLURM_CONF=%s", conf);
    const char *env_set[] = { env, NULL };
    struct cf_spawn_opts o = cf_spawn_probe_opts(20);
    o.env_set = env_set;
    o.capture_stdout = 1;
    struct cf_spawn_result r = { 0 };
    char *out = NULL;
    if (cf_spawn_run(argv, &o, &r, NULL) == 0 && cf_spawn_ok(&r)) {
        cf_sb_rtrim(&r.out);
        out = cf_strdup(cf_sb_str(&r.out));
    }
    cf_spawn_result_release(&r);
    free(env);
    return out;
}

static void test_against_scontrol(void **state)
{
    (void)state;
    if (!ts_have("scontrol"))
        skip();
    char *dir = ts_tmpdir();
    char *conf = ts_write(dir, "slurm.conf", "ClusterName=t\nSlurmctldHost=localhost\nNodeName=n[1-2] CPUs=1\n"
                                             "PartitionName=p Nodes=n[1-2]\n");
    char *probe = scontrol(conf, "n1,n2");
    if (!probe || strcmp(probe, "n[1-2]")) {
        free(probe);
        skip();
    }
    free(probe);
    static const char *const prefixes[] = { "n", "node", "rack1-n", "r0", "" , "x-" };
    static const char *const widths[] = { "%d", "%02d", "%03d" };
    unsigned seed = 4242;
    for (int t = 0; t < 60; t++) {
        struct strbuf list = STRBUF_INIT;
        int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
        int v = (int)((seed >> 8) % 20);
        for (int k = 0; k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = seed >> 16;
            const char *p = prefixes[r % 6 < 3 ? 0 : r % 6];
            v = r % 4 ? v + 1 : (int)(r % 130); /* mostly counting up, now and then a jump */
            if (list.len)
                cf_sb_addc(&list, ',');
            if (!p[0] && v == 0)
                v = 1;
            cf_sb_adds(&list, p);
            cf_sb_addf(&list, widths[(r >> 4) % 3], v);
        }
        char *want = scontrol(conf, cf_sb_str(&list));
        char *got = compress_list(cf_sb_str(&list));
        if (!want || strcmp(got, want))
            fail_msg("%s: got %s, scontrol writes %s", cf_sb_str(&list), got, want ? want : "(nothing)");
        free(want);
        free(got);
        cf_sb_release(&list);
    }
}

static void test_natural_order(void **state)
{
    (void)state;
    const char *names[] = { "n10", "n2", "rack2-n1", "n02", "rack10-n1", "n1", "m5" };
    qsort(names, 7, sizeof *names, cf_hostname_natural_ptr_cmp);
    const char *want[] = { "m5", "n1", "n2", "n02", "n10", "rack2-n1", "rack10-n1" };
    for (int i = 0; i < 7; i++)
        assert_string_equal(names[i], want[i]);
    char *s = cf_hostlist_compress(names, 5);
    assert_string_equal(s, "m5,n[1-2,02,10]");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_against_scontrol),
        cmocka_unit_test(test_natural_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
