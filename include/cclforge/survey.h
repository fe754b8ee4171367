/* What this machine (or another host, via JSON) has for collective communication:
 * vendor toolkits, GPUs, libtorch installations and the NCCL/RCCL they use,
 * system communication libraries, compilers. A plain data model filled by
 * cf_survey_run() and serialised to / loaded from JSON.
 *
 * Injection (tests, planning a build for another host): a JSON file named by
 * opts.survey_file or, when that is NULL, by the environment variable
 * CCLFORGE_SURVEY. Every top-level section present in that file ("host",
 * "toolkits", "gpus", "gpu_probes", "driver", "libtorch", "comm_libraries",
 * "compilers", "nccl_config", "fabric") replaces probing of that area; absent sections are probed on this
 * machine. The output of `cclforge doctor --json` is a complete survey file.
 * Schema: docs/schemas/doctor.md. */
#ifndef CCLFORGE_SURVEY_H
#define CCLFORGE_SURVEY_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/arch.h" /* GPU arch names: cf_sm_name, cf_gfx_target_name */
#include "cclforge/error.h"
#include "cclforge/vendor.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable naming a survey JSON file to inject. */
#define CF_SURVEY_ENV "CCLFORGE_SURVEY"

/* A communication library (NCCL or RCCL) as found on disk or embedded in another file. */
struct cf_comm_lib {
    char *kind;          /* "nccl" or "rccl" */
    char *path;          /* the file that holds it (libnccl.so.2, librccl.so.1, or libtorch_cuda.so when embedded) */
    char *how;           /* "embedded", "loaded" (what the loader resolves), "toolkit", "NCCL_HOME", "pip", "ldconfig", "json" */
    char *version;       /* "2.28.9"; NULL when unknown */
    int version_code;    /* NCCL_VERSION_CODE: 22809 (major*10000+minor*100+patch; 2.8 and older: major*1000+minor*100+patch); 0 unknown */
    char *cuda_version;  /* from the banner suffix "+cuda13.0" -> "13.0"; "+hip6.2" -> "6.2" in hip_version; NULL unknown */
    char *hip_version;
    char *banner;        /* the raw version banner, e.g. "NCCL version 2.28.9+cuda13.0" */
    char *header;        /* nccl.h / rccl.h that goes with it, when found */
    struct strvec archs; /* GPU code in the file: "sm_75", "compute_120" (PTX), "gfx90a"; empty when none/unknown */
    int archs_known;     /* 1 when the GPU code was actually read (an empty list then means "none") */
    struct strvec missing_libs;      /* DT_NEEDED entries of its closure the loader would not find */
    struct strvec undefined_symbols; /* "sym@VERSION (needed by file)" left undefined in its closure (capped) */
};

/* A vendor toolkit installation (profiles in cclforge/vendor.h). */
struct cf_toolkit {
    char *vendor;          /* profile id: "cuda", "rocm", "dtk" */
    char *root;            /* canonical root directory */
    char *found_by;        /* "CUDA_HOME", "ROCM_PATH", "PATH (nvcc)", "default /usr/local/cuda", "json" */
    char *version;         /* "13.0.88", "6.2.4", "24.04.1"; NULL unknown */
    char *version_source;  /* "nvcc --version", "version.json", "include/cuda.h", ".info/version", ... */
    char *compiler;        /* full path of nvcc / hipcc inside or for this root; NULL if absent */
    struct strvec include_dirs; /* existing include roots (DTK: include, include/rccl, cuda/cuda-12/include) */
    struct strvec lib_dirs;     /* existing library directories */
    struct cf_comm_lib *comm;   /* the toolkit's own NCCL/RCCL (header + library), NULL if none */
};

/* One GPU or DCU. */
struct cf_gpu {
    int index;            /* physical ordinal within its vendor (driver order / KFD GPU-node order) */
    char *vendor;         /* "nvidia", "amd", "hygon" */
    char *name;           /* "NVIDIA GeForce GTX 1080", "gfx928"; may contain commas */
    char *arch;           /* "sm_61", "sm_120", "gfx90a", "gfx928" */
    int cc_major;         /* NVIDIA compute capability (6, 1); 0 for AMD/Hygon */
    int cc_minor;
    uint64_t memory_bytes;/* 0 unknown */
    char *uuid;           /* "GPU-...", NULL unknown */
    int visible;          /* 1 when CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES lets this process see it */
    int visible_index;    /* the ordinal the process sees, -1 when not visible */
};

/* What one GPU probe did, so "no NVIDIA driver" is reported rather than silently empty. */
struct cf_gpu_probe {
    char *vendor;         /* "nvidia", "amd" (covers hygon: same KFD interface) */
    char *method;         /* "driver-api", "nvidia-smi", "kfd-sysfs", "json" */
    int ok;               /* 1 when the probe ran and could enumerate (possibly 0 devices) */
    int count;            /* devices it found */
    char *note;           /* why it failed / what was used: "no NVIDIA driver: libcuda.so.1 not found" */
};

/* The GPU driver(s) of the host. */
struct cf_driver {
    int cuda_driver_version; /* cuDriverGetVersion(): 13000 = CUDA 13.0; 0 unknown / no driver */
    char *nvidia_version;    /* kernel driver "580.65.06", NULL unknown */
    char *amd_version;       /* KFD / amdgpu driver version when known */
};

enum cf_torch_flavour { CF_TORCH_UNKNOWN = 0, CF_TORCH_CPU, CF_TORCH_CUDA, CF_TORCH_HIP };

/* A libtorch installation (a C++ distribution, or the lib/ of a Python torch package). */
struct cf_libtorch {
    char *root;            /* directory holding lib/ and include/ */
    char *lib_dir;         /* root/lib */
    char *found_by;        /* "--libtorch", "LIBTORCH", "python (python3)", "variants root <dir> (.active)", "json" */
    char *variant;         /* flodl variant path from .active, NULL otherwise */
    struct strvec variant_meta; /* that variant's .arch key=value lines, "key=value" */
    char *version;         /* "2.9.1+cu130"; NULL unknown */
    char *version_source;  /* "torch/version.py", "build-version", "torch-2.9.1.dist-info" */
    enum cf_torch_flavour flavour;
    char *gpu_runtime_version; /* CUDA "13.0" or HIP "6.2" it was built for, NULL unknown/CPU */
    int cxx11_abi;         /* 1 new ABI, 0 old ABI, -1 unknown */
    char *abi_source;      /* "symbols of libc10.so", "version.py", "TorchConfig.cmake" */
    char *gpu_lib;         /* path of libtorch_cuda.so / libtorch_hip.so, NULL for CPU */
    char *nccl_built_against; /* the NCCL the wheel pins (Requires-Dist nvidia-nccl-cuXX==V), NULL unknown */
    struct cf_comm_lib *embedded; /* NCCL/RCCL statically inside gpu_lib (banner found), NULL if none */
    struct cf_comm_lib *loaded;   /* libnccl.so.2 / librccl.so.1 the loader resolves from gpu_lib, NULL if not needed */
    int needs_comm_lib;    /* 1 when gpu_lib's closure has DT_NEEDED libnccl.so.2 / librccl.so.1 */
    struct strvec missing_libs;      /* closure of gpu_lib (or libtorch_cpu.so) */
    struct strvec undefined_symbols;
    struct strvec archs;   /* GPU code in gpu_lib's fatbins / offload bundles */
    int archs_known;
    char *problem;         /* why this candidate is not a usable libtorch (e.g. LIBTORCH names no libtorch), else NULL */
    /* Bridges installed beside this torch (site-packages/<dist>.dist-info/cclforge.json, and the
     * extension modules of the packages there whose cclforge_abi_info names toolkit libraries) and the
     * libraries the host's toolkit must provide them, as this host's loader finds each: one line
     * per library ("librccl.so.1 -> /opt/dtk/lib/librccl.so.1 (LD_LIBRARY_PATH) for torch_fl...")
     * in found, and in missing with where it is not and the toolkit it was built with. */
    struct strvec bridge_toolkit_found;
    struct strvec bridge_toolkit_missing;
    /* Extension modules beside this torch that claim cclforge_abi_info but whose facts cannot be
     * read (truncated, another format): "<module> (<file>): why". */
    struct strvec bridge_unreadable;
    struct strvec bridge_walk_bounded; /* a site-packages whose module walk stopped at its bound */
    /* Plugin bridges there without cclforge's facts: extension modules whose read-only data holds
     * CF_BRIDGE_FACTORY (cclforge/pymodule.h), "<module> (<file>)" in plugins; each NEEDED of one
     * that this host's loader does not find, in a process that imported torch first (the
     * emulation: torch/_C's closure, then the module), in plugin_missing: "<module> needs <lib>
     * ...: where the loader looked". */
    struct strvec bridge_plugins;
    struct strvec bridge_plugin_missing;
};

/* A compiler found on PATH or in a toolkit. */
struct cf_compiler {
    char *name;            /* "gcc", "g++", "clang", "nvcc", "hipcc" */
    char *path;
    char *version;         /* "12.2.0", "13.0.88" */
    const char *family;    /* "gcc", "clang", "nvcc", "hipcc" as its --version says; NULL unknown or from JSON */
    char *banner;          /* the --version line the version came from; NULL unknown or from JSON */
    int major;
    int minor;
    int host_gcc_max;      /* nvcc only: newest GCC major it accepts, 0 unknown */
    int host_clang_max;    /* nvcc only: newest clang major it accepts, 0 unknown */
    char *host_range_source; /* "crt/host_config.h" (parsed) or "table (docs/doctor.md)" */
};

/* Where each section came from: probed here or injected from JSON. */
enum cf_survey_section {
    CF_SEC_HOST, CF_SEC_TOOLKITS, CF_SEC_GPUS, CF_SEC_GPU_PROBES, CF_SEC_DRIVER,
    CF_SEC_LIBTORCH, CF_SEC_COMM_LIBS, CF_SEC_COMPILERS,
    CF_SEC_NCCL_CONFIG, /* cclforge/ncclconf.h */
    CF_SEC_FABRIC,      /* cclforge/fabric.h */
    CF_SEC_COUNT
};

struct cf_nccl_config;
struct cf_fabric;

struct cf_survey {
    char *hostname;
    char *injected_from;             /* survey file path, NULL when all probed */
    unsigned char injected[CF_SEC_COUNT]; /* 1 per section taken from the file */

    struct cf_toolkit *toolkits;     size_t n_toolkits;
    struct cf_gpu *gpus;             size_t n_gpus;     /* the physical set; see visible */
    struct cf_gpu_probe *probes;     size_t n_probes;
    struct cf_driver driver;
    struct cf_libtorch *torches;     size_t n_torches;  /* [0] is the one in use (first by priority) */
    struct cf_comm_lib *comm_libs;   size_t n_comm_libs; /* system-wide: ldconfig / LD_LIBRARY_PATH / NCCL_HOME / pip */
    struct cf_compiler *compilers;   size_t n_compilers;
    struct cf_nccl_config *nccl_config; /* NCCL's effective configuration here; NULL when skipped */
    struct cf_fabric *fabric;        /* interfaces, HCAs, PCI topology, limits, NVML; NULL when skipped */
    double seconds;                  /* wall time of the survey */
};

#define CF_SURVEY_INIT { 0 }

/* Areas that can be skipped (bit mask in opts.skip). */
enum {
    CF_SURVEY_SKIP_GPUS = 1u << 0,
    CF_SURVEY_SKIP_TORCH = 1u << 1,
    CF_SURVEY_SKIP_TOOLKITS = 1u << 2,
    CF_SURVEY_SKIP_COMPILERS = 1u << 3,
    CF_SURVEY_SKIP_COMM = 1u << 4,
    CF_SURVEY_SKIP_PYTHON = 1u << 5, /* do not spawn python to find torch */
    CF_SURVEY_SKIP_NCCL_CONFIG = 1u << 6,
    CF_SURVEY_SKIP_FABRIC = 1u << 7,
    CF_SURVEY_SKIP_NVML = 1u << 8,   /* do not load NVML (the rest of the fabric is still read) */
};

struct cf_survey_opts {
    const char *survey_file;  /* JSON to inject; NULL: $CCLFORGE_SURVEY; "" disables injection */
    const char *sysfs_root;   /* prefix for /sys (fake KFD trees in tests); NULL = "" */
    const char *libtorch;     /* --libtorch DIR: a libtorch root, a lib/ dir, a torch package dir or a variants root */
    const char *python;       /* interpreter used to locate torch; NULL = "python3" */
    const char *const *env;   /* "KEY=VALUE" entries consulted before getenv(); NULL = process environment only */
    int no_nvidia_driver;     /* do not dlopen libcuda / run nvidia-smi (tests: "no GPU" hosts) */
    const char *nvidia_driver_lib; /* library to dlopen for the driver API; NULL = "libcuda.so.1" */
    const char *nvml_lib;     /* library to dlopen for NVML; NULL = "libnvidia-ml.so.1" */
    int no_default_roots;     /* only roots named by the environment / PATH / options (tests) */
    unsigned skip;            /* CF_SURVEY_SKIP_* */
    int no_cache;             /* ask every probe again, scan every file again; remember nothing on disk */
};

/* Probes this machine (plus injection, see above). Returns -1 only for errors the
 * user must fix (an unreadable or malformed survey file); anything absent on the
 * machine is data (empty lists, probe notes), not an error. */
int cf_survey_run(const struct cf_survey_opts *opts, struct cf_survey *out, cf_error *err);
void cf_survey_release(struct cf_survey *s);

/* JSON. to_json returns a cJSON object (a cJSON *, typed void * so this header
 * does not need cjson) holding the sections; the caller adds "schema" and owns it. */
void *cf_survey_to_json(const struct cf_survey *s);
/* Fills the sections present in `json` (a cJSON object) into s and marks them injected.
 * Unknown keys are ignored; wrong types are a CF_ERR_FORMAT error naming the key. */
int cf_survey_from_json(const void *json, struct cf_survey *s, cf_error *err);
/* A saved report's host facts as written (host.survey_seconds, injected_from,
 * injected_sections, which become s->injected): after cf_survey_from_json and
 * cf_survey_check_whole, for a document read to be shown, not injected. */
int cf_survey_host_from_json(const void *json, struct cf_survey *s, cf_error *err);
/* Reads a survey (or a doctor --json report) from a file into s (sections present only). */
int cf_survey_load(const char *path, struct cf_survey *s, cf_error *err);
/* Writes s as {"schema":"cclforge.survey/1", ...sections} to path (atomically). */
int cf_survey_save(const struct cf_survey *s, const char *path, cf_error *err);

/* Convenience queries for planners (nccl build, bridge). */
/* Distinct archs of the GPUs ("sm_61", "gfx928"), sorted numerically, visible ones only when visible_only. */
void cf_survey_gpu_archs(const struct cf_survey *s, int visible_only, struct strvec *out);
/* The first toolkit of that vendor id ("cuda", "rocm", "dtk"), NULL if none. */
const struct cf_toolkit *cf_survey_toolkit(const struct cf_survey *s, const char *vendor);
/* The libtorch in use (torches[0]), NULL if none. */
const struct cf_libtorch *cf_survey_torch(const struct cf_survey *s);
/* The comm library ranks of this host would use: libtorch's (embedded copy, else
 * the loaded one), else the system one the loader finds, else the toolkit's; of
 * the kind libtorch's flavour, else the visible GPUs' vendor, asks for. */
const struct cf_comm_lib *cf_survey_active_comm(const struct cf_survey *s);
const struct cf_compiler *cf_survey_compiler(const struct cf_survey *s, const char *name);
/* 1 when root holds one of p's markers (files or globs, e.g. DTK's
 * cuda/cuda-*\/include): doctor's test of which vendor a root belongs to. */
int cf_toolkit_has_markers(const struct cf_vendor_profile *p, const char *root);
/* The first of p's default roots (globs expanded in order, e.g. /opt/dtk then
 * /opt/dtk-*) that is a directory with one of p's markers, as doctor's survey
 * finds it; NULL when none. Caller frees. */
char *cf_toolkit_default_root(const struct cf_vendor_profile *p);
/* Where this host's loader finds soname (a library a toolkit provides): path and
 * how (LD_LIBRARY_PATH, ld.so.cache, default dirs), NULL when it does not; then
 * in_toolkit: the file under the root a vendor root variable names (toolkit_var,
 * "DTK_HOME") though the loader does not look there. vendor_word NULL: any vendor. */
struct cf_host_lib {
    char *path, *how, *considered;
    char *in_toolkit, *toolkit_var;
};
int cf_host_lib_locate(const char *soname, const char *vendor_word, struct cf_host_lib *out, cf_error *err);
void cf_host_lib_release(struct cf_host_lib *h);
/* The comm-library profile of c by its kind (NCCL when c or its kind is unknown). */
const struct cf_comm_profile *cf_comm_lib_profile(const struct cf_comm_lib *c);
/* What one Python interpreter says about itself, asked without importing any
 * package: importlib.util.find_spec locates torch without running it (importing
 * torch takes seconds and may fail on the broken install being diagnosed). */
struct cf_python_info {
    char *executable;  /* sys.executable */
    char *version;     /* "3.11" */
    char *tag;         /* "cp311" */
    char *ext_suffix;  /* ".cpython-311-x86_64-linux-gnu.so"; NULL when it reports none */
    char *include;     /* sysconfig's include dir (where Python.h belongs) */
    char *torch_dir;   /* the torch package directory, NULL when not installed */
    char *nccl_dir;    /* nvidia.nccl's directory (site-packages/nvidia/nccl), NULL when absent */
};
/* Runs `python` (a path, or a name looked up on PATH) once. env: changes for the
 * child ("KEY=VALUE" sets, "KEY" unsets; NULL none); isolated: python -I (no
 * PYTHONPATH, no user site). -1 with err set when it is missing or fails. */
int cf_python_probe(const char *python, const char *const *env, int isolated, struct cf_python_info *out,
                    cf_error *err);
void cf_python_info_release(struct cf_python_info *info);
/* Asks the compiler at path (or found on PATH) for its version with --version, as
 * doctor does, and fills c: name (its file name), path, family, banner, version,
 * major, minor, and for nvcc the host compiler range. -1 with err set when it
 * does not run or prints no version (c is filled as far as known either way);
 * release with cf_compiler_release. */
int cf_compiler_probe(const char *path, struct cf_compiler *c, cf_error *err);
/* The same, answering from the probe cache (cclforge/depcache.h: valid while
 * the compiler's binary is unchanged) when use_cache. */
int cf_compiler_probe_cached(const char *path, int use_cache, struct cf_compiler *c, cf_error *err);
void cf_compiler_release(struct cf_compiler *c);
const char *cf_torch_flavour_name(enum cf_torch_flavour f); /* "cpu", "cuda", "hip", "unknown" */
const char *cf_survey_section_name(enum cf_survey_section sec); /* the JSON key */
/* 0 when a loaded document holds a host's facts as `doctor --json` writes
 * them (host, toolkits, gpus, driver, libtorch, comm_libraries: what compare
 * and gather compare); else -1 with err (CF_ERR_FORMAT) naming the sections
 * missing and the fix. A hand-written subset injects sections (--survey)
 * but describes no host. `name` says which document. */
int cf_survey_check_whole(const struct cf_survey *s, const char *name, cf_error *err);

/* Pieces usable on their own (and unit-tested). */
/* Applies a *_VISIBLE_DEVICES value to the GPUs of one vendor (indices or UUID
 * prefixes; parsing stops at the first invalid entry as the runtimes do).
 * value NULL = all visible. */
void cf_apply_visible_devices(struct cf_gpu *gpus, size_t n, const char *vendor, const char *value);
/* The nvidia-nccl version a torch package's dist-info pins (Requires-Dist:
 * nvidia-nccl-cu13==2.30.7 -> "2.30.7"), NULL when none. Caller frees. */
char *cf_torch_nccl_pin(const char *torch_dir);
/* NCCL_VERSION_CODE for a version string "2.28.9"; 0 when unparsable. */
int cf_comm_version_code(const char *version);

#ifdef __cplusplus
}
#endif
#endif
