/* Private interface between the files of `wheel verify` (src/pkg/wheel_*.c):
 * the state the checks share, and the checks themselves, which
 * wheel_verify.c runs from a table. */
#ifndef CCLFORGE_PKG_WHEEL_VERIFY_INTERNAL_H
#define CCLFORGE_PKG_WHEEL_VERIFY_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <zip.h>

#include "cclforge/wheel.h"
#include "pkg/elf_facts.h"
#include "pkg/member_name.h"
#include "pkg/name_index.h"
#include "pkg/wheel_write.h"
#include "pkg/zip_read.h"
#include "pkg/zip_scan.h"

/* Where the installed layout puts site-packages, relative to its prefix
 * (the depth of lib/pythonX.Y/site-packages, for $ORIGIN/../.. climbs). */
#define CF_WHEEL_SITE_REL "lib/python3/site-packages"

void cf_wheel_add_check(struct cf_wheel_verify_result *res, const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The problems one check found: the first CF_WHEEL_SHOWN word for word
 * ("a; b; "), the rest counted (a hostile wheel can have 70,000). */
#define CF_WHEEL_SHOWN 50
struct cf_wheel_problems {
    struct strbuf text;
    size_t n;
};
void cf_wheel_problem(struct cf_wheel_problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds "... and N more" when some were left out. */
void cf_wheel_problems_finish(struct cf_wheel_problems *p);
/* The verdict of a check from its problems: failed with them when there are
 * any, else ok with the formatted detail; p is released. */
void cf_wheel_report(struct cf_wheel_verify_result *res, const char *check, struct cf_wheel_problems *p,
                     const char *ok_fmt, ...) __attribute__((format(printf, 4, 5)));

/* What the static part learnt that the install part needs. */
struct wheel_facts {
    char *bridge_module;          /* dotted module from the marker, NULL when not a cclforge bridge */
    struct strvec modules;        /* dotted names of every extension module */
    struct strvec toolkit_libs;   /* sonames the host's toolkit provides (the marker's toolkit_libs) */
    char *toolkit_vendor, *toolkit_version; /* the marker's toolkit seen at build */
    /* for --install and --smoke (wheel_verify.c fills them) */
    struct strvec factory_modules; /* modules whose read-only data names CF_BRIDGE_FACTORY: bridges */
    struct strvec requires_dist;   /* METADATA's Requires-Dist values, as written */
};

/* wheel_python_sites.c: the package directories PYTHON imports from (sys.path
 * less the standard library), appended to out; -1 when it cannot be asked. */
int cf_wheel_python_sites(const char *python, double timeout_s, struct strvec *out, cf_error *err);

/* --install and --smoke: a fresh venv, pip install, import from the installed location. */
void cf_wheel_install_checks(const struct cf_wheel_verify_opts *opts, const struct wheel_facts *wf,
                             struct cf_wheel_verify_result *res);
/* wheel_host.c: the host requirements, each toolkit library found as this host's loader finds it. */
struct verify_ctx;
void cf_wheel_check_host(struct verify_ctx *c);
/* Adds the toolkit libraries the extensions' ABI facts name to c->wf (run by
 * the needed check, which leaves them to the host check). */
void cf_wheel_toolkit_libs_from_facts(struct verify_ctx *c);
/* wheel_abi.c: abi_info()'s sizes and NCCL versions against the libtorch file loaded. */
struct cJSON;
void cf_wheel_bridge_abi_check(struct cf_wheel_verify_result *res, const struct cJSON *abi);
/* wheel_smoke.c: --smoke N with opts->smoke_backend through the installed module,
 * its ranks supervised by the rank supervisor (cclforge/ranks.h). */
void cf_wheel_run_smoke(const struct cf_wheel_verify_opts *opts, const char *py, const char *work, const char *module,
                        int gpus, struct cf_wheel_verify_result *res);

struct verify_ctx;

/* One member of the archive, as the checks see it (~100 bytes: a wheel may
 * have 200,000 members, and memory must not grow with its contents). */
enum { DATA_UNREAD, DATA_OK, DATA_BAD };
struct vmember {
    const struct cf_zip_entry *z; /* its central directory entry */
    const char *shown;            /* its name as messages show it: z->name unless it needs escaping */
    const char *problem;          /* why its name is unsafe (zip slip, ...); NULL when clean */
    char *link_target;            /* a symlink's target, as stored */
    long record_line;             /* its RECORD entry (index), -1 when not listed */
    uint64_t size_read;
    char *placed;                 /* its copy in the layout (absolute), NULL when not placed */
    char *bad_digest;             /* the digest of its bytes, kept only when RECORD says otherwise */
    struct elf_facts *elf;        /* read from the copy; NULL when not an ELF file */
    char *elf_error;              /* ELF magic, but not a file the loader could map */
    unsigned char data;           /* DATA_* */
    unsigned char installable;    /* pip installs it somewhere (cf_wheel_installed_path) */
    unsigned char is_elf;         /* starts with the ELF magic */
    unsigned char is_extension;   /* a module import loads: a tagged extension-module name
                                     in site-packages, or <leaf>.so exporting some PyInit_ */
    unsigned char init_mismatch;  /* an extension module not exporting PyInit_<its leaf> */
    unsigned char factory;        /* an extension module whose data holds make_nccl_backend */
    unsigned char reached;        /* loaded as a dependency of an extension module (wheel_needed.c) */
};

/* The dotted module an installed path (prefix relative) is imported as, or
 * NULL when it is not under site-packages. Caller frees. */
char *cf_wheel_module_of(const char *installed);
/* The installed path of a placed member, relative to the layout's prefix. */
const char *cf_wheel_installed_of(const struct verify_ctx *c, const struct vmember *m);

struct verify_ctx {
    const struct cf_wheel_verify_opts *opts;
    struct cf_wheel_verify_result *res;
    uint64_t max_size;
    int jobs;                     /* workers of the streaming pass (cf_wheel_jobs) */
    struct cf_inflate_engine engine; /* what inflates the deflated members (cf_inflate_pick) */
    int fd;                       /* the wheel, opened once: every read is of the same file */
    uint64_t file_size;
    struct cf_wheel_name wn;
    int have_name;
    struct cf_zip_scan scan;
    int have_scan;                /* the central directory was read */
    int readable;                 /* no structural fault: members may be decompressed */
    zip_t *za;
    struct vmember *m;
    size_t n;
    struct cf_name_index by_name; /* archive name -> member */
    struct cf_name_index dirs;    /* installed directories, prefix relative (keys into dir_names) */
    struct strvec dir_names;      /* one path per member that brought new directories */
    struct cf_member_set paths;   /* where the members install (fold keys) -> member */
    char *stem;                   /* dist_info without ".dist-info" */
    char *dist_info;              /* the one top-level "<name>-<ver>.dist-info", as found */
    struct strbuf dist_info_problems; /* none, several, or not this distribution's */
    long record, wheel, metadata, marker; /* member indices, -1 when absent */
    struct cf_record rec;
    int rec_parsed;
    struct strbuf record_error;   /* why RECORD could not be read or parsed */
    struct strbuf wheel_text, metadata_text, marker_text;
    int content_read;             /* every member was streamed */
    char *tmp;                    /* the private work directory */
    char *prefix;                 /* tmp/prefix: the installed layout */
    char *sysroot;                /* tmp/sysroot, empty: absolute RPATH entries and system dirs land there */
    struct strvec externals;      /* declared external directories, site-packages relative */
    struct wheel_facts wf;
    char *arch;                   /* the platform tag's ("x86_64"), NULL for "any" */
    int tag_minor;                /* manylinux_2_<minor> of the tag (lowest of a set), 0 none */
    int musl;                     /* a musllinux tag: musl's system libraries, no glibc policy */
    size_t n_elf;
    struct cf_name_index placed;  /* layout path -> member */
    struct strvec syslibs;        /* system libraries needed, each once ... */
    struct strvec syslib_users;   /* ... and the first member needing it */
    struct cf_name_index syslib_ix;
};

/* Reading members (wheel_member_io.c): one at a time, streaming. */
struct cf_wheel_stream {
    struct cf_zip_member zm;      /* stored and deflated members */
    zip_file_t *zf;               /* others, through libzip */
};
int cf_wheel_read_at(void *fd_ptr, uint64_t off, void *buf, size_t n); /* pread, for cf_zip_read_fn */
int cf_wheel_member_open(struct verify_ctx *c, size_t i, struct cf_wheel_stream *s, cf_error *err);
/* Bytes read, 0 at the end (size and CRC checked), -1 with err. */
ssize_t cf_wheel_member_read(struct cf_wheel_stream *s, void *buf, size_t n, cf_error *err);
void cf_wheel_member_close(struct cf_wheel_stream *s);
/* A small member whole (at most cap bytes: symlink targets, RECORD) into out. */
int cf_wheel_member_read_all(struct verify_ctx *c, size_t i, size_t cap, struct strbuf *out, cf_error *err);

/* The streaming pass (wheel_stream.c, wheel_stream_pool.c, wheel_member_problems.c) */
#define CF_WHEEL_CHUNK (64 * 1024) /* a worker's buffer of decompressed bytes */
/* The problems members have, found by workers in any order, kept as the
 * serial pass would have shown them: the CF_WHEEL_SHOWN earliest (member
 * number, then order within the member) and a count. */
struct cf_logged_problem {
    size_t member;
    unsigned seq;
    char *text;
};
struct cf_wheel_problem_log {
    pthread_mutex_t lock;
    struct cf_logged_problem kept[CF_WHEEL_SHOWN];
    size_t n_kept, total;
};
void cf_wheel_problem_log_init(struct cf_wheel_problem_log *l);
/* Problem number *seq (then incremented) of member `member`. Thread-safe. */
void cf_wheel_member_problem(struct cf_wheel_problem_log *l, size_t member, unsigned *seq, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Into p in order (shown or counted as cf_wheel_problem would have); the log is done. */
void cf_wheel_problem_log_flush(struct cf_wheel_problem_log *l, struct cf_wheel_problems *p);
/* Streams member i once with the worker's buffer buf (CF_WHEEL_CHUNK bytes):
 * digest, layout copy, kept text, size and CRC checked; writes only member
 * i's fields, so workers may run it on different members at once. */
void cf_wheel_stream_member(struct verify_ctx *c, size_t i, unsigned char *buf, struct cf_wheel_problem_log *log);
/* The number of workers: CCLFORGE_WHEEL_JOBS (1-16) when set, else the online CPUs (16 at most). */
int cf_wheel_jobs(int *jobs, cf_error *err);
/* Streams every member on `jobs` workers (the calling thread one of them); problems into p in member order. */
void cf_wheel_stream_members(struct verify_ctx *c, int jobs, struct cf_wheel_problems *p);

/* The archive (wheel_archive.c) */
void cf_wheel_check_file(struct verify_ctx *c);
void cf_wheel_check_name(struct verify_ctx *c);
void cf_wheel_check_zip(struct verify_ctx *c);
/* .dist-info (wheel_dist_info.c) */
/* Finds the one .dist-info directory (problems into c->dist_info_problems)
 * and its RECORD, WHEEL, METADATA and marker members. */
void cf_wheel_find_dist_info(struct verify_ctx *c);
/* Reads and parses RECORD (whole: it is the index of everything else) and
 * ties each entry to its member; failures into c->record_error. */
void cf_wheel_read_record(struct verify_ctx *c);
void cf_wheel_check_record(struct verify_ctx *c);
void cf_wheel_check_metadata(struct verify_ctx *c);
/* .pth files installed into site-packages, listed (wheel_pth.c) */
void cf_wheel_check_pth(struct verify_ctx *c);
/* Native code in the installed layout (wheel_native.c, wheel_needed.c, wheel_policy.c) */
/* Reads the ELF facts of every member copied into the layout. */
void cf_wheel_read_elf_facts(struct verify_ctx *c);
void cf_wheel_check_extension(struct verify_ctx *c);
void cf_wheel_check_rpath(struct verify_ctx *c);
void cf_wheel_check_needed(struct verify_ctx *c);
void cf_wheel_check_glibc(struct verify_ctx *c);
void cf_wheel_check_policy(struct verify_ctx *c);

/* The ways a plugin's bridge wheel installs yet loses its tier, found
 * statically (wheel_bridge.c): the bridge module outside the package path the
 * wheel's Python imports it from, and a module imported for make_nccl_backend
 * (or linked like a bridge) that holds no such function. Adds the check
 * "bridge-module" when the wheel has a module that is or looks like a bridge. */
void cf_wheel_check_bridge_module(struct verify_ctx *c);

/* Requires-Dist against installed distributions (wheel_requires.c). */
/* The distribution among `requires` (canonical names), or among what they
 * require in turn as installed (pip installs those too), whose installed
 * RECORD, in one of site_dirs, lists a file directly in site_rel_dir
 * ("torch/lib"): 1 with *owner "torch 2.15.0" (or "nvidia-nccl-cu13 2.30.7,
 * which torch requires") and *site the directory it was found in
 * (caller frees both), 0 when none does, -1 with err when a RECORD cannot be
 * read. For --install too: pass opts->site_dirs (the venv links their
 * packages, not their .dist-info) and the venv's own site-packages. */
int cf_wheel_dist_owning_dir(const char *const *site_dirs, size_t n_sites, const struct strvec *requires,
                             const char *site_rel_dir, char **owner, char **site, cf_error *err);
/* The canonical distribution name a requirement ("Torch>=2.15; ...") names, NULL when none. */
char *cf_wheel_requirement_canon(const char *req);
/* The canonical distribution names of METADATA's Requires-Dist lines (those
 * without an extra marker), appended to out. */
void cf_wheel_requires_dist(const char *metadata, size_t len, struct strvec *out);
/* When a distribution among `requires` owns site_rel_dir under a --site
 * directory: declares it (c->externals), appends "torch/lib (owned by torch
 * 2.15.0, installed in SITE)" to provided, and returns 1. */
int cf_wheel_external_from_requires(struct verify_ctx *c, const struct strvec *requires, const char *site_rel_dir,
                                    struct strvec *provided);

/* Symlinks (wheel_symlinks.c): the links that, followed through the other
 * links, leave the wheel, and the members written through a link; one
 * sentence each into problems. */
void cf_wheel_symlink_problems(struct verify_ctx *c, struct strvec *problems);

/* The installed layout (wheel_layout.c) */
/* Where pip installs an archive name, relative to the prefix; NULL when it
 * installs nowhere (a .data scheme pip does not know). Caller frees. */
char *cf_wheel_installed_path(const char *dist_info_stem, const char *name);
/* Makes tmp/prefix (site-packages inside) and tmp/sysroot. */
int cf_wheel_layout_create(struct verify_ctx *c, cf_error *err);
/* Opens the layout file for member i at its installed path (creating its
 * directories); -1 when it cannot be created, with err. */
int cf_wheel_layout_open(struct verify_ctx *c, size_t i, const char *installed, cf_error *err);
/* Makes each declared external found under a --site directory appear at its
 * place in the layout's site-packages (a symlink); the ones found, in *found. */
void cf_wheel_layout_link_externals(struct verify_ctx *c, struct strvec *found);
/* "site-packages/x/y" for a prefix-relative path under site-packages, else the path. Caller frees. */
char *cf_wheel_layout_display(const char *prefix_rel);

#endif
