/* The Flight Recorder's variables by torch version (src/doctor/fr_env.c):
 * torch 2.15 is given the TORCH_FR_* names, an older or unknown torch the
 * TORCH_NCCL_* alias; an environment leaves dumps when the buffer and the
 * dump switch are set (either name) and not 0, or unset with torch 2.15;
 * doctor's note only for a GPU torch found here. */
#include "testsupport.h"

#include <string.h>

#include "cclforge/doctor.h"
#include "cclforge/fr_env.h"
#include "cclforge/survey.h"

static void test_names(void **state)
{
    (void)state;
    size_t n;
    const struct cf_fr_var *v = cf_fr_vars(&n);
    assert_true(n >= 3);
    assert_string_equal(cf_fr_var_name(&v[0], "2.15.0+cpu"), "TORCH_FR_BUFFER_SIZE");
    assert_string_equal(cf_fr_var_name(&v[0], "2.16"), "TORCH_FR_BUFFER_SIZE");
    assert_string_equal(cf_fr_var_name(&v[0], "2.4.1"), "TORCH_NCCL_TRACE_BUFFER_SIZE");
    assert_string_equal(cf_fr_var_name(&v[0], NULL), "TORCH_NCCL_TRACE_BUFFER_SIZE");
    assert_string_equal(cf_fr_var_name(&v[2], "2.15.0"), "TORCH_FR_DUMP_TEMP_FILE");
    assert_string_equal(cf_fr_var_name(&v[2], "1.13"), "TORCH_NCCL_DEBUG_INFO_TEMP_FILE");
}

static int leaves(char **envp, const char *torch, size_t *missing)
{
    struct strvec m = STRVEC_INIT;
    int yes = cf_fr_env_leaves_dumps(envp, torch, &m);
    *missing = m.n;
    cf_strvec_clear(&m);
    return yes;
}

static void test_leaves_dumps(void **state)
{
    (void)state;
    size_t missing;
    char *none[] = { NULL };
    assert_true(leaves(none, "2.15.0", &missing)); /* 2.15's defaults */
    assert_false(leaves(none, "2.4.1", &missing));
    assert_int_equal(missing, 2);
    assert_false(leaves(none, NULL, &missing));
    char *alias[] = { "TORCH_NCCL_TRACE_BUFFER_SIZE=2000", "TORCH_NCCL_DUMP_ON_TIMEOUT=1", NULL };
    assert_true(leaves(alias, "2.4.1", &missing));
    assert_true(leaves(alias, "2.15.0", &missing)); /* 2.15 reads the alias too */
    char *off[] = { "TORCH_FR_BUFFER_SIZE=0", NULL };
    assert_false(leaves(off, "2.15.0", &missing));
    assert_int_equal(missing, 1);
    char *prefix[] = { "TORCH_FR_BUFFER_SIZEX=1", "TORCH_FR_BUFFER_SIZE", NULL };
    assert_false(leaves(prefix, "2.4", &missing)); /* a longer name or no '=' is not the variable */
}

static void test_doctor_note(void **state)
{
    (void)state;
    struct cf_libtorch t;
    memset(&t, 0, sizeof t);
    t.version = "2.4.1+cu124";
    t.root = "/opt/torch";
    t.flavour = CF_TORCH_CUDA;
    struct cf_survey s;
    memset(&s, 0, sizeof s);
    s.torches = &t;
    s.n_torches = 1;
    char *none[] = { NULL };
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_fr_env_note(&s, none, &f);
    assert_int_equal(f.n, 1);
    assert_string_equal(f.v[0].id, "no-flight-recorder-dumps");
    assert_int_equal(f.v[0].severity, CF_SEV_INFO);
    assert_non_null(strstr(f.v[0].remedy, "TORCH_NCCL_TRACE_BUFFER_SIZE=2000"));
    cf_findings_release(&f);
    t.flavour = CF_TORCH_CPU; /* gloo only: no note */
    cf_doctor_fr_env_note(&s, none, &f);
    assert_int_equal(f.n, 0);
    t.flavour = CF_TORCH_CUDA;
    s.injected[CF_SEC_LIBTORCH] = 1; /* another host's torch says nothing of this environment */
    cf_doctor_fr_env_note(&s, none, &f);
    assert_int_equal(f.n, 0);
    cf_findings_release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_leaves_dumps),
        cmocka_unit_test(test_doctor_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
