/* The ProcessGroupNCCL bridge: a plan (every input resolved, each with where it
 * came from), a build (argv spawns of the C++ compiler, then a static check of
 * the output), and a wheel of the result (cclforge/wheel.h). */
#ifndef CCLFORGE_BRIDGE_H
#define CCLFORGE_BRIDGE_H

#include <stddef.h>

#include "cclforge/error.h"
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
    const char *libtorch;       /* a dir with include/ and lib/ (libtorch root or site-packages/torch); NULL: LIBTORCH, then the python */
    const char *python;         /* NULL: "python3" */
    const char *cxx;            /* NULL: $CXX, then g++ */
    const char *toolkit_root;   /* NULL: the vendor's root variables (cclforge/vendor.h: CUDA_HOME, CUDA_PATH;
                                 * ROCM_PATH, ...; DTK_HOME first for dtk), then doctor's survey */
    const char *nccl_home;      /* NULL: NCCL_HOME */
    const char *module_name;    /* NULL: CF_BRIDGE_DEFAULT_MODULE */
    const char *package;        /* NULL: CF_BRIDGE_DEFAULT_PACKAGE: the extension lives in <package>/ */
    const char *source;         /* the bridge .cpp; NULL: CCLFORGE_BRIDGE_SOURCE, then beside the executable */
    const char *const *external_rpath; /* extra absolute dirs the installed target declares, n_external_rpath */
    size_t n_external_rpath;
    const char *const *bundle_libs;    /* vendor libraries to ship in <package>/lib (RPATH $ORIGIN/lib) */
    const char *const *extra_includes; /* more -isystem roots after the vendor's (--include) */
    size_t n_extra_includes;
    size_t n_bundle_libs;
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

struct cf_bridge_plan {
    enum cf_vendor vendor;               /* cf_vendor_get(vendor) is its vendor-table entry */
    struct cf_bridge_item vendor_item;   /* "nvidia" + why */
    struct cf_bridge_item cxx;           /* compiler path */
    char *cxx_version;                   /* "12.2.0" */
    int cxx_major;
    char *cxx_std;                       /* "c++17" or "c++20" (what torch's headers require) */
    char *cxx_gate;                      /* the rule applied, in words */
    struct cf_bridge_item python;
    char *python_version;                /* "3.11" */
    char *python_tag;                    /* "cp311" */
    char *ext_suffix;                    /* ".cpython-311-x86_64-linux-gnu.so" */
    struct cf_bridge_item python_include;
    struct cf_bridge_item torch_dir;     /* dir with include/ and lib/ */
    char *torch_version;                 /* NULL when unknown */
    int cxx11_abi;                       /* 1/0, -1 unknown */
    char *cxx11_abi_from;
    struct cf_bridge_item toolkit_root;  /* value NULL when none found */
    struct cf_bridge_item nccl_header;   /* nccl.h / rccl.h path */
    char *nccl_header_version;           /* "2.30.7" from NCCL_MAJOR/MINOR/PATCH */
    struct cf_bridge_item *includes;     /* -isystem dirs in order */
    size_t n_includes;
    struct cf_bridge_lib *libs;
    size_t n_libs;
    struct cf_bridge_item *defines;      /* "NAME" or "NAME=VALUE" */
    size_t n_defines;
    struct cf_bridge_item *rpath;        /* "$ORIGIN/..." or declared externals */
    size_t n_rpath;
    struct cf_bridge_item source;        /* the bridge .cpp */
    char *module_name;
    char *package;
    char *output_name;                   /* <module><EXT_SUFFIX> */
    struct strvec bundle_libs;           /* absolute paths of libraries to bundle */
    struct strvec problems;              /* each a sentence with its fix; empty = buildable */
};

/* Resolves everything. Returns 0 with the plan filled even when it has problems
 * (the plan says what is wrong); -1 only when nothing could be planned. */
int cf_bridge_plan_make(const struct cf_bridge_opts *opts, struct cf_bridge_plan *plan, cf_error *err);
void cf_bridge_plan_release(struct cf_bridge_plan *plan);

/* The compiler and linker command lines the plan implies (argv vectors). */
void cf_bridge_compile_argv(const struct cf_bridge_plan *plan, const char *object, struct strvec *argv);
void cf_bridge_link_argv(const struct cf_bridge_plan *plan, const char *object, const char *output,
                         struct strvec *argv);

struct cf_bridge_build_result {
    char *output;              /* <out_dir>/<package>/<module><EXT_SUFFIX> */
    char *log_path;            /* full compiler output */
    double compile_seconds;
    double link_seconds;
    struct strvec needed;      /* NEEDED entries of the output */
    struct strvec rpath;       /* its RPATH/RUNPATH entries */
    struct strvec checks;      /* "ok: ..." lines of the post-build inspection */
    struct strvec problems;    /* what failed the inspection */
};

/* Compiles and links per plan into out_dir/<package>/, then inspects the output:
 * every NEEDED found in the target layout, no absolute RPATH, PyInit_<module>
 * exported. -1 with err on a failed compile/link or inspection. */
int cf_bridge_build(const struct cf_bridge_plan *plan, const char *out_dir, struct cf_bridge_build_result *res,
                    cf_error *err);
void cf_bridge_build_result_release(struct cf_bridge_build_result *res);

/* Checks a built extension against the plan's target layout (also used by build). */
int cf_bridge_inspect_output(const struct cf_bridge_plan *plan, const char *output,
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

#ifdef __cplusplus
}
#endif
#endif
