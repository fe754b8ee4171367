/* `cclforge inspect` as a library call: for each file, the closure the glibc
 * loader would map (ldso.h) with why each library was found where it was, the
 * comm-library facts (commlib.h) and GPU code archs (gpucode.h) of every object,
 * RPATH lint findings (rpath_lint.h), the `ldd -r` symbol check (symcheck.h) on
 * request, and the problems all of that adds up to. Nothing inspected is run or
 * loaded. With no file it locates the NCCL and RCCL libraries a default program
 * of this machine would load and inspects those. The library never prints. */
#ifndef CCLFORGE_INSPECT_H
#define CCLFORGE_INSPECT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cclforge/commlib.h"
#include "cclforge/error.h"
#include "cclforge/gpucode.h"
#include "cclforge/ldso.h"
#include "cclforge/rpath_lint.h"
#include "cclforge/symcheck.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_inspect_opts {
    const char *const *files;    /* n_files paths; none: the default mode (locate NCCL/RCCL) */
    size_t n_files;
    const char *root;            /* sysroot / unpacked package; NULL = "/" */
    const char *ld_library_path; /* NULL: the environment's */
    int ignore_ld_library_path;
    int undefined;               /* run the symbol and version check (ldd -r) */
    const char *within;          /* lint: entries of objects under this tree must stay in it */
    int explain;                 /* keep every path considered for every node, not only missing ones */
    int no_gpu;                  /* skip the GPU code inventory */
    int no_banner;               /* skip the NCCL/RCCL banner scan (and the two-copies check) */
    const char *glibc;           /* plan for this glibc release ("2.31"); NULL: the root's own */
    const char *cpu;             /* plan for this CPU (cf_cpu_parse spec); NULL: this host's */
    int no_cache;                /* scan every file again; keep nothing on disk (memory only) */
    const char *cache_dir;       /* the scan cache's directory; NULL: <cache root>/scan-v2 */
};

/* Facts about one object of a closure (parallel to cf_ldso_result.objects). */
struct cf_inspect_object {
    int scanned;                        /* facts below were read (0 when the file could not be) */
    char *error;                        /* why it could not be read, else NULL */
    int commlib_scanned;                /* 0 with no_banner */
    struct cf_commlib_identity commlib;
    int gpu_scanned;                    /* 0 with no_gpu */
    struct cf_gpucode_inventory gpu;
    struct cf_rpath_lint lint;
    int lint_within;                    /* the object lies under opts.within: outside-tree checked */
    int from_cache;                     /* banner and GPU facts came from the scan cache */
};

enum cf_inspect_problem_kind {
    CF_INSPECT_BAD_INPUT,        /* the file itself cannot be inspected (missing, not ELF, ...) */
    CF_INSPECT_MISSING,          /* a NEEDED library not found */
    CF_INSPECT_LOAD_ERROR,       /* the loader would stop on a found file (bad ELF header, ...) */
    CF_INSPECT_UNREADABLE,       /* an object of the closure could not be read for its facts */
    CF_INSPECT_UNDEFINED_SYMBOL, /* --undefined: nothing defines a strong reference */
    CF_INSPECT_VERSION_NOT_FOUND,/* --undefined: a required symbol version nobody defines */
    CF_INSPECT_LINT,             /* an RPATH/RUNPATH finding (severity from the lint) */
    CF_INSPECT_NCCL_COPIES,      /* more than one NCCL/RCCL copy in one process */
    CF_INSPECT_GPU_CODE,         /* a corrupt fatbin/bundle section */
    CF_INSPECT_KIND_COUNT
};

struct cf_inspect_problem {
    enum cf_inspect_problem_kind kind;
    enum cf_lint_severity severity;
    long object;      /* object index in the target's closure, -1 when none */
    char *path;       /* the object or file concerned, NULL when none */
    char *message;    /* one line a person can act on */
};

struct cf_inspect_target {
    char *file;                  /* as given, or the located library in the default mode */
    const char *located_as;      /* default mode: "libnccl.so.2" / "librccl.so.1"; else NULL */
    char *error;                 /* the file cannot be inspected (then nothing below is set) */
    struct cf_ldso_result closure;
    int is_static;               /* the file has no dynamic section: nothing is loaded */
    struct cf_inspect_object *objects; /* closure.n_objects entries */
    int symcheck_done;
    struct cf_symcheck_result symcheck;
    struct cf_inspect_problem *problems;
    size_t n_problems;
    size_t n_errors, n_warnings;
    size_t nccl_copies;          /* objects that are or embed NCCL/RCCL */
};

/* Default mode: where one comm library was looked for. */
struct cf_inspect_lookup {
    const char *name;            /* a comm library's soname (cclforge/vendor.h): "libnccl.so.2" */
    struct cf_ldso_node node;    /* path NULL when not found; considered lists every path tried */
};

struct cf_inspect_result {
    int default_mode;
    struct cf_inspect_lookup *lookups; /* default mode only */
    size_t n_lookups;
    struct cf_inspect_target *targets;
    size_t n_targets;
    size_t n_errors, n_warnings;       /* over all targets */
    char *cache_dir;                   /* the scan cache used, NULL: memory only */
    size_t cache_memory_hits, cache_disk_hits, cache_misses, cache_stored, cache_evicted;
};

/* Inspects opts->files (or the default comm libraries). A file that cannot be
 * inspected is a target with `error` set (an error-severity problem), not a
 * failure of the call; -1 only for bad options (CF_ERR_USAGE: --within that is
 * not a directory, ...) or an internal error. */
int cf_inspect_run(const struct cf_inspect_opts *opts, struct cf_inspect_result *out, cf_error *err);
void cf_inspect_result_release(struct cf_inspect_result *res);

/* Stable names for JSON and text: "bad-input", "missing", "load-error",
 * "unreadable", "undefined-symbol", "version-not-found", "lint", "nccl-copies",
 * "gpu-code". */
const char *cf_inspect_problem_kind_name(enum cf_inspect_problem_kind kind);

/* "NCCL 2.28.9+cuda13.0 (code 22809)" for a banner. Caller frees. */
char *cf_inspect_describe_banner(const struct cf_commlib_banner *banner);

/* How many of a target's problems are of one kind (the summary's "missing"). */
size_t cf_inspect_count(const struct cf_inspect_target *t, enum cf_inspect_problem_kind kind);

/* The cclforge.inspect/1 document of a result and the options that made it
 * (docs/schemas/inspect.md; src/elf/inspect_json.c). Caller deletes. */
cJSON *cf_inspect_json(const struct cf_inspect_opts *opts, const struct cf_inspect_result *res);

#ifdef __cplusplus
}
#endif
#endif
