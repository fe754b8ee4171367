/* Wheels (the binary distribution format): RECORD/METADATA/WHEEL parsing, a
 * reproducible writer, and a verifier that works on any wheel with native code. */
#ifndef CCLFORGE_WHEEL_H
#define CCLFORGE_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- RECORD and the RFC 822-style metadata files ---- */

struct cf_record_entry {
    char *path;
    char *algo;    /* "sha256"; NULL when the line has no hash (RECORD itself) */
    char *digest;  /* urlsafe base64 without padding, as written */
    long long size;/* -1 when absent */
};

struct cf_record {
    struct cf_record_entry *entries;
    size_t n;
};

/* Parses RECORD text (CSV: path,algo=digest,size; quoted fields allowed).
 * Rejects malformed lines with an error naming the line number. */
int cf_record_parse(const char *text, size_t len, struct cf_record *rec, cf_error *err);
void cf_record_release(struct cf_record *rec);
/* Appends one CSV line, quoting the path when it needs it. digest NULL: ",," */
void cf_record_format_line(struct strbuf *out, const char *path, const char *sha256_b64, long long size);
/* urlsafe base64 without '=' padding (PEP 376/427) of raw bytes. */
void cf_b64_urlsafe_nopad(const unsigned char *data, size_t len, struct strbuf *out);
/* sha256 of data as urlsafe base64 without padding. */
void cf_wheel_sha256_b64(const void *data, size_t len, struct strbuf *out);

/* "Key: value" headers (METADATA, WHEEL) up to the first blank line. */
struct cf_kv {
    char **keys;
    char **values;
    size_t n;
};
int cf_kv_parse(const char *text, size_t len, struct cf_kv *kv, cf_error *err);
void cf_kv_release(struct cf_kv *kv);
const char *cf_kv_get(const struct cf_kv *kv, const char *key); /* first match, case-insensitive */

/* name-version(-build)?-py-abi-plat.whl */
struct cf_wheel_name {
    char *dist, *version, *build, *python_tag, *abi_tag, *platform_tag;
};
int cf_wheel_name_parse(const char *filename, struct cf_wheel_name *wn, cf_error *err);
void cf_wheel_name_release(struct cf_wheel_name *wn);
/* The glibc ceiling of a platform tag: "manylinux_2_28_x86_64" -> 2.28 as 2*1000+28;
 * legacy manylinux1/2010/2014 map to 2.5/2.12/2.17. 0 when the tag has none (linux_x86_64). */
int cf_platform_glibc_ceiling(const char *platform_tag);
/* The tags a file name stands for: its python, abi and platform parts may each
 * be a compressed set ("cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64"
 * is two tags); every combination, in order. -1 when there would be more than max. */
int cf_wheel_tags_expand(const struct cf_wheel_name *wn, size_t max, struct strvec *out);
/* The architecture of a platform tag ("x86_64" of manylinux_2_17_x86_64 or
 * linux_x86_64; of a compressed set, its first tag's); NULL when it has none
 * (any). Caller frees. */
char *cf_platform_arch(const char *platform_tag);
/* PEP 503's canonical form of a distribution name: lower case, each run of
 * '-', '_' and '.' one '-'. Caller frees. */
char *cf_dist_canonical(const char *name);

/* ---- writing ---- */

struct cf_wheel_member {
    const char *archive_name; /* "pkg/mod.so" */
    const char *source_path;  /* file on disk; or data/len when NULL */
    const void *data;
    size_t len;
};

struct cf_wheel_spec {
    const char *dist_name;    /* "cclforge-nccl-bridge" (normalised to cclforge_nccl_bridge in file names) */
    const char *version;      /* "0.1.0" */
    const char *summary;
    const char *python_tag;   /* "cp311" (abi tag is the same) */
    const char *platform_tag; /* NULL: computed from the ELF members (see cf_wheel_platform_tag) */
    const char *const *requires_dist; size_t n_requires_dist;
    const struct cf_wheel_member *members; size_t n_members;
    const char *const *declared_externals; size_t n_declared_externals; /* site-packages relative dirs, e.g. "torch/lib" */
    const char *extra_dist_info_name;   /* an extra .dist-info file (e.g. "cclforge.json"), or NULL */
    const char *extra_dist_info_text;
};

/* Writes out_dir/<dist>-<ver>-<py>-<py>-<plat>.whl. Entries sorted, .dist-info
 * last with RECORD the final entry, mtimes fixed at SOURCE_DATE_EPOCH (or
 * 1980-01-01), modes 0644/0755: the same inputs give the same bytes. */
int cf_wheel_write(const struct cf_wheel_spec *spec, const char *out_dir, char **wheel_path,
                   char **platform_tag_used, cf_error *err);

/* The platform tag for a set of ELF files: manylinux_2_X_<arch> with X the highest
 * GLIBC_2.X any of them needs (at least 17) when every NEEDED is a manylinux
 * system library, one of the files, or on a declared external; else linux_<arch>.
 * `why` gets a sentence. */
int cf_wheel_platform_tag(const char *const *elf_paths, const char *const *archive_names, size_t n,
                          const char *const *declared_externals, size_t n_ext, char **tag, struct strbuf *why,
                          cf_error *err);

/* ---- grafting ---- */

/* Built files added to an existing wheel at a package path (src/pkg/wheel_graft.c). */
struct cf_wheel_graft_opts {
    const char *wheel;                             /* the wheel to add to */
    const char *const *files; size_t n_files;      /* placed at <at>/<file name> */
    const char *at;                                /* "pkg/comm/_ext" */
    const char *const *bundle; size_t n_bundle;    /* libraries placed at bundle_at */
    const char *bundle_at;                         /* NULL: <at>/lib */
    const char *const *externals; size_t n_externals; /* more site-packages dirs for the marker and the tag */
    const char *platform_tag;                      /* NULL: computed from the ELF members */
    const char *out_dir;                           /* NULL: beside the input */
};

struct cf_wheel_graft_result {
    char *wheel;            /* the wheel written */
    char *tag;              /* "cp311-cp311-manylinux_2_34_x86_64" */
    char *module;           /* the grafted extension, dotted; NULL when none */
    char *why;              /* how the platform tag was chosen */
    struct strvec added, replaced, dropped; /* member names */
};

/* Writes a new wheel: the input's members unchanged, the files added,
 * WHEEL's Tag and Root-Is-Purelib updated, .dist-info/cclforge.json naming
 * the module and the site-packages dirs its RPATH reaches, RECORD rewritten;
 * the same inputs give the same bytes. */
int cf_wheel_graft(const struct cf_wheel_graft_opts *opts, struct cf_wheel_graft_result *res, cf_error *err);
void cf_wheel_graft_result_release(struct cf_wheel_graft_result *res);
/* The document of `wheel graft --json`, cclforge.wheel-graft/1
 * (docs/schemas/bridge.md; src/pkg/wheel_graft_json.c). Caller deletes. */
cJSON *cf_wheel_graft_json(const struct cf_wheel_graft_result *res);

/* ---- verifying ---- */

struct cf_wheel_verify_opts {
    const char *wheel;
    int install;                /* make a venv, pip install --no-index --no-deps, import */
    int smoke_ranks;            /* > 0: an N-rank torch.distributed run through the installed bridge */
    const char *smoke_backend;  /* "nccl" (the bridge, N GPUs; NULL) or "gloo" (CPU, after importing the bridge) */
    const char *python;         /* interpreter for the venv (NULL: python3) */
    int system_site_packages;   /* venv --system-site-packages */
    const char *const *site_dirs; size_t n_site_dirs;       /* made importable in the venv by a .pth file (e.g. a torch install) */
    const char *const *externals; size_t n_externals;       /* extra declared external dirs, site-packages relative */
    const char *work_dir;       /* where the venv goes (NULL: a fresh temp dir, removed after) */
    int keep;                   /* keep the work dir */
    double timeout_s;           /* per spawned step, and the whole --smoke run (0: 600) */
    uint64_t max_size;          /* the most bytes the members may hold uncompressed (0: CF_WHEEL_MAX_SIZE) */
};

/* The default total-uncompressed cap: 4 GiB (torch's CUDA wheel holds 1.1 GB). */
#define CF_WHEEL_MAX_SIZE ((uint64_t)4 << 30)

/* cf_wheel_check.ok of a check that cannot apply to this run ("smoke device_mesh" with 2 ranks) */
#define CF_WHEEL_NA (-2)

struct cf_wheel_check {
    char *name;   /* "zip", "record", "rpath", "needed", "glibc", "install", "import", "smoke",
                     "smoke all_reduce", ... */
    int ok;       /* 1 ok, 0 failed, -1 skipped (an input missing: another check failed),
                     CF_WHEEL_NA not applicable (it cannot apply to this run; never a pass) */
    char *detail;
};

struct cf_wheel_verify_result {
    char *wheel;
    char *dist, *version, *python_tag, *abi_tag, *platform_tag;
    int glibc_ceiling;               /* 2*1000+X, 0 none */
    int glibc_needed;                /* highest GLIBC_2.X needed by the ELF members, 0 none */
    char *policy_needed;             /* the oldest manylinux policy every symbol version fits
                                        ("manylinux_2_27_x86_64", auditwheel's sym_tag), "linux_<arch>"
                                        when none does, NULL without native code */
    uint64_t members, uncompressed;  /* the archive's member count and declared uncompressed bytes */
    const char *inflate_engine;      /* what inflated the members: "isal" or "zlib" (static) */
    struct strvec extensions;        /* archive names of extension modules */
    struct strvec elf_members;
    struct cf_wheel_check *checks;
    size_t n_checks;
    int failed;                      /* number of failed checks */
    char *venv;                      /* when installed and kept */
    char *module;                    /* the module imported */
    char *module_file;               /* its __file__ from the installed location */
    struct strvec smoke_lines;       /* RANK_PASS / RANK_FAIL lines */
    struct strvec imported;          /* --install: the modules that imported from the venv ... */
    struct strvec import_failed;     /* ... and those that did not */
};

/* Runs every check, in order, each adding one or more entries to
 * result->checks (a check whose input is missing is there as skipped).
 * Everything wrong with the wheel itself (a missing file, a bad file name, an
 * unreadable archive) is a failed check: the return is 0 and
 * result->failed > 0. -1 only when the verifier itself cannot work (no
 * temporary directory), with err. */
int cf_wheel_verify(const struct cf_wheel_verify_opts *opts, struct cf_wheel_verify_result *res, cf_error *err);
void cf_wheel_verify_result_release(struct cf_wheel_verify_result *res);

/* The document of `wheel verify --json`, cclforge.wheel-verify/1
 * (docs/schemas/wheel-verify.md; src/pkg/wheel_verify_json.c): of a result,
 * error the verifier's own failure (NULL: none); of a usage error, its
 * message alone. Caller deletes. */
cJSON *cf_wheel_verify_json(const struct cf_wheel_verify_result *res, const char *error);
cJSON *cf_wheel_verify_usage_json(const char *message);

#ifdef __cplusplus
}
#endif
#endif
