/* The import statements of Python source, read as text (never run): what
 * `wheel verify` needs to tell where a package's own code looks for its
 * extension modules. A line-level reader, not a parser: a statement inside
 * a string literal is read as one. Internal to src/pkg. */
#ifndef CCLFORGE_PKG_PY_IMPORTS_H
#define CCLFORGE_PKG_PY_IMPORTS_H

#include <stddef.h>

/* One module an import statement names: `import a.b` gives "a.b" with no
 * names; `from .x import y, z` gives ".x" with names "y, z" (as written,
 * parentheses, comments and line breaks dropped). line is 1-based. Both
 * point into the text or the reader's own copy, valid during the call only. */
struct cf_py_import {
    const char *module;
    size_t module_len;
    const char *names; /* NULL for a plain `import` */
    size_t names_len;
    size_t line;
};

/* Calls fn for each module each import statement of text[len] names, in
 * order; stops early when fn returns non-zero. A statement's names are read
 * up to CF_PY_IMPORT_MAX_NAMES bytes. */
#define CF_PY_IMPORT_MAX_NAMES 4096
void cf_py_imports_scan(const char *text, size_t len, int (*fn)(void *ctx, const struct cf_py_import *imp), void *ctx);

/* 1 when the comma-separated names ("a as b, make_nccl_backend") import `name` itself. */
int cf_py_import_names_has(const char *names, size_t len, const char *name);

/* The absolute dotted module of `module` (".x", "..y.z", "a.b") written in the
 * file whose package is `package` ("pkg.sub", "" at the top); NULL when it
 * climbs above the top. Caller frees. */
char *cf_py_import_resolve(const char *package, const char *module, size_t module_len);

#endif
