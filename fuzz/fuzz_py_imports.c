/* libFuzzer target for the import-statement reader (src/pkg/py_imports.c),
 * which reads every .py of a wheel `wheel verify` takes for a plugin's bridge
 * wheel: untrusted text. The input is read through its length from a copy
 * that ends at an unmapped page. Properties: every module is a dotted name
 * no longer than the input, every names span at most CF_PY_IMPORT_MAX_NAMES
 * bytes with no NUL, lines never decrease and never exceed the
 * input's line count, and resolving each module against a package either
 * gives the package climbed with the rest as written, or fails only when
 * it climbs above the top. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_guard.h"
#include "pkg/py_imports.h"

struct seen {
    const char *text;
    size_t size, last_line, lines;
};

static int check(void *ctx, const struct cf_py_import *imp)
{
    struct seen *s = ctx;
    if (!imp->module_len || imp->module_len > s->size)
        abort();
    for (size_t i = 0; i < imp->module_len; i++) /* a dotted name, read within its bounds */
        if (!imp->module[i] || !strchr("._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                                       imp->module[i]))
            abort();
    if (imp->names && (imp->names_len > CF_PY_IMPORT_MAX_NAMES || strlen(imp->names) != imp->names_len))
        abort();
    if (imp->line < s->last_line || imp->line > s->lines)
        abort();
    s->last_line = imp->line;
    char *abs = cf_py_import_resolve("a.b.c", imp->module, imp->module_len);
    size_t dots = 0;
    while (dots < imp->module_len && imp->module[dots] == '.')
        dots++;
    size_t tail = imp->module_len - dots, n = abs ? strlen(abs) : 0;
    if (abs && (!n || (dots && abs[0] != 'a') || n < tail || memcmp(abs + n - tail, imp->module + dots, tail)))
        abort(); /* a relative name is the package's, climbed, with the rest as written */
    if (!abs && (!dots || dots <= 3))
        abort(); /* only a climb above "a" fails */
    free(abs);
    if (imp->names)
        (void)cf_py_import_names_has(imp->names, imp->names_len, "make_nccl_backend");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_guarded g;
    if (fuzz_guard_copy(data, size, &g) < 0)
        return 0;
    struct seen s = { (const char *)g.data, size, 1, 1 };
    for (size_t i = 0; i < size; i++)
        s.lines += g.data[i] == '\n';
    cf_py_imports_scan(s.text, size, check, &s);
    fuzz_guard_release(&g);
    return 0;
}
