/* Import statements read from Python source as text (src/pkg/py_imports.c):
 * what `wheel verify` takes for where a package's code imports its modules. */
#include "testsupport.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "pkg/py_imports.h"

static int collect(void *ctx, const struct cf_py_import *imp)
{
    struct strvec *out = ctx;
    cf_strvec_pushf(out, "%zu %.*s|%.*s", imp->line, (int)imp->module_len, imp->module,
                    imp->names ? (int)imp->names_len : 1, imp->names ? imp->names : "-");
    return 0;
}

static void test_statements(void **state)
{
    (void)state;
    static const char src[] = "\"\"\"doc\"\"\"\n"
                              "import torch.distributed  # noqa\n"
                              "try:\n"
                              "    from ._flagos_nccl import make_nccl_backend  # noqa: F401\n"
                              "except ImportError:\n"
                              "    pass\n"
                              "from .. import (a,\n"
                              "    b as c,  # why\n"
                              "    make_nccl_backend)\n"
                              "import os, x.y as z\n"
                              "from p import q, \\\n"
                              "  r\n"
                              "important = 1\n"
                              "fromage = 2\n"
                              "from";
    struct strvec got = STRVEC_INIT;
    cf_py_imports_scan(src, sizeof src - 1, collect, &got);
    assert_int_equal(got.n, 6);
    assert_string_equal(got.v[0], "2 torch.distributed|-");
    assert_string_equal(got.v[1], "4 ._flagos_nccl|make_nccl_backend  ");
    assert_string_equal(got.v[3], "10 os|-");
    assert_string_equal(got.v[4], "10 x.y|-");
    assert_true(strstr(got.v[2], "7 ..|") == got.v[2]);
    assert_true(strstr(got.v[5], "11 p|") == got.v[5]);
    const char *names = strchr(got.v[2], '|') + 1;
    assert_true(cf_py_import_names_has(names, strlen(names), "make_nccl_backend"));
    assert_true(cf_py_import_names_has(names, strlen(names), "b"));
    assert_false(cf_py_import_names_has(names, strlen(names), "c")); /* an alias is not what is imported */
    names = strchr(got.v[5], '|') + 1;
    assert_true(cf_py_import_names_has(names, strlen(names), "r"));
    cf_strvec_clear(&got);
}

static void test_resolve(void **state)
{
    (void)state;
    static const struct {
        const char *package, *module, *want;
    } cases[] = {
        { "torch_fl.comm._nccl_ext", "._flagos_nccl", "torch_fl.comm._nccl_ext._flagos_nccl" },
        { "torch_fl.comm._nccl_ext", "..x", "torch_fl.comm.x" },
        { "torch_fl.comm._nccl_ext", ".", "torch_fl.comm._nccl_ext" },
        { "torch_fl.comm._nccl_ext", "...", "torch_fl" },
        { "torch_fl", "..x", NULL },
        { "", ".x", NULL },
        { "a", "b.c", "b.c" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = cf_py_import_resolve(cases[i].package, cases[i].module, strlen(cases[i].module));
        if (!cases[i].want)
            assert_null(got);
        else
            assert_string_equal(got, cases[i].want);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_statements),
        cmocka_unit_test(test_resolve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
