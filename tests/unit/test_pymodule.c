/* Extension-module names as CPython's import machinery takes them, and the
 * factory's name found in a module the compiler and linker made here. */
#include "testsupport.h"

#include <string.h>

#include "cclforge/pymodule.h"

static void test_names(void **state)
{
    (void)state;
    static const struct {
        const char *base, *leaf; /* leaf NULL: not an extension module's name */
        int kind;
    } cases[] = {
        { "_flagos_nccl.cpython-311-x86_64-linux-gnu.so", "_flagos_nccl", CF_PYMODULE_TAGGED },
        { "_C.cpython-312-aarch64-linux-gnu.so", "_C", CF_PYMODULE_TAGGED },
        { "m.cpython-311d-x86_64-linux-gnu.so", "m", CF_PYMODULE_TAGGED },
        { "m.cpython-311.so", "m", CF_PYMODULE_TAGGED },
        { "_ext.abi3.so", "_ext", CF_PYMODULE_TAGGED },
        { "plain.so", "plain", CF_PYMODULE_PLAIN },
        { "libnccl.so.2", NULL, 0 },
        { "libtorch_cuda.so", "libtorch_cuda", CF_PYMODULE_PLAIN }, /* importable by name: import takes any <leaf>.so */
        { "x.so.2", NULL, 0 },
        { "x.pypy39-pp73-x86_64-linux-gnu.so", NULL, 0 },
        { "9lives.so", NULL, 0 },
        { "a-b.so", NULL, 0 },
        { "m..so", NULL, 0 },
        { "m.cpython-3.so", NULL, 0 },
        { "m.cp311.so", NULL, 0 },
        { ".so", NULL, 0 },
        { "m.abi3.cpython-311.so", NULL, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char leaf[64] = "unchanged";
        int got = cf_pymodule_leaf(cases[i].base, leaf, sizeof leaf);
        if (got != (cases[i].leaf ? cases[i].kind : 0))
            fail_msg("%s: got %d", cases[i].base, got);
        if (got)
            assert_string_equal(leaf, cases[i].leaf);
    }
    char small[4];
    assert_int_equal(cf_pymodule_leaf("toolong.so", small, sizeof small), 0);
}

static int holds_in(const char *so, const char *s)
{
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_open(so, &elf, &err), 0);
    int got = cf_elf_holds_string(elf, s, &err);
    cf_elf_close(elf);
    return got;
}

static void test_factory_string(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    /* what pybind11's m.def("make_nccl_backend", ...) leaves: the name as a string literal */
    const char *bridge = ts_cc(dir, "bridge.so",
                               "const char *volatile name = \"make_nccl_backend\";\n"
                               "void *PyInit__m(void) { return (void *)name; }\n",
                               "-shared", "-fPIC", NULL);
    const char *other = ts_cc(dir, "other.so",
                              "const char *volatile name = \"make_nccl_backend_v2\";\n"
                              "void *PyInit__m(void) { return (void *)name; }\n",
                              "-shared", "-fPIC", NULL);
    assert_int_equal(holds_in(bridge, CF_BRIDGE_FACTORY), 1);
    assert_int_equal(holds_in(other, CF_BRIDGE_FACTORY), 0);
    ts_strip_section_headers(bridge);
    assert_int_equal(holds_in(bridge, CF_BRIDGE_FACTORY), 1);
}

static int teardown(void **state)
{
    (void)state;
    ts_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test_teardown(test_factory_string, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
