/* Private interface between the survey's probe files (src/survey/). */
#ifndef CCLFORGE_SURVEY_INTERNAL_H
#define CCLFORGE_SURVEY_INTERNAL_H

#include "cclforge/ldso.h"
#include "cclforge/survey.h"
#include "cclforge/numparse.h"
#include "cclforge/vendor.h"


/* opts->env first, then the process environment. Empty values count as unset. */
const char *cf_env_get(const struct cf_survey_opts *opts, const char *key);
/* The same, but an empty value is returned as "" (CUDA_VISIBLE_DEVICES="" hides every GPU). */
const char *cf_env_get_raw(const struct cf_survey_opts *opts, const char *key);

/* State shared by the probes of one survey run. */
struct probe_ctx {
    const struct cf_survey_opts *opts;
    int python_tried;
    struct cf_python_info py; /* Python is spawned at most once per survey */
};

/* Locates torch and nvidia.nccl with importlib.util.find_spec (nothing is
 * imported). NULL when Python is absent or skipped. */
const struct cf_python_info *cf_python_locate(struct probe_ctx *ctx);

/* Each probe fills its section(s) of s; only a bad user-given path fails. */
void cf_probe_toolkits(const struct cf_survey_opts *opts, struct cf_survey *s);
void cf_probe_compilers(const struct cf_survey_opts *opts, struct cf_survey *s);
void cf_probe_gpus_nvidia(const struct cf_survey_opts *opts, struct cf_survey *s);
void cf_probe_gpus_kfd(const struct cf_survey_opts *opts, struct cf_survey *s);
void cf_probe_comm_libs(struct probe_ctx *ctx, struct cf_survey *s);
int cf_probe_libtorch(struct probe_ctx *ctx, struct cf_survey *s, cf_error *err);
/* NCCL's configuration (src/survey/nccl_probe.c) and the fabric (src/survey/fabric.c);
 * injected sections are in `injected`, probed ones in s. */
void cf_probe_nccl_config(const struct cf_survey_opts *opts, const struct cf_survey *injected, struct cf_survey *s);
void cf_probe_fabric(const struct cf_survey_opts *opts, struct cf_survey *s);
struct cf_nccl_config;
/* The plugins c's settings make NCCL load (src/survey/nccl_plugins.c). */
/* host: the survey of this host so far (its libtorch and comm libraries say which
 * library calls dlopen for the plugins). */
void cf_nccl_config_find_plugins(const struct cf_survey_opts *opts, const struct cf_survey *host,
                                 struct cf_nccl_config *c);

/* The loader emulation (cclforge/ldso.h) as the survey needs it. */
/* Where `soname` resolves for a program with no RPATH (LD_LIBRARY_PATH, ld.so.cache, defaults).
 * facts: zeroed storage a run of lookups shares (cf_ldso_opts.facts_cache), or NULL. */
char *cf_loader_resolve_default(const struct cf_survey_opts *opts, struct cf_ldso_facts *facts, const char *soname);
/* Where the loader would find soname searching only dirs (NULL-terminated),
 * with the hwcaps subdirectories and ELF checks it applies: a toolkit's own
 * library. NULL when none there. */
char *cf_loader_resolve_in(const char *const *dirs, const char *soname);
/* This machine's multiarch directory name ("x86_64-linux-gnu"), static. */
const char *cf_host_multiarch(void);
/* Where dlopen(name) called from `caller` finds name in a process whose main program
 * is `root` (cf_ldso_dlopen_from; a caller outside root's closure is taken as the
 * main program itself). NULL when not found; *why: "runpath of /x/libnccl.so.2". */
char *cf_loader_dlopen_from(const struct cf_survey_opts *opts, struct cf_ldso_facts *facts, const char *root,
                            const char *caller,
                            const char *name, char **why);
/* Resolves the closure of `path` as glibc would: DT_NEEDED names not found go to
 * `missing`, undefined symbols and missing versions (ldd -r wording, capped) to
 * `undefined`. When `soname` is given, *needed says whether the closure needs it
 * and *resolved where it resolves (NULL when not found). The answer is
 * remembered while what it was read from is unchanged (closure_cache.c),
 * unless opts->no_cache. */
void cf_closure_check(const struct cf_survey_opts *opts, const char *path, const char *soname, int *needed,
                      char **resolved, struct strvec *missing, struct strvec *undefined);

/* The LD_PRELOAD entry that is a `soname` library (libnccl.so.2 -> any
 * ".../libnccl.so*"), NULL if none. Caller frees. */
char *cf_preloaded_comm_lib(const struct cf_survey_opts *opts, const char *soname);

struct cf_elf;
struct cf_commlib_banner;
struct cf_commlib_identity;
/* 1 for a real NCCL/RCCL VERSION_STRING, 0 for messages that merely mention a version. */
struct cf_gpucode_inventory;
struct cf_scan_facts;
/* Arch names of an inventory into out; 1 when known (compressed bundles do not name theirs). */
int cf_gpu_archs_of(const struct cf_gpucode_inventory *inv, struct strvec *out);
/* The banner and GPU code facts of an opened file, through the scan cache
 * (cclforge/scancache.h) unless opts->no_cache. -1 when unreadable. */
int cf_survey_scan(const struct cf_survey_opts *opts, struct cf_elf *elf, struct cf_scan_facts *out);
void cf_comm_from_banner(struct cf_comm_lib *c, const struct cf_commlib_banner *b);

/* Appends a zeroed item to a survey array and returns it. */
struct cf_gpu *cf_survey_add_gpu(struct cf_survey *s);
struct cf_gpu_probe *cf_survey_add_probe(struct cf_survey *s, const char *vendor, const char *method);
struct cf_toolkit *cf_survey_add_toolkit(struct cf_survey *s);
struct cf_compiler *cf_survey_add_compiler(struct cf_survey *s);
struct cf_comm_lib *cf_survey_add_comm_lib(struct cf_survey *s);
struct cf_libtorch *cf_survey_add_torch(struct cf_survey *s);

/* Reads a comm library's facts (banner, version, GPU archs, closure) from a file.
 * how: "loaded", "toolkit", ... Returns NULL when the file has no banner and
 * `require_banner` is set (a libtorch without an embedded copy). */
struct cf_comm_lib *cf_comm_lib_examine(const struct cf_survey_opts *opts, const char *path, const char *kind_hint,
                                        const char *how, int require_banner);

/* Expands one path with at most one '*' component into existing paths (sorted). */
void cf_glob_paths(const char *pattern, struct strvec *out);

/* Newest GCC major nvcc of that CUDA version accepts (table; 0 = unknown). */
int cf_nvcc_host_gcc_max(int cuda_major, int cuda_minor);

/* bridge_needs.c: the toolkit libraries of the bridges installed in site (the
 * directory holding the torch package as the Python named it: the bridge
 * wheels' markers and the cclforge-built modules' own ABI facts), into t;
 * no_cache: walk the packages again, remember nothing. */
void cf_survey_bridge_needs(const char *site, int no_cache, struct cf_libtorch *t);

#endif
