/* Private interface between the survey's probe files (src/env/). */
#ifndef CCLFORGE_ENV_INTERNAL_H
#define CCLFORGE_ENV_INTERNAL_H

#include "cclforge/survey.h"
#include "cclforge/vendor.h"

/* opts->env first, then the process environment. Empty values count as unset. */
const char *env_get(const struct cf_survey_opts *opts, const char *key);

/* Each probe fills its section(s) of s; none fails: what is absent is data. */
void probe_toolkits(const struct cf_survey_opts *opts, struct cf_survey *s);
void probe_compilers(const struct cf_survey_opts *opts, struct cf_survey *s);
void probe_gpus_nvidia(const struct cf_survey_opts *opts, struct cf_survey *s);
void probe_gpus_kfd(const struct cf_survey_opts *opts, struct cf_survey *s);
void probe_comm_libs(const struct cf_survey_opts *opts, struct cf_survey *s);
void probe_libtorch(const struct cf_survey_opts *opts, struct cf_survey *s);

/* Appends a zeroed item to a survey array and returns it. */
struct cf_gpu *survey_add_gpu(struct cf_survey *s);
struct cf_gpu_probe *survey_add_probe(struct cf_survey *s, const char *vendor, const char *method);
struct cf_toolkit *survey_add_toolkit(struct cf_survey *s);
struct cf_compiler *survey_add_compiler(struct cf_survey *s);
struct cf_comm_lib *survey_add_comm_lib(struct cf_survey *s);
struct cf_libtorch *survey_add_torch(struct cf_survey *s);

/* Reads a comm library's facts (banner, version, GPU archs, closure) from a file.
 * how: "loaded", "toolkit", ... Returns NULL when the file has no banner and
 * `require_banner` is set (a libtorch without an embedded copy). */
struct cf_comm_lib *comm_lib_examine(const char *path, const char *kind_hint, const char *how,
                                     int require_banner);

/* Expands one path with at most one '*' component into existing paths (sorted). */
void glob_paths(const char *pattern, struct strvec *out);

/* Newest GCC / clang major nvcc of that CUDA version accepts (table; 0 = unknown). */
int nvcc_host_gcc_max(int cuda_major, int cuda_minor);
int nvcc_host_clang_max(int cuda_major, int cuda_minor);

#endif
