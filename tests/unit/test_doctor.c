/* Findings: every check has a survey that triggers it and one where it stays
 * silent. Surveys are injected as JSON, exactly as `doctor --survey` reads them. */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/fs.h"
#include "cclforge/ncclconf.h"
#include "cclforge/survey.h"

static void load(const char *json, struct cf_survey *s)
{
    memset(s, 0, sizeof *s);
    cJSON *doc = cJSON_Parse(json);
    if (!doc)
        fail_msg("test JSON does not parse: %s", json);
    cf_error err = CF_ERROR_INIT;
    if (cf_survey_from_json(doc, s, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    cJSON_Delete(doc);
}

/* The severity of finding `id` after diagnosing `json`, or -1 when absent. */
static int diagnose(const char *json, const char *id, char **why)
{
    struct cf_survey s;
    load(json, &s);
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_diagnose(&s, &f);
    int sev = -1;
    for (size_t i = 0; i < f.n; i++)
        if (!strcmp(f.v[i].id, id)) {
            sev = (int)f.v[i].severity;
            if (why)
                *why = cf_asprintf("%s | %s", f.v[i].why, f.v[i].remedy ? f.v[i].remedy : "");
            break;
        }
    /* Findings come errors first. */
    for (size_t i = 1; i < f.n; i++)
        assert_true(f.v[i - 1].severity >= f.v[i].severity);
    cf_findings_release(&f);
    cf_survey_release(&s);
    return sev;
}

#define NCCL_CU13 "\"archs\": [\"sm_75\",\"sm_80\",\"sm_90\",\"sm_100\",\"sm_100f\",\"sm_110\",\"sm_120\",\"compute_120\"]"
#define SYS_NCCL(archs) \
    "\"comm_libraries\": [{\"kind\":\"nccl\",\"path\":\"/usr/lib/libnccl.so.2\",\"how\":\"loaded\",\"version\":\"2.28.9\"," archs "}]"
#define GPUS_PASCAL_BLACKWELL "\"gpus\": [{\"arch\":\"sm_61\"},{\"arch\":\"sm_120\"}]"
#define GPUS_AMPERE_HOPPER "\"gpus\": [{\"arch\":\"sm_80\"},{\"arch\":\"sm_90\"}]"

static void test_arch_coverage_rules(void **state)
{
    struct strvec a = STRVEC_INIT;
    cf_strvec_split(&a, "sm_80 sm_90a compute_90a sm_100f", " ", 0);
    assert_true(cf_arch_covered(&a, "sm_80"));
    assert_true(cf_arch_covered(&a, "sm_86"));  /* same major, higher minor */
    assert_true(cf_arch_covered(&a, "sm_89"));
    assert_false(cf_arch_covered(&a, "sm_75")); /* SASS never runs on an older GPU */
    assert_true(cf_arch_covered(&a, "sm_90"));  /* sm_90a on exactly 9.0 */
    assert_true(cf_arch_covered(&a, "sm_103")); /* family code sm_100f on 10.3 */
    assert_false(cf_arch_covered(&a, "sm_120")); /* no PTX that could JIT for it */
    cf_strvec_clear(&a);
    cf_strvec_split(&a, "sm_75 compute_75", " ", 0);
    assert_true(cf_arch_covered(&a, "sm_120")); /* PTX JITs for any newer GPU */
    assert_false(cf_arch_covered(&a, "sm_61"));
    cf_strvec_clear(&a);
    cf_strvec_split(&a, "sm_86", " ", 0);
    assert_false(cf_arch_covered(&a, "sm_80")); /* 8.6 code on an 8.0 GPU: no */
    cf_strvec_clear(&a);
    cf_strvec_split(&a, "gfx90a:xnack- gfx942", " ", 0);
    assert_true(cf_arch_covered(&a, "gfx90a"));
    assert_true(cf_arch_covered(&a, "gfx942"));
    assert_false(cf_arch_covered(&a, "gfx928"));
    assert_false(cf_arch_covered(&a, "gfx90"));
    cf_strvec_clear(&a);
}

static void test_gpu_arch_not_covered(void **state)
{
    char *why = NULL;
    /* Pascal + Blackwell on CUDA 13's NCCL: sm_61 missing, sm_120 present. */
    assert_int_equal(diagnose("{" GPUS_PASCAL_BLACKWELL "," SYS_NCCL(NCCL_CU13) "}", "gpu-arch-not-covered", &why),
                     CF_SEV_ERROR);
    assert_non_null(strstr(why, "sm_61"));
    assert_null(strstr(why, "for sm_61, sm_120"));
    assert_non_null(strstr(why, "cclforge nccl build --tag v2.28.9-1 --archs sm_61,sm_120"));
    assert_null(strstr(why, "another toolkit")); /* no CUDA toolkit surveyed: nothing to judge */
    free(why);
    /* With CUDA 13 as the local toolkit the remedy says which toolkit can build sm_61. */
    assert_int_equal(diagnose("{\"toolkits\": [{\"vendor\":\"cuda\",\"root\":\"/usr/local/cuda\",\"version\":\"13.0.88\"}],"
                              GPUS_PASCAL_BLACKWELL "," SYS_NCCL(NCCL_CU13) "}",
                              "gpu-arch-not-covered", &why),
                     CF_SEV_ERROR);
    assert_non_null(strstr(why, "use a CUDA 12.x toolkit"));
    free(why);
    /* Archs CUDA 13 can build need no such note. */
    assert_int_equal(diagnose("{\"toolkits\": [{\"vendor\":\"cuda\",\"root\":\"/usr/local/cuda\",\"version\":\"13.0.88\"}],"
                              "\"gpus\": [{\"arch\":\"sm_120\"}]," SYS_NCCL("\"archs\": [\"sm_90\"]") "}",
                              "gpu-arch-not-covered", &why),
                     CF_SEV_ERROR);
    assert_null(strstr(why, "another toolkit"));
    free(why);
    assert_int_equal(diagnose("{" GPUS_AMPERE_HOPPER "," SYS_NCCL(NCCL_CU13) "}", "gpu-arch-not-covered", NULL), -1);
    /* A hidden Pascal does not count. */
    assert_int_equal(diagnose("{\"gpus\": [{\"arch\":\"sm_61\",\"visible\":false},{\"arch\":\"sm_120\"}]," SYS_NCCL(
                                  NCCL_CU13) "}",
                              "gpu-arch-not-covered", NULL),
                     -1);
    /* Archs never read (null) cannot be judged. */
    assert_int_equal(diagnose("{" GPUS_PASCAL_BLACKWELL "," SYS_NCCL("\"archs\": null") "}", "gpu-arch-not-covered",
                              NULL),
                     -1);
    /* A DCU gfx928 host: the DTK toolkit's RCCL lacks it -> warning (not the active copy); RCCL built for it: silent. */
    const char *dcu_bad = "{\"gpus\":[{\"vendor\":\"hygon\",\"arch\":\"gfx928\"}],"
                          "\"comm_libraries\":[{\"kind\":\"rccl\",\"path\":\"/opt/dtk/lib/librccl.so.1\",\"how\":\"loaded\","
                          "\"version\":\"2.18.3\",\"archs\":[\"gfx906\",\"gfx926\"]}]}";
    assert_int_equal(diagnose(dcu_bad, "gpu-arch-not-covered", NULL), CF_SEV_ERROR);
    const char *dcu_ok = "{\"gpus\":[{\"vendor\":\"hygon\",\"arch\":\"gfx928\"}],"
                         "\"comm_libraries\":[{\"kind\":\"rccl\",\"path\":\"/opt/dtk/lib/librccl.so.1\",\"how\":\"loaded\","
                         "\"version\":\"2.18.3\",\"archs\":[\"gfx906\",\"gfx928:xnack-\"]}]}";
    assert_int_equal(diagnose(dcu_ok, "gpu-arch-not-covered", NULL), -1);
    /* On a DCU host the RCCL is the library in use, even with a CUDA NCCL on the loader path. */
    const char *dcu_host = "{\"gpus\":[{\"vendor\":\"hygon\",\"arch\":\"gfx928\"}]," SYS_NCCL(NCCL_CU13) ","
                           "\"toolkits\":[{\"vendor\":\"dtk\",\"root\":\"/opt/dtk\",\"comm\":{\"kind\":\"rccl\","
                           "\"path\":\"/opt/dtk/lib/librccl.so.1\",\"version\":\"2.18.3\",\"archs\":[\"gfx906\"]}}]}";
    assert_int_equal(diagnose(dcu_host, "gpu-arch-not-covered", NULL), CF_SEV_ERROR);
    struct cf_survey s;
    load(dcu_host, &s);
    assert_string_equal(cf_survey_active_comm(&s)->kind, "rccl");
    cf_survey_release(&s);
    /* An NVIDIA GPU is not judged against an RCCL. */
    const char *mixed = "{\"gpus\":[{\"arch\":\"sm_61\"}],"
                        "\"comm_libraries\":[{\"kind\":\"rccl\",\"path\":\"/r\",\"how\":\"loaded\",\"archs\":[\"gfx90a\"]}]}";
    assert_int_equal(diagnose(mixed, "gpu-arch-not-covered", NULL), -1);
    /* No GPU: nothing to check. */
    assert_int_equal(diagnose("{\"gpus\": []," SYS_NCCL(NCCL_CU13) "}", "gpu-arch-not-covered", NULL), -1);
}

#define TORCH(extra)                                                                                            \
    "\"libtorch\":[{\"root\":\"/lt\",\"version\":\"2.5.1+cu124\",\"flavour\":\"cuda\",\"gpu_runtime_version\":\"12.4\"," \
    "\"gpu_lib\":\"/lt/lib/libtorch_cuda.so\"" extra "}]"

static void test_torch_arch_not_covered(void **state)
{
    char *why = NULL;
    assert_int_equal(diagnose("{" GPUS_PASCAL_BLACKWELL "," TORCH(",\"archs\":[\"sm_80\",\"compute_80\"]") "}",
                              "torch-arch-not-covered", &why),
                     CF_SEV_ERROR);
    assert_non_null(strstr(why, "TORCH_CUDA_ARCH_LIST=\"6.1;12.0\""));
    assert_null(strstr(why, "for sm_120")); /* compute_80 PTX covers sm_120 */
    free(why);
    assert_int_equal(diagnose("{" GPUS_AMPERE_HOPPER "," TORCH(",\"archs\":[\"sm_80\",\"compute_80\"]") "}",
                              "torch-arch-not-covered", NULL),
                     -1);
}

static void test_nccl_mismatch(void **state)
{
#define LOADED(v) ",\"nccl_built_against\":\"2.21.5\",\"loaded\":{\"kind\":\"nccl\",\"path\":\"/n/libnccl.so.2\",\"version\":\"" v "\"}"
    char *why = NULL;
    assert_int_equal(diagnose("{" TORCH(LOADED("2.20.3")) "}", "nccl-mismatch", &why), CF_SEV_ERROR);
    assert_non_null(strstr(why, "pip install nvidia-nccl-cu12==2.21.5"));
    free(why);
    assert_int_equal(diagnose("{" TORCH(LOADED("2.27.5")) "}", "nccl-mismatch", NULL), CF_SEV_WARNING);
    assert_int_equal(diagnose("{" TORCH(LOADED("2.21.5")) "}", "nccl-mismatch", NULL), -1);
    /* No pin known: nothing to compare. */
    assert_int_equal(diagnose("{" TORCH(",\"loaded\":{\"kind\":\"nccl\",\"path\":\"/n\",\"version\":\"2.20.3\"}") "}",
                              "nccl-mismatch", NULL),
                     -1);
#undef LOADED
}

static void test_two_nccl_copies(void **state)
{
#define EMB ",\"embedded\":{\"kind\":\"nccl\",\"path\":\"/lt/lib/libtorch_cuda.so\",\"how\":\"embedded\",\"version\":\"2.21.5\"}"
    assert_int_equal(diagnose("{" TORCH(EMB ",\"needs_comm_lib\":true,\"loaded\":{\"kind\":\"nccl\",\"path\":\"/n\","
                                            "\"version\":\"2.21.5\"}") "}",
                              "two-nccl-copies", NULL),
                     CF_SEV_WARNING);
    assert_int_equal(diagnose("{" TORCH(EMB ",\"needs_comm_lib\":false") "}", "two-nccl-copies", NULL), -1);
    /* Injected surveys may omit any path (found by fuzz_survey_json). */
    assert_int_equal(diagnose("{\"libtorch\":[{\"flavour\":\"cuda\",\"needs_comm_lib\":true,\"embedded\":{\"kind\":"
                              "\"nccl\"},\"loaded\":{}}]}",
                              "two-nccl-copies", NULL),
                     CF_SEV_WARNING);
#undef EMB
}

static void test_closure_findings(void **state)
{
    char *why = NULL;
    assert_int_equal(diagnose("{" TORCH(",\"missing_libs\":[\"libcudnn.so.9\"]") "}", "missing-libraries", &why),
                     CF_SEV_ERROR);
    assert_non_null(strstr(why, "libcudnn.so.9"));
    free(why);
    assert_int_equal(diagnose("{" TORCH(",\"undefined_symbols\":[\"ncclCommRegister (needed by libtorch_cuda.so)\"]") "}",
                              "undefined-symbols", &why),
                     CF_SEV_ERROR);
    assert_non_null(strstr(why, "ncclCommRegister"));
    free(why);
    assert_int_equal(diagnose("{" SYS_NCCL("\"missing_libs\":[\"libcudart.so.13\"]") "}", "missing-libraries", NULL),
                     CF_SEV_ERROR);
    assert_int_equal(diagnose("{" TORCH(",\"missing_libs\":[]") "}", "missing-libraries", NULL), -1);
    assert_int_equal(diagnose("{" TORCH("") "}", "undefined-symbols", NULL), -1);
}

#define GXX(v) "{\"name\":\"g++\",\"path\":\"/usr/bin/g++\",\"version\":\"" v "\"}"
#define NVCC_MAX12 "{\"name\":\"nvcc\",\"path\":\"/c/bin/nvcc\",\"version\":\"12.2.140\",\"host_gcc_max\":12}"

static void test_compiler_findings(void **state)
{
    assert_int_equal(diagnose("{" TORCH("") ",\"compilers\":[" GXX("8.5.0") "]}", "gcc-too-old", NULL), CF_SEV_ERROR);
    assert_int_equal(diagnose("{\"libtorch\":[],\"compilers\":[" GXX("8.5.0") "]}", "gcc-too-old", NULL),
                     CF_SEV_WARNING);
    assert_int_equal(diagnose("{" TORCH("") ",\"compilers\":[" GXX("9.1.0") "]}", "gcc-too-old", NULL), -1);
    char *why = NULL;
    assert_int_equal(diagnose("{\"compilers\":[" GXX("13.2.0") "," NVCC_MAX12 "]}", "host-compiler-unsupported", &why),
                     CF_SEV_WARNING);
    assert_non_null(strstr(why, "g++-12"));
    free(why);
    assert_int_equal(diagnose("{\"compilers\":[" GXX("12.3.0") "," NVCC_MAX12 "]}", "host-compiler-unsupported", NULL),
                     -1);
    assert_int_equal(diagnose("{\"compilers\":[" GXX("13.2.0") "]}", "host-compiler-unsupported", NULL), -1);
}

static void test_driver_too_old(void **state)
{
    /* Driver API says CUDA 12.2; libtorch needs 12.4: minor-version compatibility only. */
    assert_int_equal(diagnose("{\"driver\":{\"cuda_driver_version\":12020}," TORCH("") "}", "driver-too-old", NULL),
                     CF_SEV_WARNING);
    /* An NCCL built for CUDA 13.0 on a 12.x driver cannot run. */
    char *why = NULL;
    assert_int_equal(diagnose("{\"driver\":{\"nvidia_version\":\"535.54.03\"},\"comm_libraries\":[{\"kind\":\"nccl\","
                              "\"path\":\"/n\",\"how\":\"loaded\",\"version\":\"2.28.9\",\"cuda_version\":\"13.0\"}]}",
                              "driver-too-old", &why),
                     CF_SEV_ERROR);
    assert_non_null(strstr(why, "580.65.06"));
    free(why);
    assert_int_equal(diagnose("{\"driver\":{\"cuda_driver_version\":13000}," TORCH("") "}", "driver-too-old", NULL), -1);
    /* No driver (a build box): not judged. */
    assert_int_equal(diagnose("{\"driver\":{}," TORCH("") "}", "driver-too-old", NULL), -1);
    assert_int_equal(cf_driver_max_cuda("580.65.06"), 13000);
    assert_int_equal(cf_driver_max_cuda("550.54.15"), 12040);
    assert_int_equal(cf_driver_max_cuda("400.1"), 0);
    assert_string_equal(cf_cuda_min_driver(12, 7), "560.28.03");
}

static void test_presence_findings(void **state)
{
    /* No GPU on a dev box is information, not a problem. */
    assert_int_equal(diagnose("{\"gpus\":[],\"gpu_probes\":[{\"vendor\":\"nvidia\",\"note\":\"no NVIDIA driver\"}]}",
                              "no-gpu", NULL),
                     CF_SEV_INFO);
    assert_int_equal(diagnose("{" GPUS_AMPERE_HOPPER "}", "no-gpu", NULL), -1);
    assert_int_equal(diagnose("{\"gpus\":[{\"arch\":\"sm_80\",\"visible\":false}]}", "no-visible-gpu", NULL),
                     CF_SEV_WARNING);
    assert_int_equal(diagnose("{" GPUS_AMPERE_HOPPER "}", "no-visible-gpu", NULL), -1);
    assert_int_equal(diagnose("{\"libtorch\":[]}", "no-libtorch", NULL), CF_SEV_INFO);
    assert_int_equal(diagnose("{" TORCH("") "}", "no-libtorch", NULL), -1);
    assert_int_equal(diagnose("{\"libtorch\":[{\"root\":\"/x\",\"found_by\":\"LIBTORCH\",\"problem\":\"no lib\"}]}",
                              "libtorch-unusable", NULL),
                     CF_SEV_WARNING);
    assert_int_equal(diagnose("{" TORCH("") "}", "libtorch-unusable", NULL), -1);
    assert_int_equal(diagnose("{\"gpus\":[{\"arch\":\"sm_80\"}],\"comm_libraries\":[],\"toolkits\":[],\"libtorch\":[]}",
                              "no-comm-library", NULL),
                     CF_SEV_INFO);
    assert_int_equal(diagnose("{" GPUS_AMPERE_HOPPER "," SYS_NCCL(NCCL_CU13) "}", "no-comm-library", NULL), -1);
    /* No GPU here: say which GPUs the NCCL cannot serve. */
    char *floor = NULL;
    assert_int_equal(diagnose("{\"gpus\": []," SYS_NCCL(NCCL_CU13) "}", "comm-arch-floor", &floor), CF_SEV_INFO);
    assert_non_null(strstr(floor, "sm_75 and newer"));
    free(floor);
    assert_int_equal(diagnose("{" GPUS_AMPERE_HOPPER "," SYS_NCCL(NCCL_CU13) "}", "comm-arch-floor", NULL), -1);
    /* A DTK libtorch beside a CPU-only Python torch on a DCU host: build the bridge. */
    const char *dcu = "{\"gpus\":[{\"vendor\":\"hygon\",\"arch\":\"gfx928\"}],\"libtorch\":["
                      "{\"root\":\"/py/torch\",\"flavour\":\"cpu\",\"version\":\"2.1.0+cpu\"},"
                      "{\"root\":\"/opt/dtk-torch\",\"flavour\":\"hip\",\"version\":\"2.1.0\"}]}";
    char *why = NULL;
    assert_int_equal(diagnose(dcu, "cpu-torch-beside-gpu-libtorch", &why), CF_SEV_WARNING);
    assert_non_null(strstr(why, "cclforge bridge build --libtorch /opt/dtk-torch"));
    free(why);
    assert_int_equal(diagnose("{\"gpus\":[{\"arch\":\"gfx928\",\"vendor\":\"hygon\"}],\"libtorch\":[{\"root\":\"/a\","
                              "\"flavour\":\"hip\"}]}",
                              "cpu-torch-beside-gpu-libtorch", NULL),
                     -1);
}

/* ---- compare ---- */

static int compare(const char *const *jsons, size_t n, const char *id, char **why)
{
    struct cf_survey *hosts = cf_xcalloc(n, sizeof *hosts);
    const char **labels = cf_xcalloc(n, sizeof *labels);
    static const char *const names[] = { "host-a", "host-b", "host-c" };
    for (size_t i = 0; i < n; i++) {
        load(jsons[i], &hosts[i]);
        labels[i] = names[i];
    }
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_compare(hosts, labels, n, &f);
    int sev = -1;
    for (size_t i = 0; i < f.n; i++)
        if (!strcmp(f.v[i].id, id)) {
            sev = (int)f.v[i].severity;
            if (why) /* "subject: why" */
                *why = cf_asprintf("%s: %s", f.v[i].subject, f.v[i].why);
            break;
        }
    cf_findings_release(&f);
    for (size_t i = 0; i < n; i++)
        cf_survey_release(&hosts[i]);
    free(hosts);
    free(labels);
    return sev;
}

#define HOST(gpus, comm_kind, ver, archs, torch)                                                                 \
    "{\"gpus\":[" gpus "],\"comm_libraries\":[{\"kind\":\"" comm_kind "\",\"path\":\"/l\",\"how\":\"loaded\","  \
    "\"version\":\"" ver "\",\"archs\":[" archs "]}],\"libtorch\":[{\"root\":\"/t\",\"flavour\":\"cuda\",\"version\":\"" torch "\"}]}"

static void test_compare(void **state)
{
    const char *same[] = {
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.28.9", "\"sm_80\"", "2.9.1"),
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.28.9", "\"sm_80\"", "2.9.1"),
    };
    assert_int_equal(compare(same, 2, "nccl-version-differs", NULL), -1);
    assert_int_equal(compare(same, 2, "torch-version-differs", NULL), -1);
    assert_int_equal(compare(same, 2, "host-lib-lacks-arch", NULL), -1);
    assert_int_equal(compare(same, 2, "comm-kind-differs", NULL), -1);

    const char *patch[] = {
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.28.9", "\"sm_80\"", "2.9.1"),
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.28.7", "\"sm_80\"", "2.9.1"),
    };
    char *why = NULL;
    assert_int_equal(compare(patch, 2, "nccl-version-differs", &why), CF_SEV_ERROR);
    assert_non_null(strstr(why, "host-a: NCCL 2.28.9"));
    assert_non_null(strstr(why, "host-b: NCCL 2.28.7"));
    free(why);

    const char *kinds[] = {
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.18.3", "\"sm_80\"", "2.1.0"),
        HOST("{\"vendor\":\"hygon\",\"arch\":\"gfx928\"}", "rccl", "2.18.3", "\"gfx928\"", "2.1.0"),
    };
    assert_int_equal(compare(kinds, 2, "comm-kind-differs", NULL), CF_SEV_ERROR);
    assert_int_equal(compare(kinds, 2, "nccl-version-differs", NULL), -1);

    const char *torch[] = {
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.28.9", "\"sm_80\"", "2.9.1"),
        HOST("{\"arch\":\"sm_80\"}", "nccl", "2.28.9", "\"sm_80\"", "2.8.0"),
    };
    assert_int_equal(compare(torch, 2, "torch-version-differs", NULL), CF_SEV_ERROR);

    /* Host a's NCCL has no code for host b's Pascal: a warning for a; b's own lack is an error. */
    const char *archs[] = {
        HOST("{\"arch\":\"sm_120\"}", "nccl", "2.28.9", "\"sm_120\",\"compute_120\"", "2.9.1"),
        HOST("{\"arch\":\"sm_61\"}", "nccl", "2.28.9", "\"sm_120\",\"compute_120\"", "2.9.1"),
        HOST("{\"arch\":\"sm_120\"}", "nccl", "2.28.9", "\"sm_61\",\"sm_120\"", "2.9.1"),
    };
    assert_int_equal(compare(archs, 3, "host-lib-lacks-arch", &why), CF_SEV_WARNING);
    assert_non_null(strstr(why, "host-a: "));
    assert_non_null(strstr(why, "lacks code for GPUs of other hosts (sm_61)"));
    free(why);
    assert_int_equal(compare(archs, 3, "gpu-arch-not-covered", &why), CF_SEV_ERROR);
    assert_non_null(strstr(why, "host-b: "));
    assert_non_null(strstr(why, "no code for the host's own GPUs: sm_61"));
    free(why);
    assert_int_equal(compare(archs + 2, 1, "host-lib-lacks-arch", NULL), -1);
}

static void test_findings_json(void **state)
{
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_findings_add(&f, CF_SEV_WARNING, "x", "s", NULL, "why %d", 1);
    cf_findings_add(&f, CF_SEV_WARNING, "x", "s", NULL, "duplicate of the same id+subject");
    cf_findings_add(&f, CF_SEV_ERROR, "y", "t", "do this", "because");
    assert_int_equal(f.n, 2);
    assert_int_equal(cf_findings_worst(&f), CF_SEV_ERROR);
    cJSON *a = cf_findings_to_json(&f);
    char *text = cJSON_PrintUnformatted(a);
    assert_string_equal(text, "[{\"severity\":\"warning\",\"id\":\"x\",\"subject\":\"s\",\"why\":\"why 1\",\"remedy\":null},"
                              "{\"severity\":\"error\",\"id\":\"y\",\"subject\":\"t\",\"why\":\"because\",\"remedy\":\"do this\"}]");
    free(text);
    cJSON_Delete(a);
    cf_findings_release(&f);
}

/* doctor --gather's per-rank comparison: NCCL variables that differ between the
 * ranks of one host are named with the ranks grouped by value; a difference
 * between hosts only is the host comparison's; a secret's value never appears. */
static void test_rank_env_differences(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    char *home = cf_path_join(dir, "home"), *etc = cf_path_join(dir, "etc");
    assert_int_equal(cf_mkdir_p(home, 0755, NULL), 0);
    assert_int_equal(cf_mkdir_p(etc, 0755, NULL), 0);
    char *e0[] = { "NCCL_IB_HCA=mlx5_0", "NCCL_ALGO=Ring", NULL };
    char *e1[] = { "NCCL_ALGO=Ring", NULL };
    char *e2[] = { "NCCL_ALGO=Tree", "NCCL_API_TOKEN=s3cr3t", NULL };
    char *eb[] = { "NCCL_ALGO=Tree", NULL };
    char *none[] = { NULL };
    char *debug[] = { "NCCL_DEBUG=INFO", NULL };
    char **envs[16] = { e0, e1, e2, eb, eb };
    const char *hosts[16] = { "a", "a", "a", "b", "b" };
    for (int i = 5; i < 16; i++) { /* host c: eleven ranks, one of them with NCCL_DEBUG */
        envs[i] = i == 15 ? debug : none;
        hosts[i] = "c";
    }
    struct cf_nccl_config c[16];
    struct cf_rank_env r[17];
    for (int i = 0; i < 16; i++) {
        struct cf_nccl_config_inputs in = { "nccl", envs[i], home, etc };
        cf_nccl_config_build(&in, &c[i]);
        r[i] = (struct cf_rank_env){ i, hosts[i], &c[i] };
    }
    r[16] = (struct cf_rank_env){ 16, "b", NULL }; /* sent no configuration: not compared */
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_compare_ranks(r, 17, &f);
    assert_int_equal(f.n, 4);
    const char *want[][2] = {
        { "NCCL_IB_HCA on a", "rank 0 NCCL_IB_HCA=mlx5_0; ranks 1, 2 unset" },
        { "NCCL_ALGO on a", "ranks 0, 1 NCCL_ALGO=Ring; rank 2 NCCL_ALGO=Tree" },
        { "NCCL_API_TOKEN on a", "ranks 0, 1 unset; rank 2 NCCL_API_TOKEN=(hidden)" },
        { "NCCL_DEBUG on c", "ranks 5, 6, 7, 8, 9, 10, 11, 12 +2 more unset; rank 15 NCCL_DEBUG=INFO" },
    };
    for (size_t i = 0; i < f.n; i++) {
        int hit = 0;
        for (size_t k = 0; k < 4; k++)
            hit |= !strcmp(f.v[i].subject, want[k][0]) && strstr(f.v[i].why, want[k][1]) != NULL;
        if (!hit)
            fail_msg("unexpected finding %s: %s", f.v[i].subject, f.v[i].why);
        assert_string_equal(f.v[i].id, "nccl-env-rank-differs");
        assert_int_equal(f.v[i].severity, CF_SEV_WARNING);
        assert_null(strstr(f.v[i].why, "s3cr3t"));
    }
    cf_findings_release(&f);
    for (int i = 0; i < 16; i++)
        cf_nccl_config_release(&c[i]);
    free(home);
    free(etc);
    ts_cleanup();
}

/* the same finding on many hosts once: grouped by severity, id, the subject after
 * the host, why and remedy; a host's label matched whole; hosts each once */
static void test_findings_group(void **state)
{
    (void)state;
    const char *labels[] = { "node01", "node02", "node03", "node1" };
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_findings_add(&f, CF_SEV_ERROR, "a", "node03: /lib/libnccl.so.2", "build", "lacks sm_90");  /* 0 */
    cf_findings_add(&f, CF_SEV_ERROR, "a", "node01: /lib/libnccl.so.2", "build", "lacks sm_90");  /* joins 0 */
    cf_findings_add(&f, CF_SEV_ERROR, "a", "node02: /lib/libnccl.so.2", "other", "lacks sm_90");  /* 1: remedy */
    cf_findings_add(&f, CF_SEV_ERROR, "a", "node1: /lib/libnccl.so.2", "build", "lacks sm_90");   /* joins 0 */
    cf_findings_add(&f, CF_SEV_WARNING, "hosts-differ", "NCCL", "align", "differs");             /* 2: no host */
    cf_findings_add(&f, CF_SEV_WARNING, "hosts-differ", "GPUs", "align", "differs");             /* 3: no host */
    cf_findings_add(&f, CF_SEV_WARNING, "b", "node10: x", NULL, "y");                            /* 4: no label */
    cf_findings_add(&f, CF_SEV_WARNING, "b", "node0: x", NULL, "y");                             /* 5: a prefix */
    cf_findings_add(&f, CF_SEV_WARNING, "b", "node02: x", NULL, "y");                            /* 6 */
    cf_findings_add(&f, CF_SEV_WARNING, "b", "node03: x", NULL, "z");                            /* 7: why */
    cf_findings_add(&f, CF_SEV_INFO, "b", "node01: x", NULL, "y");                               /* 8: severity */
    cf_findings_add(&f, CF_SEV_WARNING, "b", "node01: x", NULL, "y");                            /* once per id+subject */
    cf_findings_add(&f, CF_SEV_WARNING, "b", "node1: x", NULL, "y");                             /* joins 6 */
    struct cf_finding_groups g;
    cf_findings_group(&f, labels, 4, &g);
    assert_int_equal(g.n, 9);
    static const struct {
        size_t first;
        const char *subject;
        size_t n_hosts;
        size_t hosts[3];
    } want[] = {
        { 0, "/lib/libnccl.so.2", 3, { 0, 2, 3 } }, { 2, "/lib/libnccl.so.2", 1, { 1 } }, { 4, "NCCL", 0, { 0 } },
        { 5, "GPUs", 0, { 0 } }, { 6, "node10: x", 0, { 0 } }, { 7, "node0: x", 0, { 0 } },
        { 8, "x", 2, { 1, 3 } }, { 9, "x", 1, { 2 } }, { 10, "x", 1, { 0 } },
    };
    for (size_t i = 0; i < g.n; i++) {
        assert_ptr_equal(g.v[i].f, &f.v[want[i].first]);
        assert_string_equal(g.v[i].subject, want[i].subject);
        assert_int_equal(g.v[i].n_hosts, want[i].n_hosts);
        for (size_t k = 0; k < want[i].n_hosts; k++)
            assert_int_equal(g.v[i].hosts[k], want[i].hosts[k]);
    }
    cf_finding_groups_release(&g);
    cf_findings_group(&f, labels, 0, &g); /* no host known: every finding alone */
    assert_int_equal(g.n, f.n);
    cf_finding_groups_release(&g);
    cf_findings_release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arch_coverage_rules),
        cmocka_unit_test(test_gpu_arch_not_covered),
        cmocka_unit_test(test_torch_arch_not_covered),
        cmocka_unit_test(test_nccl_mismatch),
        cmocka_unit_test(test_two_nccl_copies),
        cmocka_unit_test(test_closure_findings),
        cmocka_unit_test(test_compiler_findings),
        cmocka_unit_test(test_driver_too_old),
        cmocka_unit_test(test_presence_findings),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_findings_json),
        cmocka_unit_test(test_rank_env_differences),
        cmocka_unit_test(test_findings_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
