/* libFuzzer target for the RPATH lint (RPATH/RUNPATH strings come from
 * untrusted files): any ELF bytes either fail to open or lint into findings
 * that each carry their kind's severity, a tag and a message; with and
 * without a package root. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/rpath_lint.h"
#include "fuzz_guard.h"

static void check(const struct cf_rpath_lint *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct cf_rpath_finding *f = &l->findings[i];
        if ((unsigned)f->kind >= CF_RPATH_KIND_COUNT || f->severity != cf_rpath_kind_severity(f->kind) || !f->tag ||
            !f->entry || !f->message || !*f->message || !cf_rpath_kind_name(f->kind))
            abort();
        if (strcmp(f->tag, "RPATH") && strcmp(f->tag, "RUNPATH"))
            abort();
    }
}

static void fuzz_one(const uint8_t *data, size_t size)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, size, "fuzz-input", &elf, &err) != 0) {
        cf_error_clear(&err);
        return;
    }
    static const struct cf_rpath_lint_opts with_tree = { "/nonexistent-pkg", "/nonexistent-pkg/lib", "lib64",
                                                         "x86_64", "/nonexistent-sysroot" };
    const struct cf_rpath_lint_opts *opts[] = { NULL, &with_tree };
    for (size_t i = 0; i < 2; i++) {
        struct cf_rpath_lint l = { 0 };
        if (cf_rpath_lint(elf, opts[i], &l, &err) == 0)
            check(&l);
        cf_error_clear(&err);
        cf_rpath_lint_release(&l);
    }
    cf_elf_close(elf);
}

FUZZ_GUARDED_TARGET(fuzz_one)
