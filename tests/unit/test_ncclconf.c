/* NCCL's configuration and the fabric rules: setEnvFile's line rules, the order of
 * the environment and the files, NCCL's interface/HCA lists, the parameter table,
 * NCCL's topology XML reader, the topology class of PCI paths, ACS in a config
 * space, Slurm hostlists, edit distance, and the real libnccl's own parameter names
 * against an independent oracle (objcopy + strings over its .rodata). */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib_params.h"
#include "cclforge/elf.h"
#include "cclforge/fabric.h"
#include "cclforge/fs.h"
#include "cclforge/launch_collect.h"
#include "cclforge/ncclconf.h"
#include "cclforge/textdist.h"

struct seen {
    char lines[16][128];
    int n;
};

static void record(void *ctx, unsigned line, const char *key, const char *value, unsigned flags)
{
    struct seen *s = ctx;
    if (s->n < 16)
        snprintf(s->lines[s->n++], sizeof s->lines[0], "%u|%.40s|%.40s|%u", line, key, value, flags);
}

static void test_conf_lines_as_setenvfile_reads_them(void **state)
{
    (void)state;
    static const char text[] = "# comment\nNCCL_A=1\nno equals\nNCCL_B = x \n=empty\nNCCL_C=v\r\nNCCL_D=a=b\nlast=1";
    struct seen s = { 0 };
    cf_nccl_conf_parse(text, sizeof text - 1, 0, record, &s);
    assert_int_equal(s.n, 6);
    assert_string_equal(s.lines[0], "2|NCCL_A|1|0");
    assert_string_equal(s.lines[1], "4|NCCL_B | x |0");
    assert_string_equal(s.lines[2], "5||empty|0");
    assert_string_equal(s.lines[3], "6|NCCL_C|v\r|1");
    assert_string_equal(s.lines[4], "7|NCCL_D|a=b|0");
    assert_string_equal(s.lines[5], "8|last|1|0");
    /* RCCL does not skip comments; a NUL ends the line's C string */
    struct seen r = { 0 };
    static const char text2[] = "#NCCL_X=1\nNCCL_Y\0=2\n";
    cf_nccl_conf_parse(text2, sizeof text2 - 1, 1, record, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.lines[0], "1|#NCCL_X|1|0");
}

static void test_environment_then_user_file_then_etc(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *home = cf_path_join(dir, "home");
    char *etc = cf_path_join(dir, "etc");
    assert_int_equal(cf_mkdir_p(home, 0755, NULL), 0);
    assert_int_equal(cf_mkdir_p(etc, 0755, NULL), 0);
    ts_write(home, ".nccl.conf", "NCCL_B=home\nNCCL_C=home\n");
    ts_write(etc, "nccl.conf", "NCCL_A=etc\nNCCL_B=etc\nNCCL_C=etc\nNCCL_D=etc\n");
    char *user = ts_write(dir, "user.conf", "NCCL_C=user\n");
    char *env[] = { "NCCL_A=env", "PATH=/bin", NULL };
    struct cf_nccl_config c;
    struct cf_nccl_config_inputs in = { "nccl", env, home, etc };
    cf_nccl_config_build(&in, &c);
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_A")->source, "environment");
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_B")->value, "home");
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_D")->value, "etc");
    assert_null(cf_nccl_config_get(&c, "PATH"));
    cf_nccl_config_release(&c);
    char *conf = cf_asprintf("NCCL_CONF_FILE=%s", user);
    char *env2[] = { conf, NULL };
    struct cf_nccl_config_inputs in2 = { "nccl", env2, home, etc };
    cf_nccl_config_build(&in2, &c);
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_C")->value, "user");
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_B")->value, "etc"); /* ~/.nccl.conf is not read */
    cf_nccl_config_release(&c);
    /* RCCL: ~/.rccl.conf and /etc/rccl.conf only */
    ts_write(etc, "rccl.conf", "RCCL_X=1\n");
    struct cf_nccl_config_inputs in3 = { "rccl", env2, home, etc };
    cf_nccl_config_build(&in3, &c);
    assert_non_null(cf_nccl_config_get(&c, "RCCL_X"));
    assert_null(cf_nccl_config_get(&c, "NCCL_C"));
    cf_nccl_config_release(&c);
    free(conf);
    free(home);
    free(etc);
    ts_cleanup();
}

/* What NCCL does silently, as notes of their own kind (checked against the
 * real libnccl by cli.doctor_fabric). */
static const struct cf_nccl_conf_note *note_of(const struct cf_nccl_config *c, const char *kind)
{
    for (size_t i = 0; i < c->n_notes; i++)
        if (!strcmp(c->notes[i].kind, kind))
            return &c->notes[i];
    return NULL;
}

static void test_what_nccl_does_silently(void **state)
{
    (void)state;
    /* setEnvFile's 1,024-byte buffers: names and values cut at 1,023 */
    struct strbuf line = STRBUF_INIT;
    for (int i = 0; i < 1100; i++)
        cf_sb_addc(&line, 'k');
    cf_sb_addc(&line, '=');
    for (int i = 0; i < 1023; i++)
        cf_sb_addc(&line, 'v');
    cf_sb_adds(&line, "\nNCCL_V=");
    for (int i = 0; i < 1024; i++)
        cf_sb_addc(&line, 'w');
    struct seen s = { 0 };
    cf_nccl_conf_parse(line.buf, line.len, 0, record, &s);
    assert_int_equal(s.n, 2);
    assert_string_equal(strrchr(s.lines[0], '|'), "|2"); /* the name only: a 1,023-byte value fits */
    assert_string_equal(strrchr(s.lines[1], '|'), "|4");

    char *dir = ts_tmpdir();
    char *home = cf_path_join(dir, "home");
    char *etc = cf_path_join(dir, "etc");
    char *other = cf_path_join(dir, "other");
    assert_int_equal(cf_mkdir_p(home, 0755, NULL), 0);
    assert_int_equal(cf_mkdir_p(etc, 0755, NULL), 0);
    assert_int_equal(cf_mkdir_p(other, 0755, NULL), 0);
    char *named = ts_write(dir, "named.conf", "NCCL_N=named\n");
    char *in_file = cf_asprintf("NCCL_CONF_FILE=%s\nNCCL_B=home\n", named);
    ts_write(home, ".nccl.conf", in_file);
    ts_write(other, ".nccl.conf", "NCCL_O=other\n");
    struct cf_nccl_config c;

    /* NCCL_CONF_FILE set in a file: set, not followed */
    char *env0[] = { NULL };
    struct cf_nccl_config_inputs in = { "nccl", env0, home, etc };
    cf_nccl_config_build(&in, &c);
    assert_non_null(note_of(&c, "conf-file-in-file"));
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_CONF_FILE")->value, named);
    assert_null(cf_nccl_config_get(&c, "NCCL_N"));
    assert_null(note_of(&c, "home"));
    cf_nccl_config_release(&c);

    /* a directory, and a missing file: nothing applied, ~/.nccl.conf skipped */
    char *dir_env = cf_asprintf("NCCL_CONF_FILE=%s", other);
    char *missing_env = cf_asprintf("NCCL_CONF_FILE=%s/absent", dir);
    char *const *envs[] = { (char *[]){ dir_env, NULL }, (char *[]){ missing_env, NULL } };
    for (int i = 0; i < 2; i++) {
        struct cf_nccl_config_inputs inx = { "nccl", envs[i], home, etc };
        cf_nccl_config_build(&inx, &c);
        const struct cf_nccl_conf_note *n = note_of(&c, "not-applied");
        assert_non_null(n);
        assert_non_null(strstr(n->text, i == 0 ? "the read fails (EISDIR)" : "does not exist"));
        assert_non_null(strstr(n->text, "does not read ~/.nccl.conf either"));
        assert_null(cf_nccl_config_get(&c, "NCCL_B"));
        assert_null(cf_nccl_config_get(&c, "NCCL_O"));
        assert_int_equal(c.files[0].problem == NULL, 1); /* a warning, not an unreadable file */
        cf_nccl_config_release(&c);
    }

    /* $HOME elsewhere: NCCL still reads the passwd home's file */
    char *home_env = cf_asprintf("HOME=%s/", other);
    char *env3[] = { home_env, NULL };
    struct cf_nccl_config_inputs in3 = { "nccl", env3, home, etc };
    cf_nccl_config_build(&in3, &c);
    const struct cf_nccl_conf_note *n = note_of(&c, "home");
    assert_non_null(n);
    assert_non_null(strstr(n->text, "other/.nccl.conf is not read"));
    assert_string_equal(cf_nccl_config_get(&c, "NCCL_B")->value, "home");
    assert_null(cf_nccl_config_get(&c, "NCCL_O"));
    cf_nccl_config_release(&c);
    char *same_env = cf_asprintf("HOME=%s//", home);
    char *env4[] = { same_env, NULL };
    struct cf_nccl_config_inputs in4 = { "nccl", env4, home, etc };
    cf_nccl_config_build(&in4, &c);
    assert_null(note_of(&c, "home")); /* the same directory, trailing slashes aside */
    cf_nccl_config_release(&c);

    free(same_env);
    free(home_env);
    free(dir_env);
    free(missing_env);
    free(in_file);
    free(other);
    free(home);
    free(etc);
    cf_sb_release(&line);
    ts_cleanup();
}

static void test_interface_lists_as_nccl_parses_them(void **state)
{
    (void)state;
    struct cf_nccl_if_list l;
    cf_nccl_if_list_parse("eth,ib0", 16, &l);
    assert_int_equal(l.n, 2);
    assert_true(cf_nccl_if_list_match(&l, "eth0", -1));
    assert_true(cf_nccl_if_list_match(&l, "ib0", -1));
    assert_false(cf_nccl_if_list_match(&l, "ib1", -1));
    cf_nccl_if_list_parse("=eth0", 16, &l);
    assert_true(cf_nccl_if_list_match(&l, "eth0", -1));
    assert_false(cf_nccl_if_list_match(&l, "eth01", -1));
    cf_nccl_if_list_parse("^docker,lo", 16, &l);
    assert_false(cf_nccl_if_list_match(&l, "lo", -1));
    assert_true(cf_nccl_if_list_match(&l, "eth0", -1));
    cf_nccl_if_list_parse("mlx5_0:1,,mlx5_1", 32, &l);
    assert_int_equal(l.n, 2);
    assert_true(cf_nccl_if_list_match(&l, "mlx5_0", 1));
    assert_false(cf_nccl_if_list_match(&l, "mlx5_0", 2));
    assert_true(cf_nccl_if_list_match(&l, "mlx5_1", 2));
    char big[200];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    cf_nccl_if_list_parse(big, 16, &l);
    assert_true(l.v[0].too_long);
}

static void test_param_table_is_sorted_and_classified(void **state)
{
    (void)state;
    assert_int_equal(cf_nccl_param_info("NCCL_DEBUG")->cls, CF_NCCL_PARAM_DEBUG);
    assert_true(cf_nccl_param_benign(cf_nccl_param_info("NCCL_DEBUG"), "warn"));
    assert_false(cf_nccl_param_benign(cf_nccl_param_info("NCCL_DEBUG"), "INFO"));
    assert_int_equal(cf_nccl_param_info("NCCL_SOCKET_IFNAME")->cls, CF_NCCL_PARAM_SYSTEM);
    assert_int_equal(cf_nccl_param_info("NCCL_HOME")->cls, CF_NCCL_PARAM_FOREIGN);
    assert_int_equal(cf_nccl_param_info("NCCL_LIB_DIR")->cls, CF_NCCL_PARAM_FOREIGN); /* bsearch order */
    assert_null(cf_nccl_param_info("NCCL_NOPE"));
    assert_true(cf_nccl_param_secret("NCCL_API_TOKEN"));
    assert_true(cf_nccl_param_secret("NCCL_SSH_KEY"));
    assert_false(cf_nccl_param_secret("NCCL_IB_PKEY"));
}

static void test_topology_xml_as_nccl_reads_it(void **state)
{
    (void)state;
    char why[256];
    static const char good[] = "<!-- x --><system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\"/>\n  </cpu>\n</system>\n";
    assert_int_equal(cf_nccl_topo_xml_check(good, sizeof good - 1, why, sizeof why), 0);
    static const char *const bad[] = { "<?xml version=\"1.0\"?><system/>", "<system>\n\t<cpu/>\n</system>",
                                       "<system><cpu></system>", "<system a=1/>", "<cpu/>", "<system>" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(cf_nccl_topo_xml_check(bad[i], strlen(bad[i]), why, sizeof why), -1);
}

static void test_pci_topology_classes(void **state)
{
    (void)state;
    struct strvec gpu = STRVEC_INIT, nic = STRVEC_INIT, far = STRVEC_INIT, deep = STRVEC_INIT, rp = STRVEC_INIT;
    cf_strvec_split(&gpu, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", "/", 0);
    cf_strvec_split(&nic, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", "/", 0);
    cf_strvec_split(&deep, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0/0000:06:00.0/0000:07:00.0", "/", 0);
    cf_strvec_split(&rp, "pci0000:00/0000:00:02.0/0000:08:00.0", "/", 0);
    cf_strvec_split(&far, "pci0000:80/0000:80:01.0/0000:81:00.0", "/", 0);
    assert_string_equal(cf_pci_topo_class(&gpu, 0, &nic, 0), "PIX");
    assert_string_equal(cf_pci_topo_class(&gpu, 0, &deep, 0), "PXB");
    assert_string_equal(cf_pci_topo_class(&gpu, 0, &rp, 0), "PHB");
    assert_string_equal(cf_pci_topo_class(&gpu, 0, &far, 0), "NODE");
    assert_string_equal(cf_pci_topo_class(&gpu, 0, &far, 1), "SYS");
    cf_strvec_clear(&gpu);
    cf_strvec_clear(&nic);
    cf_strvec_clear(&far);
    cf_strvec_clear(&deep);
    cf_strvec_clear(&rp);
}

static void test_acs_in_config_space(void **state)
{
    (void)state;
    unsigned char cfg[4096] = { 0 };
    unsigned ctrl = 0;
    assert_int_equal(cf_pci_acs_ctrl(cfg, 64, &ctrl), 0);   /* unprivileged read */
    assert_int_equal(cf_pci_acs_ctrl(cfg, 4096, &ctrl), -1); /* no capabilities */
    /* AER at 0x100 -> ACS at 0x148 */
    cfg[0x100] = 0x01; cfg[0x102] = 0x81; cfg[0x103] = 0x14; /* id 1, version 1, next 0x148 */
    cfg[0x148] = 0x0d; cfg[0x14a] = 0x01;                    /* ACS, last */
    cfg[0x14e] = 0x0c;
    assert_int_equal(cf_pci_acs_ctrl(cfg, 4096, &ctrl), 1);
    assert_int_equal(ctrl, 0x0c);
    cfg[0x14a] = 0x01; cfg[0x148] = 0x02; cfg[0x14b] = 0x10; /* a loop back to 0x100 */
    assert_int_equal(cf_pci_acs_ctrl(cfg, 4096, &ctrl), -1);
}

static void test_slurm_hostlists(void **state)
{
    (void)state;
    struct strvec v = STRVEC_INIT;
    assert_int_equal(cf_slurm_hostlist_expand("node[01-03,7],gpu-a,x[9]", 100, &v, NULL), 0);
    assert_int_equal(v.n, 6);
    assert_string_equal(v.v[0], "node01");
    assert_string_equal(v.v[2], "node03");
    assert_string_equal(v.v[3], "node7");
    assert_string_equal(v.v[4], "gpu-a");
    assert_string_equal(v.v[5], "x9");
    cf_strvec_clear(&v);
    static const char *const bad[] = { "node[1-", "node[3-1]", "a]b", "n[a-b]", "n[]" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_slurm_hostlist_expand(bad[i], 100, &v, &err), -1);
        cf_error_clear(&err);
        cf_strvec_clear(&v);
    }
    assert_int_equal(cf_slurm_hostlist_expand("n[1-999999999]", 10, &v, NULL), 0);
    assert_int_equal(v.n, 10); /* bounded */
    cf_strvec_clear(&v);
}

static void test_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(cf_edit_distance("NCCL_SOCKET_IFNAM", "NCCL_SOCKET_IFNAME", 3), 1);
    assert_int_equal(cf_edit_distance("NCCL_DEBGU", "NCCL_DEBUG", 3), 1); /* a transposition */
    assert_int_equal(cf_edit_distance("abc", "xyzxyzxyz", 2), 3);       /* capped */
    const char *names[] = { "NCCL_ALGO", "NCCL_PROTO", "NCCL_SOCKET_IFNAME" };
    assert_string_equal(cf_closest_name("NCCL_SOCKET_IFNAM", names, 3, 2), "NCCL_SOCKET_IFNAME");
    assert_null(cf_closest_name("NCCL_ZZZZZZZZ", names, 3, 2));
}

/* The real libnccl: its names read by cclforge == the oracle's. */
static void test_real_libnccl_parameter_names(void **state)
{
    (void)state;
    struct ts_nccl nccl;
    if (ts_find_nccl(&nccl) != 0 || !ts_have("objcopy") || !ts_have("strings")) {
        printf("# SKIP: no libnccl.so.2 with its nccl.h, or objcopy or strings absent\n");
        skip();
    }
    const char *lib = nccl.lib;
    char *dir = ts_tmpdir();
    char *ro = cf_path_join(dir, "rodata.bin");
    const char *oc[] = { "objcopy", "-O", "binary", "--only-section=.rodata", lib, ro, NULL };
    ts_run_ok(oc);
    char *cmd = cf_asprintf("strings -a -n 6 %s | grep -E '^[NR]CCL_[A-Z0-9_]+$' | sort -u > %s/oracle.txt", ro, dir);
    const char *sh[] = { "sh", "-c", cmd, NULL };
    ts_run_ok(sh);
    struct strbuf oracle = STRBUF_INIT;
    char *op = cf_path_join(dir, "oracle.txt");
    assert_int_equal(cf_read_file(op, 1 << 20, &oracle, NULL), 0);
    struct cf_elf *elf = NULL;
    assert_int_equal(cf_elf_open(lib, &elf, NULL), 0);
    struct cf_commlib_params p;
    assert_int_equal(cf_commlib_params_read(elf, &p, NULL), 0);
    struct strbuf mine = STRBUF_INIT;
    for (size_t i = 0; i < p.names.n; i++)
        cf_sb_addf(&mine, "%s\n", p.names.v[i]);
    assert_string_equal(cf_sb_str(&mine), cf_sb_str(&oracle));
    assert_true(cf_strvec_contains(&p.names, "NCCL_SOCKET_IFNAME"));
    int v[16];
    size_t nv = cf_commlib_plugin_versions(&p, "ncclNetPlugin_v", v, 16);
    assert_true(nv > 0 && v[0] >= v[nv - 1]);
    cf_commlib_params_release(&p);
    cf_elf_close(elf);
    cf_sb_release(&mine);
    cf_sb_release(&oracle);
    free(op);
    free(cmd);
    free(ro);
    ts_cleanup();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conf_lines_as_setenvfile_reads_them),
        cmocka_unit_test(test_environment_then_user_file_then_etc),
        cmocka_unit_test(test_what_nccl_does_silently),
        cmocka_unit_test(test_interface_lists_as_nccl_parses_them),
        cmocka_unit_test(test_param_table_is_sorted_and_classified),
        cmocka_unit_test(test_topology_xml_as_nccl_reads_it),
        cmocka_unit_test(test_pci_topology_classes),
        cmocka_unit_test(test_acs_in_config_space),
        cmocka_unit_test(test_slurm_hostlists),
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_real_libnccl_parameter_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
