/* The ProcessGroupNCCL bridge: a plan (every input resolved, each with where it
 * came from, the headers proven by the compiler's own preprocessor), a build
 * (argv spawns of the C++ compiler, then a check of the output in the layout it
 * will be installed into) and a wheel of the result (cclforge/wheel.h). */
#ifndef CCLFORGE_BRIDGE_H
#define CCLFORGE_BRIDGE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cclforge/error.h"
#include "cclforge/libtorch_abi.h"
#include "cclforge/strbuf.h"
#include "cclforge/vendor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CF_BRIDGE_DEFAULT_MODULE "_cclforge_nccl"
#define CF_BRIDGE_DEFAULT_PACKAGE "cclforge_nccl_bridge"
/* GCC older than this cannot compile torch's C++17 headers; torch >= 2.10 asks for C++20 (GCC 10). */
#define CF_BRIDGE_MIN_GCC 9
#define CF_BRIDGE_MIN_GCC_CXX20 10

struct cf_bridge_opts {
    const char *vendor;         /* a --vendor word (cf_vendor_by_word): "nvidia", "rocm", "dtk"; NULL: from the
                                 * libtorch and the environment */
    const char *libtorch;       /* a dir with include/ and lib/ (libtorch root or site-packages/torch): headers and
                                 * libraries from one place; NULL: LIBTORCH, then the python */
    const char *torch_headers;  /* torch's headers alone: a torch package dir or its include/ (the CPU torch) */
    const char *vendor_libs;    /* the vendor libraries alone: libc10_hip.so, libtorch_hip.so, librccl.so.1, ... */
    const char *python;         /* NULL: "python3" */
    const char *cxx;            /* NULL: $CXX, then g++ */
    const char *toolkit_root;   /* NULL: the vendor's root variables (cclforge/vendor.h), then doctor's survey */
    const char *nccl_home;      /* NULL: NCCL_HOME */
    const char *module_name;    /* NULL: CF_BRIDGE_DEFAULT_MODULE */
    const char *package;        /* dotted ("torch_fl.comm._nccl_ext"); NULL: CF_BRIDGE_DEFAULT_PACKAGE */
    const char *source;         /* the bridge .cpp; NULL: CCLFORGE_BRIDGE_SOURCE, then beside the executable */
    const char *const *more_sources; /* the bridge's other .cpp files (--source repeated), compiled alike */
    size_t n_more_sources;
    const char *const *rpath;   /* --rpath: $ORIGIN-relative entries of the installed extension */
    size_t n_rpath;
    const char *const *bundle_libs;    /* vendor libraries to ship in <package>/lib (RPATH $ORIGIN/lib) */
    size_t n_bundle_libs;
    const char *const *extra_includes; /* include roots searched first (--include) */
    size_t n_extra_includes;
    const char *const *defines;        /* --define NAME[=VALUE]: added or replacing the chosen set's */
    size_t n_defines;
    const char *const *undefines;      /* --undefine NAME: removed from the chosen set */
    size_t n_undefines;
    const char *into;           /* --into DIR: the tree the package lives in (source or staging tree) */
    const char *max_glibc;      /* "2.28" or a manylinux tag: the newest GLIBC_ version the result may need */
    const char *docker;         /* compile and link inside this image */
    /* --toolkit-lib SONAME: provided on every host by the vendor's toolkit (found there by the loader:
     * ROCM_PATH / DTK_HOME / CUDA_HOME, ld.so.cache, LD_LIBRARY_PATH), never bundled nor reached by an RPATH.
     * Always added: the vendor's comm library and device runtime when the vendor directory lacks them. */
    const char *const *toolkit_libs;
    size_t n_toolkit_libs;
    const char *out_dir;        /* the build directory the plan's commands write into (default "bridge-build") */
};

/* One resolved input and where it came from ("--libtorch", "CUDA_HOME", "detected: ..."). */
struct cf_bridge_item {
    char *value;
    char *from;
};

/* A library to link: resolved to a file, or not, with the directories tried. */
struct cf_bridge_lib {
    char *name;       /* "torch_cuda" (-l name) */
    char *path;       /* the file, NULL when not found */
    char *from;       /* the directory's provenance */
    struct strvec searched;
};

/* Torch's header tree: CUDA-named (CPU and CUDA wheels) or hipified (c10/hip, ATen/hip). */
enum cf_bridge_flavour { CF_BRIDGE_CUDA_NAMED = 0, CF_BRIDGE_HIPIFIED };

/* A header as the preprocessor resolved it (`-H`), with its version macros. */
struct cf_bridge_header {
    const char *name;   /* "nccl.h", "rccl.h", "cuda.h", "hip/hip_runtime.h" (static strings) */
    char *path;         /* the file that really resolved, NULL when the source never includes it */
    char *version;      /* from its macros ("2.30.7", "13.0", "6.2.41133"), NULL unknown */
};

/* One soname that the vendor directory and the importing torch both provide. */
struct cf_bridge_duplicate {
    char *soname;
    char *vendor_path;
    char *torch_path;
    char *used;         /* the file the loader emulation maps at import; NULL before a build */
    char *why;
};

struct cf_bridge_plan {
    enum cf_vendor vendor;               /* cf_vendor_get(vendor) is its vendor-table entry */
    struct cf_bridge_item vendor_item;   /* "nvidia" + why */
    struct cf_bridge_item cxx;           /* compiler path */
    char *cxx_version;                   /* "12.2.0" */
    int cxx_major;
    char *cxx_std;                       /* "c++17" or "c++20" (what torch's headers require) */
    char *cxx_gate;                      /* the rule applied, in words */
    int cxx_ok;                          /* the compiler passed the gate */
    struct cf_bridge_item python;
    char *python_exe;                    /* its sys.executable: the program the loader emulation starts from */
    char *python_version;                /* "3.11" */
    char *python_tag;                    /* "cp311" */
    char *ext_suffix;                    /* ".cpython-311-x86_64-linux-gnu.so" */
    struct cf_bridge_item python_include;
    struct cf_bridge_item torch_dir;     /* torch's headers: a dir with include/ */
    struct cf_bridge_item vendor_libs;   /* the dir the GPU libraries are linked from */
    struct cf_bridge_item torch_import;  /* the torch package imported at run time (site-packages/torch) */
    char *torch_version;                 /* NULL when unknown */
    int cxx11_abi;                       /* 1/0, -1 unknown */
    char *cxx11_abi_from;
    enum cf_bridge_flavour flavour;
    char *flavour_from;
    char *define_set;                    /* "validated DCU set (CUDA-named torch headers)", ... */
    char *define_set_why;
    struct cf_bridge_item toolkit_root;  /* value NULL when none found */
    struct cf_bridge_item nccl_header;   /* the comm header the chosen source provides */
    char *nccl_header_version;           /* its NCCL_MAJOR/MINOR/PATCH */
    struct cf_bridge_header headers[4];  /* what the preprocessor resolved: nccl.h, rccl.h, cuda.h, hip_runtime.h */
    char *proof;                         /* the preprocessor command's outcome in words */
    struct strvec proof_files;           /* every file the preprocessor read (the object cache key) */
    struct cf_bridge_item nccl_library;  /* version of the comm library linked + where it was read */
    struct cf_bridge_item nccl_libtorch; /* version ProcessGroupNCCL was compiled with + evidence */
    struct cf_libtorch_abi abi;          /* sizes read from the vendor libtorch */
    struct cf_bridge_item device_count;  /* the device-count symbol the vendor's c10 exports */
    struct cf_bridge_item *includes;     /* -isystem dirs in order, each with its role in `from` */
    size_t n_includes;
    struct cf_bridge_lib *libs;
    size_t n_libs;
    struct cf_bridge_item *defines;      /* "NAME" or "NAME=VALUE" */
    size_t n_defines;
    struct cf_bridge_item *rpath;        /* "$ORIGIN/..." entries, each with what it reaches */
    size_t n_rpath;
    struct cf_bridge_duplicate *duplicates;
    size_t n_duplicates;
    struct cf_bridge_item source;        /* the bridge .cpp (absolute): of its sources, the one defining make_nccl_backend */
    struct strvec more_sources;          /* its other sources (absolute), in the order given */
    struct strvec more_objects;          /* <out_dir>/<module>.<k>.<stem>.o, one per more_sources */
    struct cf_bridge_item guard;         /* cclforge's ABI guard (share/cclforge/bridge/cclforge_abi_guard.cpp) */
    char *out_dir;                       /* absolute build directory of the plan's commands */
    char *object;                        /* <out_dir>/<module>.o */
    char *guard_object;                  /* <out_dir>/<module>.abi_guard.o */
    char *output;                        /* <out_dir>/<package dir>/<output_name> */
    struct cf_bridge_item *toolkit_libs; /* sonames the host's toolkit provides, each with where it was seen here */
    size_t n_toolkit_libs;
    char *toolkit_version;               /* the toolkit's version at build ("24.04", "6.2.41133", "13.0"), NULL unknown */
    char *module_name;
    char *package;                       /* dotted */
    char *package_dir;                   /* "a/b/c" */
    char *output_name;                   /* <module><EXT_SUFFIX> */
    char *into;                          /* --into, absolute */
    int max_glibc;                       /* 2*1000+X; 0 none */
    char *docker;                        /* image, NULL native */
    struct strvec bundle_libs;           /* absolute paths of libraries to bundle */
    struct strvec notes;                 /* facts worth knowing that are not problems */
    struct strvec problems;              /* each a sentence with its fix; empty = buildable */
};

/* Resolves everything. Returns 0 with the plan filled even when it has problems
 * (the plan says what is wrong); -1 only when nothing could be planned. */
int cf_bridge_plan_make(const struct cf_bridge_opts *opts, struct cf_bridge_plan *plan, cf_error *err);
void cf_bridge_plan_release(struct cf_bridge_plan *plan);

/* The compiler and linker command lines the plan implies (argv vectors; under
 * --docker the docker run around them): one compile per source (the bridge's,
 * its other sources', then the ABI guard's, all with the same flags), one link
 * of all the objects (more_objects: the other sources' objects, NULL none). */
void cf_bridge_compile_argv(const struct cf_bridge_plan *plan, const char *source, const char *object,
                            struct strvec *argv);
void cf_bridge_link_argv(const struct cf_bridge_plan *plan, const char *object, const struct strvec *more_objects,
                         const char *guard_object, const char *output, struct strvec *argv);
/* Every command the plan implies, in the order they run, as the plan's own
 * paths name them: one compile per source (the bridge's, then its other
 * sources', then the ABI guard's) and the link last. Returns an array of
 * *n = more_sources.n + 3 vectors; cf_bridge_commands_free releases it. */
struct strvec *cf_bridge_plan_commands(const struct cf_bridge_plan *plan, size_t *n);
/* The command that creates the directories those commands write into
 * (`mkdir -p <out>/<package dir>`: the objects' directory and the module's),
 * which a compiler does not create: it runs first. */
void cf_bridge_mkdir_argv(const struct cf_bridge_plan *plan, struct strvec *argv);
void cf_bridge_commands_free(struct strvec *cmds, size_t n);
/* `docker run` around inner: every input directory mounted read-only at its own
 * path, work_dir read-write, no network. */
void cf_bridge_docker_argv(const struct cf_bridge_plan *plan, const char *work_dir, const struct strvec *inner,
                           struct strvec *argv);

/* One of the bridge's other sources, compiled or served by the object cache. */
struct cf_bridge_object {
    char *source;
    char *cached; /* the cached object used or stored, else NULL */
    int hit;
};

struct cf_bridge_build_result {
    char *output;              /* <out_dir>/<package dir>/<module><EXT_SUFFIX> */
    char *installed;           /* --into: where it was placed, else NULL */
    char *log_path;            /* full compiler output */
    char *object_cache;        /* the cached object used or stored (the bridge's or the guard's) */
    int cache_hit;             /* every object from the cache */
    struct cf_bridge_object *more_objects; /* the plan's other sources, in its order */
    size_t n_more_objects;
    double compile_seconds;
    double link_seconds;
    struct strvec needed;      /* NEEDED entries of the output */
    struct strvec rpath;       /* its RPATH/RUNPATH entries */
    struct strvec glibc_symbols; /* "sym@GLIBC_2.X" above --max-glibc */
    struct cf_bridge_duplicate *duplicates; /* the plan's, with the file the loader really maps */
    size_t n_duplicates;
    struct strvec checks;      /* "ok: ..." lines of the post-build inspection */
    struct strvec problems;    /* what failed the inspection */
};

/* Compiles and links per plan into out_dir/<package dir>/ (and --into), then
 * inspects the output in its installed layout. -1 with err on a failed compile,
 * link or inspection. */
int cf_bridge_build(const struct cf_bridge_plan *plan, const char *out_dir, struct cf_bridge_build_result *res,
                    cf_error *err);
void cf_bridge_build_result_release(struct cf_bridge_build_result *res);

/* Checks a built extension against the plan's installed layout (also used by
 * build): RPATH entries, PyInit_<module>, NEEDED and every undefined symbol
 * resolved by the loader emulation from the Python that imports torch first,
 * each vendor symbol defined by the vendor library expected to define it, and
 * the GLIBC ceiling. stage_dir receives the staged site-packages. */
int cf_bridge_inspect_output(const struct cf_bridge_plan *plan, const char *output, const char *stage_dir,
                             struct cf_bridge_build_result *res, cf_error *err);

/* Packages a finished build (out_dir of cf_bridge_build, with its
 * cclforge-build.json) as a wheel in wheel_dir. dist_name/version NULL: defaults
 * ("cclforge-nccl-bridge", "0.1.0"). platform_tag NULL: computed. */
struct cf_bridge_wheel_opts {
    const char *build_dir;
    const char *wheel_dir;
    const char *dist_name;
    const char *version;
    const char *platform_tag;
};
int cf_bridge_wheel(const struct cf_bridge_wheel_opts *opts, char **wheel_path, char **platform_tag, cf_error *err);

/* The document of `bridge <sub> --json`, cclforge.bridge-<sub>/2
 * (docs/schemas/bridge.md; src/bridge/bridge_json.c): "plan", "build" and
 * "wheel" ({path, platform_tag}) for those given (NULL: left out). Caller deletes. */
cJSON *cf_bridge_json(const char *sub, const struct cf_bridge_plan *plan, const struct cf_bridge_build_result *build,
                      const char *wheel_path, const char *platform_tag);

#ifdef __cplusplus
}
#endif
#endif
