/* Static emulation of glibc's dynamic loader (ld.so: elf/dl-load.c,
 * elf/dl-deps.c, elf/dl-hwcaps.c, elf/dl-cache.c) of the target's own
 * release, 2.17 to 2.42, whose differences are the rules of glibc.h: which
 * file each DT_NEEDED resolves to, in breadth-first load order, and why; for a
 * library not found, every path considered and why it was rejected. Nothing
 * inspected is ever executed, loaded or dlopen'ed: candidates are checked by
 * reading their ELF and program headers, found objects by reading their
 * dynamic section, one file at a time. See docs/ldso.md. */
#ifndef CCLFORGE_LDSO_H
#define CCLFORGE_LDSO_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/cpufacts.h"
#include "cclforge/error.h"
#include "cclforge/glibc.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a NEEDED entry resolved where it did. */
enum cf_ldso_reason {
    CF_LDSO_ROOT,            /* one of the inspected files */
    CF_LDSO_DIRECT_PATH,     /* the NEEDED name contains '/' */
    CF_LDSO_RPATH,           /* DT_RPATH of `via` (the object, a loader up the chain, or the executable) */
    CF_LDSO_LD_LIBRARY_PATH,
    CF_LDSO_RUNPATH,         /* DT_RUNPATH of the object that needed it */
    CF_LDSO_LDCACHE,         /* /etc/ld.so.cache */
    CF_LDSO_DEFAULT_DIRS,    /* the loader's built-in system directories */
    CF_LDSO_ALREADY_LOADED,  /* matched an object already in the process by name, soname or file */
    CF_LDSO_NOT_FOUND
};

/* Why a path considered was not used. */
enum cf_ldso_reject {
    CF_LDSO_REJ_NONE,          /* it was used */
    CF_LDSO_REJ_NOT_FOUND,     /* no such file (ENOENT) */
    CF_LDSO_REJ_NO_ACCESS,     /* EACCES: glibc skips it */
    CF_LDSO_REJ_DIR_MISSING,   /* the directory does not exist: glibc skips it silently */
    CF_LDSO_REJ_WRONG_CLASS,   /* ELF32 vs ELF64: skipped */
    CF_LDSO_REJ_WRONG_MACHINE, /* e_machine differs: skipped */
    CF_LDSO_REJ_NODEFLIB,      /* ld.so.cache entry in a system directory, loader has DF_1_NODEFLIB */
    CF_LDSO_REJ_FATAL,         /* glibc stops with an error here (invalid ELF header, ...) */
    CF_LDSO_REJ_OTHER_ERROR    /* another open error: glibc abandons this search list */
};

struct cf_ldso_candidate {
    char *path;                 /* the file tried; for a cache miss, the cache file itself */
    enum cf_ldso_reason source; /* which search step proposed it */
    enum cf_ldso_reject reject;
    char *detail;               /* e.g. "ELF32, need ELF64"; NULL when none */
    /* -1: one path. Else a run of a long search list: directories [from, to)
     * of cf_ldso_result.lists[list], each with its hwcaps subdirectories,
     * searched and none holding the name (reject CF_LDSO_REJ_NOT_FOUND; path
     * is the first of them). A list is kept once however many names miss in
     * it, so a closure's size stays that of its input. */
    long list;
    size_t from, to;
};

/* A search list is folded into runs when it has more directories than this. */
#define CF_LDSO_FOLD_DIRS 16

/* A DT_RPATH, DT_RUNPATH or LD_LIBRARY_PATH list of more than
 * CF_LDSO_FOLD_DIRS directories, as searched (cf_ldso_resolve only). */
struct cf_ldso_search_list {
    enum cf_ldso_reason source;  /* CF_LDSO_RPATH, CF_LDSO_RUNPATH or CF_LDSO_LD_LIBRARY_PATH */
    long via;                    /* the object whose list it is; -1 for LD_LIBRARY_PATH */
    struct strvec dirs;          /* expanded, deduplicated, each ending in '/' ("" the current directory) */
    unsigned char *missing;      /* per directory: 1 when it does not exist */
    size_t n_missing;
};

/* One DT_NEEDED edge (or a root), in the order the loader processes them. */
struct cf_ldso_node {
    char *needed;             /* the DT_NEEDED string, or the root path as given */
    char *expanded;           /* needed after $ORIGIN/$LIB/$PLATFORM expansion; NULL if it had no token */
    char *path;               /* where it resolved; NULL when not found */
    enum cf_ldso_reason reason;
    char *via;                /* CF_LDSO_RPATH: path of the object whose RPATH matched */
    long parent;              /* object index (load order) that needed it; -1 for roots */
    int depth;                /* roots 0 */
    long object;              /* index into objects; -1 when not found */
    char *error;              /* a fatal loader error for this name (invalid ELF header, ...) */
    /* Every path considered in order. Kept for nodes not found, and for all
     * nodes when cf_ldso_opts.explain is set. */
    struct cf_ldso_candidate *considered;
    size_t n_considered;
};

/* One loaded object, in load order (the global symbol scope). */
struct cf_ldso_object {
    char *path;               /* as the loader names it (search dir + name), not a realpath */
    char *file;               /* the file to read it from: path, with --root its symlinks
                               * resolved inside the root (an absolute link stays there) */
    char *soname;             /* NULL if none */
    char *rpath, *runpath;    /* raw DT_RPATH / DT_RUNPATH strings as in the file, NULL if absent */
    uint64_t flags_1;
    long node;                /* the node that loaded it */
    long loader;              /* the object that first needed it (-1 for roots) */
    int is_interp;            /* the dynamic loader itself (resolved from PT_INTERP) */
};

/* The facts a resolution was made under: the glibc release whose rules it
 * followed and the CPU whose features decided the hwcaps. */
struct cf_ldso_facts {
    int filled;
    struct cf_glibc glibc;
    char glibc_source[256];        /* the ld.so or libc.so.6 it was read from, "--glibc", or
                                    * "assumed: ..." when the root holds none */
    char loader_path[256];         /* the loader the release was read from, and its DT_SONAME ("" */
    char loader_soname[64];        /* both when it came from libc.so.6): the resolver needs the
                                    * SONAME, and the loader is opened once */
    struct cf_cpu_facts cpu;       /* what the loader uses: after the Zhaoxin quirk and GLIBC_TUNABLES */
    struct cf_cpu_facts cpu_probed;/* cpuid's (or --cpu's), as update_active left them (isa_1) */
};

struct cf_ldso_result {
    struct cf_ldso_node *nodes;
    size_t n_nodes;
    struct cf_ldso_object *objects;
    size_t n_objects;
    size_t n_missing;         /* nodes not found (each name counted once, as ldd does) */
    int elf_class;            /* the root's, which every object must match */
    unsigned machine;
    char *interp;             /* the dynamic loader path (PT_INTERP or the machine default) */
    char *dst_lib;            /* the $LIB this loader expands ("lib/x86_64-linux-gnu") */
    char *dst_platform;       /* the $PLATFORM it expands ("haswell" on Intel AVX2 hosts); NULL: none */
    struct cf_ldso_facts facts;
    struct cf_elf **elves;    /* opts.keep_open: elves[i] is object i opened, NULL when it could not be
                               * read; closed by cf_ldso_result_release */
    struct strvec hwcaps;     /* glibc-hwcaps subdirectories searched, best first ("x86-64-v3") */
    struct strvec legacy_hwcaps; /* legacy names in glibc's order ("x86_64", "haswell", "tls"); the
                               * subdirectories tried are their power set */
    struct cf_ldso_search_list *lists; /* the long search lists the candidates' runs refer to */
    size_t n_lists;
    /* opts.list_inputs: the host paths besides the objects' files that the
     * answer was read from: every directory whose existence a search asked
     * (hwcaps subdirectories included), the ld.so.cache and the files the
     * glibc release was read from. Present or absent, each as it was: with
     * the objects' files and the candidates rejected for their content
     * unchanged too, a new resolution gives the same answer. */
    struct strvec inputs;
};

struct cf_ldso_opts {
    const char *root;             /* sysroot: prefixes absolute search dirs, cache paths, PT_INTERP; NULL = none */
    const char *ld_library_path;  /* NULL: the environment's LD_LIBRARY_PATH */
    int ignore_ld_library_path;   /* behave as if LD_LIBRARY_PATH were unset */
    int ignore_ldcache;           /* like ld.so --inhibit-cache */
    const char *ldcache_path;     /* NULL: <root>/etc/ld.so.cache */
    const char *const *system_dirs; /* NULL-terminated; NULL: this glibc's dirs for the machine (table) */
    /* glibc-hwcaps subdirectory names, best first; NULL: derived from this CPU
     * when the machine matches the host, else none. Empty list (first NULL): none. */
    const char *const *hwcaps;
    int no_legacy_hwcaps;         /* don't try the legacy hwcap subdirs (tls, haswell, ...) */
    int explain;                  /* keep the considered list for every node */
    /* fill cf_ldso_result.inputs (cf_ldso_resolve only): for a cache of the
     * result; without explain the candidates rejected for their content are
     * listed there too (their nodes keep no considered list) */
    int list_inputs;
    /* The target's glibc release ("2.31", cf_glibc_parse) to plan for another
     * host; NULL: read from the root's own ld.so / libc.so.6. */
    const char *glibc;
    /* The CPU to plan for (cf_cpu_parse spec: "amd", "intel,x86-64-v3"); NULL:
     * this host's, from cpuid. */
    const char *cpu;
    /* GLIBC_TUNABLES as the loader would see it; NULL: the environment's. */
    const char *tunables;
    /* NULL: the facts are worked out on every resolve. Else zero-initialised
     * storage the first resolve fills and later ones reuse (cpuid traps to
     * the hypervisor in a VM, and the glibc banner is a file read). */
    struct cf_ldso_facts *facts_cache;
    /* Keep every object's cf_elf open in the result (res.elves) instead of
     * closing it once its dynamic section is read: a caller that reads the
     * objects next (inspect) saves an open, a mapping and a header parse each. */
    int keep_open;
    /* Objects dlopen'ed one after another once the root's closure is mapped
     * (a Python importing torch/_C, then an extension): paths, NULL-terminated;
     * NULL none. Each one's closure is mapped before the next, and a NEEDED of
     * a name or soname already in the process is "already loaded". */
    const char *const *dlopen;
};

/* What release's loader makes of a CPU after update_active: its vendor
 * rules (the Zhaoxin AVX one) and GLIBC_TUNABLES (tunables may be NULL), in
 * init_cpu_features' order. cpu_probed -> cpu in the facts below. */
void cf_ldso_cpu_as_loaded(struct cf_cpu_facts *cpu, struct cf_glibc release, const char *tunables);

/* Works out the facts for (machine, class) under opts: the root's glibc
 * release (or opts->glibc), the CPU (or opts->cpu) and GLIBC_TUNABLES. -1
 * with CF_ERR_USAGE for a bad --glibc or --cpu. */
int cf_ldso_facts_get(unsigned machine, int elf_class, const struct cf_ldso_opts *opts, struct cf_ldso_facts *out,
                      cf_error *err);

/* Resolves the closure of one ELF file as glibc's ld.so would when loading it
 * as the main program (like `ld.so FILE` / ldd). A missing dependency is not an
 * error (it is a node with path NULL); an unreadable or non-ELF root is. */
int cf_ldso_resolve(const char *path, const struct cf_ldso_opts *opts, struct cf_ldso_result *out,
                    cf_error *err);
void cf_ldso_result_release(struct cf_ldso_result *res);

/* What a remembered answer of cf_ldso_resolve depends on (ldso_depends.c), as
 * the dependency cache (cclforge/depcache.h) takes it. cf_ldso_result_depends
 * appends to deps (as "?path": may be absent, then must stay so) every
 * object's file, every candidate rejected for its content and, for each of
 * res->inputs (opts.list_inputs), the path or its nearest existing ancestor;
 * -1 (deps partly filled) when they would exceed CF_DEPCACHE_MAX_DEPS.
 * cf_ldso_env_key appends what else decides the answer: the host and the
 * environment the loader reads. */
int cf_ldso_result_depends(const struct cf_ldso_result *res, struct strvec *deps);
void cf_ldso_env_key(struct strbuf *key);
/* 1 when the candidate was rejected for what the file holds (so its file,
 * not only its directory, is an input of the answer). */
int cf_ldso_candidate_read(const struct cf_ldso_candidate *c);

/* Where the loader would find `name` for a default program of (machine, class):
 * one with no RPATH, RUNPATH or DF_1_NODEFLIB, run from the current directory
 * (so LD_LIBRARY_PATH, ld.so.cache and the default directories, in that order).
 * Fills *out with one node (path NULL when not found, the paths considered kept
 * as for cf_ldso_resolve); its dependencies are not mapped. */
int cf_ldso_locate(const char *name, unsigned machine, int elf_class, int big_endian,
                   const struct cf_ldso_opts *opts, struct cf_ldso_node *out, cf_error *err);
void cf_ldso_node_release(struct cf_ldso_node *node);

/* Where dlopen(name) called by code in `caller` would find name, as glibc's
 * dl_open_worker does it: _dl_map_object with the caller's link map as the
 * loader. So: an object already loaded under that name; else, unless the caller
 * has DT_RUNPATH, the DT_RPATH of the caller and of each object up its l_loader
 * chain, then of the main program; LD_LIBRARY_PATH; the caller's DT_RUNPATH;
 * ld.so.cache and the system directories (both skipped under the caller's
 * DF_1_NODEFLIB); $ORIGIN in name expands to the caller's directory. The process
 * is modelled as `root` started as the main program with its closure loaded
 * (NCCL's plugins: root libtorch_cuda.so, caller the libnccl.so.2 it loads;
 * NULL caller: root itself). -1 when root cannot be read or caller is not in its
 * closure. Fills *out as cf_ldso_locate does. */
int cf_ldso_dlopen_from(const char *root, const char *caller, const char *name, const struct cf_ldso_opts *opts,
                        struct cf_ldso_node *out, cf_error *err);

const char *cf_ldso_reason_name(enum cf_ldso_reason reason);   /* "runpath", "ld.so.cache", ... */
const char *cf_ldso_reject_name(enum cf_ldso_reject reject);   /* "not found", "wrong ELF class", ... */
/* A one-line "why": "rpath of /x/liba.so", "LD_LIBRARY_PATH", "default dirs". Caller frees. */
char *cf_ldso_describe_reason(const struct cf_ldso_node *node);

/* The loader's facts for a machine/class (tables; exposed for docs and tests). */
struct cf_ldso_platform {
    const char *interp;          /* "/lib64/ld-linux-x86-64.so.2" */
    const char *multiarch;       /* "x86_64-linux-gnu" */
    const char *lib;             /* $LIB: "lib/x86_64-linux-gnu" (Debian) or "lib64" */
    const char *platform;        /* $PLATFORM default, "x86_64" */
    char **system_dirs;          /* NULL-terminated, each without trailing '/' */
};
/* Fills p for (machine, class) under root (NULL = "/"): Debian multiarch layout
 * when <root>/usr/lib/<tuple> exists, else the lib64/lib layout. */
int cf_ldso_platform_for(unsigned machine, int elf_class, const char *root, struct cf_ldso_platform *p,
                         cf_error *err);
void cf_ldso_platform_release(struct cf_ldso_platform *p);

#ifdef __cplusplus
}
#endif
#endif
