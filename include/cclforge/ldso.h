/* Static emulation of glibc's dynamic loader (ld.so, glibc 2.36 elf/dl-load.c,
 * elf/dl-deps.c): which file each DT_NEEDED resolves to, in breadth-first load
 * order, and why; for a library not found, every path considered and why it was
 * rejected. Nothing inspected is ever executed, loaded or dlopen'ed: candidates
 * are checked by reading their ELF header, found objects by reading their
 * dynamic section, one file at a time. See docs/ldso.md. */
#ifndef CCLFORGE_LDSO_H
#define CCLFORGE_LDSO_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"

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
    char *soname;             /* NULL if none */
    char *rpath, *runpath;    /* raw DT_RPATH / DT_RUNPATH strings as in the file, NULL if absent */
    uint64_t flags_1;
    long node;                /* the node that loaded it */
    long loader;              /* the object that first needed it (-1 for roots) */
    int is_interp;            /* the dynamic loader itself (resolved from PT_INTERP) */
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
    char *dst_platform;       /* the $PLATFORM it expands ("haswell" on AVX2 x86-64 hosts) */
};

/* What the host CPU supports, for glibc-hwcaps (x86 only; filled by probing
 * cpuid, which traps to the hypervisor in a VM: probe once, reuse). */
struct cf_ldso_cpu {
    int probed;     /* filled in */
    int known;      /* x86 host with cpuid */
    int level;      /* x86-64 ISA level 1..4 */
    uint32_t isa_1; /* GNU_PROPERTY_X86_ISA_1 bits supported */
    int avx512_1;
    int haswell;
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
    int no_legacy_hwcaps;         /* don't try glibc 2.36's legacy hwcap subdirs (tls, haswell, ...) */
    int explain;                  /* keep the considered list for every node */
    /* NULL: cpuid probed on every resolve. Else zero-initialised storage the
     * first resolve fills and later ones reuse (one probe per process). */
    struct cf_ldso_cpu *cpu_cache;
    /* Objects dlopen'ed one after another once the root's closure is mapped
     * (a Python importing torch/_C, then an extension): paths, NULL-terminated;
     * NULL none. Each one's closure is mapped before the next, and a NEEDED of
     * a name or soname already in the process is "already loaded". */
    const char *const *dlopen;
};

/* Resolves the closure of one ELF file as glibc's ld.so would when loading it
 * as the main program (like `ld.so FILE` / ldd). A missing dependency is not an
 * error (it is a node with path NULL); an unreadable or non-ELF root is. */
int cf_ldso_resolve(const char *path, const struct cf_ldso_opts *opts, struct cf_ldso_result *out,
                    cf_error *err);
void cf_ldso_result_release(struct cf_ldso_result *res);

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
