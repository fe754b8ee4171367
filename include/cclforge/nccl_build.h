/* Source builds of NCCL (and RCCL) matched to libtorch's version and the rig's
 * archs: plan (validate inputs, resolve defaults), build (make/cmake spawned
 * with argv, optionally in Docker), verify the new library, install atomically
 * into a cache root, and manage the installed builds (list, activate, remove,
 * env). The library never prints: progress arrives through a callback. */
#ifndef CCLFORGE_NCCL_BUILD_H
#define CCLFORGE_NCCL_BUILD_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cclforge/arch.h"
#include "cclforge/error.h"
#include "cclforge/strbuf.h"
#include "cclforge/vendor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_NCCL_UPSTREAM_URL "https://github.com/NVIDIA/nccl.git"

/* ---- tags: vX.Y.Z-N ---- */

struct cf_nccl_tag {
    int major, minor, patch;
    int rev; /* the -N package revision; -1 when only X.Y.Z is known */
};

/* Accepts exactly "vX.Y.Z-N"; anything else is a usage error naming that form. */
int cf_nccl_tag_parse(const char *text, struct cf_nccl_tag *tag, cf_error *err);
/* Accepts "X.Y.Z" (as libtorch reports it), "X.Y.Z-N" and "vX.Y.Z[-N]". */
int cf_nccl_version_parse(const char *text, struct cf_nccl_tag *tag, cf_error *err);
/* "v2.28.9-1"; "2.28.9" for the version part only. */
void cf_nccl_tag_format(const struct cf_nccl_tag *tag, struct strbuf *out);
void cf_nccl_version_format(const struct cf_nccl_tag *tag, struct strbuf *out);
/* NCCL_VERSION_CODE: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after. */
int cf_nccl_tag_version_code(const struct cf_nccl_tag *tag);
/* Among tag names (e.g. from `git ls-remote --tags`, "refs/tags/v2.28.9-1" or
 * "v2.28.9-1"), the newest -N of want's X.Y.Z. -1 with a NOTFOUND error naming
 * the revisions that exist nearby when there is none. */
int cf_nccl_tag_pick_newest(const char *const *names, size_t n, const struct cf_nccl_tag *want,
                            struct cf_nccl_tag *out, cf_error *err);
/* Tag names of a git repository (URL, file:// URL or local path) via
 * `git ls-remote --tags` spawned with argv. */
int cf_git_list_tags(const char *url, struct strvec *names, cf_error *err);

/* NCCL_MAJOR/MINOR/PATCH (and PKG_REVISION as rev, -1 if absent) from a source
 * tree's makefiles/version.mk. */
int cf_nccl_source_version(const char *src_dir, struct cf_nccl_tag *tag, char **suffix, cf_error *err);

/* ---- build options and plan ---- */

enum cf_nccl_source_kind { CF_SRC_UPSTREAM, CF_SRC_DIR, CF_SRC_TARBALL, CF_SRC_GIT };

struct cf_nccl_event {
    enum { CF_NCCL_EV_STEP, CF_NCCL_EV_UNITS, CF_NCCL_EV_LINE, CF_NCCL_EV_WAIT } kind;
    const char *text;  /* STEP: what starts; UNITS: the unit label; LINE: a build output line; WAIT: why */
    long done, total;  /* UNITS */
};
typedef void (*cf_nccl_event_fn)(void *ctx, const struct cf_nccl_event *ev);

struct cf_nccl_build_opts {
    const char *vendor;             /* a --vendor word (cf_vendor_by_word): "nvidia" (default), "rocm", "dtk" */
    const char *tag;                /* --tag; NULL: from the source or libtorch */
    const char *archs;              /* --archs; NULL: the survey's GPUs, then the environment */
    /* Defaults from doctor's survey: with use_survey set, a missing --tag takes
     * the active libtorch's NCCL and missing --archs the visible GPUs' archs,
     * from this host or from survey_file (a doctor --json of another host;
     * NULL: $CCLFORGE_SURVEY, else probe here). The survey runs only when one
     * of these is needed or survey_file is given. */
    int use_survey;
    const char *survey_file;
    /* Or the same facts given directly (tests, callers with a survey of their own). */
    const char *torch_nccl_version; /* the active libtorch's NCCL ("2.28.9") */
    const char *survey_archs;       /* the GPUs' archs ("sm_75;sm_90") */
    int ptx;                        /* PTX for the newest arch (CLI default 1) */
    const char *source;             /* DIR | TARBALL | GIT-URL; NULL: upstream at the tag */
    int jobs;                       /* 0: MAX_JOBS or the number of cores */
    const char *only_funcs;         /* ONLY_FUNCS for NCCL's kernel generator */
    const char *root;               /* NULL: $CCLFORGE_HOME or ~/.cache/cclforge */
    /* The toolkit root (--cuda-home for NVIDIA, --rocm-path for ROCm and DTK);
     * NULL: the vendor table's root variables in order (CUDA_HOME, CUDA_PATH;
     * DTK_HOME, ROCM_PATH, ROCM_HOME, HIP_PATH for DTK), then its first default
     * root holding the toolkit's files (/usr/local/cuda, /usr/local/cuda-*;
     * /opt/dtk, /opt/dtk-*), as doctor finds them. */
    const char *cuda_home;
    const char *rocm_path;
    const char *docker_image;       /* --docker base image; NULL: nvidia/cuda:<cuda>-devel */
    int docker;
    int force;                      /* rebuild even when the target is cached */
    int verify;                     /* a cache hit re-hashes every file (else only changed ones) */
    int no_wait;                    /* fail instead of waiting for another build's lock */
    cf_nccl_event_fn on_event;
    void *event_ctx;
};

struct cf_nccl_plan {
    const struct cf_vendor_profile *vendor; /* the vendor table's entry: word, comm library, arch family */
    struct cf_nccl_tag tag;
    char *tag_text;                  /* "v2.28.9-1" */
    char *tag_origin;                /* "--tag", "source version.mk", "libtorch NCCL 2.28.9 + newest revision" */
    struct cf_arch_list archs;
    char *archs_origin;              /* "--archs", "GPU survey", "TORCH_CUDA_ARCH_LIST" */
    int ptx;
    char *gencode;                   /* NVCC_GENCODE, or GPU_TARGETS for RCCL */
    enum cf_nccl_source_kind source_kind;
    char *source;                    /* dir, tarball path or URL */
    char *source_id;                 /* the cache key part for the source */
    int jobs;
    char *only_funcs;
    char *root, *target_name, *target_dir, *work_dir, *build_dir, *src_dir, *log_path, *lock_path;
    char *toolkit_home;              /* the CUDA, ROCm or DTK root */
    char *toolkit_origin;            /* "--cuda-home", "DTK_HOME", "default /opt/dtk-24.04" */
    char *cuda_version;              /* "13.0" (NVIDIA) */
    char *compiler;                  /* nvcc / hipcc version line */
    int docker;
    char *docker_image;
    char *docker_tag;                /* Docker mode: unique image tag and container name */
    char *docker_container;
    char *dockerfile;                /* Docker mode: the Dockerfile text */
    struct strvec warnings;          /* e.g. the tag differs from libtorch's NCCL */
};

/* The argv of each step (NULL-terminated views inside *steps), for display and
 * for running. docker_dir: the private directory holding the Dockerfile. */
struct cf_nccl_steps {
    struct strvec fetch;        /* empty for a DIR source or Docker mode */
    struct strvec build[4];     /* make, or cmake configure + build, or docker build/create/cp */
    size_t n_build;
    struct strvec cleanup[2];   /* Docker mode: rm the container, rmi the image */
    size_t n_cleanup;
};
void cf_nccl_plan_steps(const struct cf_nccl_plan *plan, const char *docker_dir, struct cf_nccl_steps *steps);
void cf_nccl_steps_release(struct cf_nccl_steps *steps);

/* Validates every input and resolves the defaults without building. */
int cf_nccl_plan_make(const struct cf_nccl_build_opts *opts, struct cf_nccl_plan *plan, cf_error *err);
void cf_nccl_plan_release(struct cf_nccl_plan *plan);
/* The commands the build would run, one shell-quoted line each (for --dry-run). */
void cf_nccl_plan_commands(const struct cf_nccl_plan *plan, struct strvec *lines);
/* Shell-quotes one word for display only (never executed). */
void cf_shell_quote(const char *word, struct strbuf *out);

struct cf_nccl_verify {
    char *library;            /* path checked */
    char *soname;
    char *banner;             /* "NCCL version 2.28.9+cuda13.0" */
    struct strvec sass;       /* archs with machine code found */
    struct strvec ptx;        /* archs with PTX found */
    struct strvec missing;    /* requested but absent ("sm_90", "compute_90 (PTX)") */
    struct strvec extra;      /* present but not requested: reported, not fatal */
    struct strvec problems;   /* every fatal finding, one sentence each */
};
void cf_nccl_verify_release(struct cf_nccl_verify *v);
/* Checks a built library against the plan: soname, banner version, archs. */
int cf_nccl_verify_library(const struct cf_nccl_plan *plan, const char *library, struct cf_nccl_verify *out,
                           cf_error *err);

struct cf_nccl_build_result {
    int cache_hit;
    char *damage;             /* why the cached build was rebuilt (NULL: it was not damaged) */
    char *target_dir;
    char *log_path;
    double build_seconds;     /* of this run's build step (0 on a cache hit) */
    double total_seconds;
    struct cf_nccl_verify verify;
    struct strbuf log_tail;   /* on a failed build: the last lines of the log */
};
void cf_nccl_build_result_release(struct cf_nccl_build_result *r);

/* Runs the plan: root check, stale staging removal, cache check (the
 * installed files against the manifest: a damaged build is rebuilt, never
 * served), lock, fetch, build, verify, staged tree checked, atomic install.
 * Test-only: CCLFORGE_TEST_FAULT=<point> kills the process with SIGKILL at that
 * point (after-build, staged, before-rename) to prove recovery;
 * CCLFORGE_TEST_STOP=<point> stops it there (SIGSTOP) to interleave another build. */
int cf_nccl_build_run(const struct cf_nccl_plan *plan, const struct cf_nccl_build_opts *opts,
                      struct cf_nccl_build_result *result, cf_error *err);

/* The document of `nccl build --json`, cclforge.nccl-build/1 (docs/schemas/nccl.md;
 * src/nccl/nccl_build_json.c): result NULL, a dry run's (the plan alone); else
 * the build's, error its failure (NULL: it succeeded). Caller deletes. */
cJSON *cf_nccl_build_json(const struct cf_nccl_plan *plan, const struct cf_nccl_build_result *result,
                          const char *error);

/* ---- the install tree ---- */

/* $CCLFORGE_HOME, else $XDG_CACHE_HOME/cclforge, else $HOME/.cache/cclforge;
 * NULL (a usage error) when none is set: never a shared directory like /tmp. */
char *cf_nccl_default_root(cf_error *err);

struct cf_nccl_install {
    char *name;          /* "v2.28.9-sm75-sm90" */
    char *dir;
    char *tag;
    char *version;       /* "2.28.9" */
    int version_code;
    char *archs;         /* "sm_75;sm_90" */
    int ptx;
    char *cuda_version;
    char *library;       /* <dir>/lib/libnccl.so.X.Y.Z */
    double build_seconds;
    int active;
    char *damage;        /* NULL, or why the files differ from the manifest */
};
struct cf_nccl_install_list {
    struct cf_nccl_install *v;
    size_t n;
};
/* verify: re-hash every file (else only files whose size or stamp changed). */
int cf_nccl_store_list(const char *root, int verify, struct cf_nccl_install_list *out, cf_error *err);
void cf_nccl_install_list_release(struct cf_nccl_install_list *l);
/* Reads one installed build's manifest and checks its files (name as in list). */
int cf_nccl_store_get(const char *root, const char *name, struct cf_nccl_install *out, cf_error *err);
void cf_nccl_install_release(struct cf_nccl_install *i);
int cf_nccl_store_activate(const char *root, const char *name, cf_error *err);
/* Removes a build, with or without a manifest; refused while it is being built. */
int cf_nccl_store_remove(const char *root, const char *name, cf_error *err);

struct cf_nccl_env {
    struct cf_nccl_install build;
    char *ld_preload, *ld_library_path, *nccl_home;
    struct strvec host_archs;      /* from the host survey, when given */
    struct strvec uncovered;       /* host archs the build lacks (no SASS, no usable PTX) */
    struct strvec jit_only;        /* host archs only covered by PTX JIT */
    int coverage_checked;          /* host archs were given (the three lists above apply) */
};
/* The environment a worker needs for `name` (NULL: the active build); refused
 * for a damaged build or a path ld.so would split (space, ':'). host_archs
 * (may be NULL) are checked for coverage. */
int cf_nccl_env_make(const char *root, const char *name, const struct cf_arch_list *host_archs,
                     struct cf_nccl_env *out, cf_error *err);
void cf_nccl_env_release(struct cf_nccl_env *e);

/* The documents of `nccl list --json` (cclforge.nccl-list/1) and `nccl env
 * --format json` (cclforge.nccl-env/1), docs/schemas/nccl.md;
 * src/nccl/nccl_store_json.c. Caller deletes. */
cJSON *cf_nccl_list_json(const char *root, const struct cf_nccl_install_list *list);
cJSON *cf_nccl_env_json(const struct cf_nccl_env *env);

#ifdef __cplusplus
}
#endif
#endif
