/* RPATH / RUNPATH lint for one ELF object: entries that make an object depend
 * on where it is installed or on the current directory, directories that do not
 * exist, and (with `within`) entries that leave a package tree. */
#ifndef CCLFORGE_RPATH_LINT_H
#define CCLFORGE_RPATH_LINT_H

#include <stddef.h>

#include "cclforge/elf.h"
#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_rpath_finding_kind {
    CF_RPATH_ABSOLUTE,      /* "/opt/x": works only where that directory is */
    CF_RPATH_RELATIVE,      /* "lib": the loader resolves it against the CWD */
    CF_RPATH_EMPTY,         /* "" (from "a::b" or a trailing ':'): the CWD */
    CF_RPATH_MISSING_DIR,   /* the expanded directory does not exist */
    CF_RPATH_BOTH_TAGS,     /* DT_RPATH and DT_RUNPATH: RUNPATH wins, RPATH is ignored */
    CF_RPATH_OUTSIDE_TREE,  /* resolves outside opts.within */
    CF_RPATH_KIND_COUNT
};

enum cf_lint_severity { CF_LINT_INFO, CF_LINT_WARNING, CF_LINT_ERROR };

struct cf_rpath_finding {
    enum cf_rpath_finding_kind kind;
    enum cf_lint_severity severity;
    const char *tag;    /* "RPATH" or "RUNPATH" */
    char *entry;        /* the entry as written ("" when empty; the whole RPATH for BOTH_TAGS) */
    char *expanded;     /* after $ORIGIN/$LIB/$PLATFORM expansion, NULL when not expanded */
    char *message;      /* one sentence with the fix */
};

struct cf_rpath_lint_opts {
    const char *within;     /* package root for CF_RPATH_OUTSIDE_TREE; NULL: not checked */
    const char *origin_dir; /* $ORIGIN; NULL: the directory of the file as opened */
    const char *lib;        /* $LIB; NULL: "lib64" for ELF64, "lib" for ELF32 */
    const char *platform;   /* $PLATFORM; NULL: uname's machine */
    const char *root;       /* sysroot prefixed to absolute entries when checking existence */
};

struct cf_rpath_lint {
    struct cf_rpath_finding *findings;
    size_t n;
};

/* Lints elf's DT_RPATH and DT_RUNPATH. opts may be NULL. Findings come in the
 * order of the entries (RPATH first), one per problem. */
int cf_rpath_lint(const struct cf_elf *elf, const struct cf_rpath_lint_opts *opts,
                  struct cf_rpath_lint *out, cf_error *err);
void cf_rpath_lint_release(struct cf_rpath_lint *lint);

/* Stable names for JSON and text: "absolute", "relative", "empty", "missing-dir",
 * "rpath-and-runpath", "outside-tree"; "info", "warning", "error". */
const char *cf_rpath_kind_name(enum cf_rpath_finding_kind kind);
const char *cf_lint_severity_name(enum cf_lint_severity severity);
/* The severity each kind carries. */
enum cf_lint_severity cf_rpath_kind_severity(enum cf_rpath_finding_kind kind);

#ifdef __cplusplus
}
#endif
#endif
