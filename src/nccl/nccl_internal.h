/* Shared between the NCCL build driver's files; not a public interface. */
#ifndef CCLFORGE_NCCL_INTERNAL_H
#define CCLFORGE_NCCL_INTERNAL_H

#include <cjson/cJSON.h>

#include "cclforge/nccl_build.h"

/* ---- nccl_inputs.c: what user text may reach make, cmake, docker, git ---- */

/* The environment of every git spawn: no prompts, only the https, ssh, git
 * and file transports whatever the user's git configuration says. */
#define CF_NCCL_GIT_ALLOW_PROTOCOL "GIT_ALLOW_PROTOCOL=https:ssh:git:file"
extern const char *const cf_nccl_git_env[];
/* A path make and NCCL's recipes will carry (BUILDDIR, CUDA_HOME, make -C):
 * letters, digits, / . _ + @ - and non-ASCII bytes only. what: "the install
 * root"; fix: the sentence that says what to do instead. */
int cf_nccl_check_make_path(const char *what, const char *path, const char *fix, cf_error *err);
/* abs with every symlink of its existing part resolved (make's CURDIR is the
 * physical directory). Caller frees. */
char *cf_nccl_physical_path(const char *abs);
/* NCCL's generator grammar for ONLY_FUNCS (src/device/generate.py). */
int cf_nccl_check_only_funcs(const char *expr, cf_error *err);
/* An image reference as github.com/distribution/reference parses it. */
int cf_docker_reference_check(const char *ref, cf_error *err);
int cf_nccl_is_git_url(const char *source);
/* https://, ssh://, git@HOST:PATH, git://, file:// only. */
int cf_nccl_check_git_url(const char *url, cf_error *err);
/* The first byte of s that ok refuses, in words ("a space", "'$'", "a newline",
 * "the control character \x1b"); NULL when ok takes every byte. Caller frees. */
char *cf_nccl_refused_char(const char *s, int (*ok)(unsigned char c));

/* ---- nccl_root.c: the install root ---- */

/* <root>/nccl/<sub>[/<name>]. Caller frees. */
char *cf_nccl_root_path(const char *root, const char *sub, const char *name);
/* The root (when it exists) and cclforge's directories in it are real
 * directories owned by you or root and writable by nobody else. */
int cf_nccl_root_check(const char *root, cf_error *err);
/* Checks, then creates the root and its directories, then checks again. */
int cf_nccl_root_prepare(const char *root, cf_error *err);
/* The lock file of target `name` (created; never through a link), or -1. */
int cf_nccl_lock_open(const char *root, const char *name, int cloexec, cf_error *err);

/* ---- nccl_tree.c: an installed tree and its record in the manifest ---- */

/* {"include/nccl.h": {"size", "sha256", "stamp"}, "lib/libnccl.so.2": {"link"}, ...}
 * for everything under include/ and lib/ of dir_fd. */
cJSON *cf_nccl_tree_record(int dir_fd, cf_error *err);
struct nccl_manifest;
/* 0 when the tree at dir_fd is what its manifest records (full: every hash;
 * else the hash only of files whose size and stamp changed), 1 with *why. */
int cf_nccl_tree_check(int dir_fd, const struct nccl_manifest *m, int full, struct strbuf *why);

/* ---- nccl_install.c: staging and install ---- */

/* What a finished build produced, for the manifest. */
struct nccl_built {
    const struct cf_nccl_verify *verify;
    char *source_commit;   /* git sources */
    char *source_sha256;   /* tarballs */
    char *library_rel;     /* "lib/libnccl.so.2.28.9" */
    char *library_sha256;
    cJSON *files;          /* cf_nccl_tree_record of the staged tree */
    double build_seconds;
    struct strvec commands; /* the commands run, shell-quoted for reading */
};

/* A fresh directory <root>/nccl/staging/<target>/XXXXXX and its descriptor. */
struct nccl_stage {
    char *parent, *path, *name;
    int parent_fd, fd;
};

/* ---- nccl_manifest.c: manifest.json, the record of one installed build ---- */

/* What a manifest says. Strings point into doc: NULL when absent or not a
 * string, but tag and version, "" then. */
struct nccl_manifest {
    cJSON *doc;
    const char *tag, *version;   /* "v2.28.9-1", "2.28.9" */
    int version_code;            /* 22809; 0 when absent or out of range */
    struct strvec archs;         /* the archs built for: "sm_75", "gfx90a" */
    int ptx;
    const char *cuda_version;
    const char *library_kind;    /* a comm library's kind ("nccl", "rccl") */
    const char *library;         /* "lib/libnccl.so.2.28.9", relative to the build */
    const char *library_sha256;
    double build_seconds;
    struct strvec sass, ptx_archs; /* the library's machine code and PTX, as verified */
    const cJSON *inputs;         /* the plan's cache key (cf_nccl_plan_inputs) */
    const cJSON *files;          /* cf_nccl_tree_record; NULL in a manifest of an older cclforge */
};

/* The cache key of a plan (the manifest's "inputs"): what must match for a cache hit. */
cJSON *cf_nccl_plan_inputs(const struct cf_nccl_plan *plan);
/* The manifest of a finished build, as JSON text (built_at: now). Caller frees. */
char *cf_nccl_manifest_text(const struct cf_nccl_plan *plan, const struct nccl_built *built);
/* Reads dir_fd/manifest.json (never through a link): 0, or -1 when absent or
 * not a JSON object (m is empty then). Release m either way. */
int cf_nccl_manifest_read_at(int dir_fd, struct nccl_manifest *m);
/* The same for the build directory dir (never through a link). */
int cf_nccl_manifest_read(const char *dir, struct nccl_manifest *m);
void cf_nccl_manifest_release(struct nccl_manifest *m);

/* The defaults nccl build takes from a survey (this host's, or survey_file):
 * the active libtorch's NCCL version (need_torch; NULL when none) and the
 * visible GPUs' archs joined by ';' (need_gpus; NULL when none). -1 only
 * for a survey file that cannot be read. */
int cf_nccl_survey_defaults(const char *survey_file, int need_torch, int need_gpus, char **torch_nccl,
                            char **archs, cf_error *err);

int cf_nccl_stage_begin(const struct cf_nccl_plan *plan, struct nccl_stage *st, cf_error *err);
/* Fills the stage with include/, lib/ (file + soname + dev links), pkgconfig,
 * build.log and manifest.json (with the files' record). */
int cf_nccl_stage_layout(const struct cf_nccl_plan *plan, struct nccl_stage *st, const char *library,
                         struct nccl_built *built, cf_error *err);
/* The staged tree is complete: every promised file, every hash. */
int cf_nccl_stage_check(const struct nccl_stage *st, cf_error *err);
int cf_nccl_stage_install(const struct cf_nccl_plan *plan, struct nccl_stage *st, cf_error *err);
/* Closes the stage; with remove, deletes what is left in it. */
void cf_nccl_stage_end(struct nccl_stage *st, int remove);
/* Removes staging leftovers of every target whose lock is free (their builds
 * are dead), and all of own_target's (whose lock the caller holds; may be NULL). */
void cf_nccl_clean_stale(const char *root, const char *own_target);

#endif
