/* NVIDIA GPUs: the driver API loaded with dlopen (no CUDA headers or libraries at
 * build time), falling back to nvidia-smi. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "survey/survey_internal.h"

/* The few driver API entry points we use, with their ABI (cuda.h, stable since CUDA 4). */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_int_fn)(int *);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_mem_fn)(size_t *, int);
typedef int (*cu_uuid_fn)(unsigned char *, int);
typedef int (*cu_errstr_fn)(int, const char **);

enum { CU_ATTR_CC_MAJOR = 75, CU_ATTR_CC_MINOR = 76 };
enum { CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_STUB_LIBRARY = 34, CUDA_ERROR_INSUFFICIENT_DRIVER = 35 };

static char *uuid_string(const unsigned char u[16])
{
    return cf_asprintf("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                       u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static char *cu_error_text(void *lib, int rc)
{
    cu_errstr_fn name = (cu_errstr_fn)dlsym(lib, "cuGetErrorName");
    const char *s = NULL;
    if (name && name(rc, &s) == 0 && s)
        return cf_asprintf("error %d (%s)", rc, s);
    return cf_asprintf("error %d", rc);
}

/* Returns the number of devices added, or -1 when the driver API is unusable
 * (probe->note says why). */
static int probe_driver_api(const struct cf_survey_opts *opts, struct cf_survey *s, struct cf_gpu_probe *probe)
{
    const char *libname = opts->nvidia_driver_lib ? opts->nvidia_driver_lib : "libcuda.so.1";
    void *lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        probe->note = cf_asprintf("no NVIDIA driver: %s not found by the loader", libname);
        return -1;
    }
    cu_init_fn cu_init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_int_fn get_version = (cu_int_fn)dlsym(lib, "cuDriverGetVersion");
    cu_int_fn get_count = (cu_int_fn)dlsym(lib, "cuDeviceGetCount");
    cu_device_get_fn get_device = (cu_device_get_fn)dlsym(lib, "cuDeviceGet");
    cu_name_fn get_name = (cu_name_fn)dlsym(lib, "cuDeviceGetName");
    cu_attr_fn get_attr = (cu_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
    cu_mem_fn total_mem = (cu_mem_fn)dlsym(lib, "cuDeviceTotalMem_v2");
    cu_uuid_fn get_uuid = (cu_uuid_fn)dlsym(lib, "cuDeviceGetUuid");
    if (!cu_init || !get_version || !get_count || !get_device || !get_name || !get_attr) {
        probe->note = cf_asprintf("%s lacks driver API entry points (cuInit...): not a usable libcuda", libname);
        dlclose(lib);
        return -1;
    }
    int version = 0;
    if (get_version(&version) == 0)
        s->driver.cuda_driver_version = version;
    int rc = cu_init(0);
    if (rc != 0) {
        char *why = cu_error_text(lib, rc);
        probe->note = rc == CUDA_ERROR_STUB_LIBRARY
                          ? cf_asprintf("cuInit: %s: %s is the toolkit's stub, not a driver", why, libname)
                      : rc == CUDA_ERROR_NO_DEVICE ? cf_asprintf("cuInit: %s: driver loaded, no NVIDIA GPU", why)
                                                   : cf_asprintf("cuInit: %s", why);
        free(why);
        dlclose(lib);
        /* A driver without devices enumerated fine: zero GPUs is the answer. */
        return rc == CUDA_ERROR_NO_DEVICE ? 0 : -1;
    }
    int count = 0;
    if (get_count(&count) != 0)
        count = 0;
    for (int i = 0; i < count; i++) {
        int dev;
        if (get_device(&dev, i) != 0)
            continue;
        struct cf_gpu *g = cf_survey_add_gpu(s);
        g->index = i;
        g->vendor = cf_strdup("nvidia");
        char name[256] = "";
        if (get_name(name, (int)sizeof name - 1, dev) == 0)
            g->name = cf_strdup(name);
        get_attr(&g->cc_major, CU_ATTR_CC_MAJOR, dev);
        get_attr(&g->cc_minor, CU_ATTR_CC_MINOR, dev);
        char arch[16];
        cf_sm_name(g->cc_major, g->cc_minor, arch, sizeof arch);
        g->arch = cf_strdup(arch);
        size_t bytes = 0;
        if (total_mem && total_mem(&bytes, dev) == 0)
            g->memory_bytes = bytes;
        unsigned char u[16];
        if (get_uuid && get_uuid(u, dev) == 0)
            g->uuid = uuid_string(u);
    }
    dlclose(lib);
    return count;
}

/* "index, uuid, memory.total [MiB], compute_cap, driver_version, name" with the name
 * last: names contain commas, so everything after the fifth comma is the name. */
static int probe_nvidia_smi(struct cf_survey *s, struct cf_gpu_probe *probe)
{
    char *smi = cf_which("nvidia-smi");
    if (!smi)
        return -1;
    const char *argv[] = { smi, "--query-gpu=index,uuid,memory.total,compute_cap,driver_version,name",
                           "--format=csv,noheader,nounits", NULL };
    char *out = cf_capture(argv, 20);
    free(smi);
    if (!out) {
        free(probe->note);
        probe->note = cf_strdup("nvidia-smi failed (driver not loaded?)");
        return -1;
    }
    int added = 0;
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, out, "\n", 0);
    for (size_t l = 0; l < lines.n; l++) {
        char *fields[6] = { 0 };
        char *p = lines.v[l];
        int nf = 0;
        for (; nf < 5; nf++) {
            char *comma = strchr(p, ',');
            if (!comma)
                break;
            *comma = 0;
            fields[nf] = p;
            p = comma + 1;
            while (*p == ' ')
                p++;
        }
        if (nf < 5)
            continue;
        fields[5] = p;
        struct cf_gpu *g = cf_survey_add_gpu(s);
        g->index = cf_parse_small(fields[0], 100000);
        g->vendor = cf_strdup("nvidia");
        g->uuid = cf_strdup(fields[1]);
        g->memory_bytes = (uint64_t)strtoull(fields[2], NULL, 10) << 20;
        const char *dot = strchr(fields[3], '.');
        g->cc_major = cf_parse_small(fields[3], 1000);
        g->cc_minor = dot ? cf_parse_small(dot + 1, 1000) : 0;
        char arch[16];
        cf_sm_name(g->cc_major, g->cc_minor, arch, sizeof arch);
        g->arch = cf_strdup(arch);
        g->name = cf_strdup(fields[5]);
        if (!s->driver.nvidia_version)
            s->driver.nvidia_version = cf_strdup(fields[4]);
        added++;
    }
    cf_strvec_clear(&lines);
    free(out);
    return added;
}

/* /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  ..." */
static char *kernel_driver_version(void)
{
    struct strbuf sb = STRBUF_INIT;
    char *v = NULL;
    if (cf_read_file("/proc/driver/nvidia/version", 1 << 16, &sb, NULL) == 0) {
        const char *p = strstr(sb.buf, "Kernel Module");
        if (p) {
            v = cf_version_at(p + strlen("Kernel Module"));
        }
    }
    cf_sb_release(&sb);
    return v;
}

void cf_probe_gpus_nvidia(const struct cf_survey_opts *opts, struct cf_survey *s)
{
    if (opts->no_nvidia_driver) {
        struct cf_gpu_probe *p = cf_survey_add_probe(s, "nvidia", "none");
        p->note = cf_strdup("NVIDIA probing disabled");
        return;
    }
    const char *visible = cf_env_get_raw(opts, "CUDA_VISIBLE_DEVICES");
    s->driver.nvidia_version = kernel_driver_version();
    size_t before = s->n_gpus;
    struct cf_gpu_probe *p = cf_survey_add_probe(s, "nvidia", "driver-api");
    int n = probe_driver_api(opts, s, p);
    /* The driver API only sees the CUDA_VISIBLE_DEVICES subset; nvidia-smi sees
     * the physical set, so it wins whenever a mask is set and it works. */
    if (n < 0 || visible) {
        char *note = p->note ? cf_strdup(p->note) : NULL;
        size_t probes_index = (size_t)(p - s->probes);
        struct cf_survey smi = CF_SURVEY_INIT;
        struct cf_gpu_probe tmp = { 0 };
        int m = probe_nvidia_smi(&smi, &tmp);
        p = &s->probes[probes_index];
        if (m >= 0) {
            for (size_t i = before; i < s->n_gpus; i++) {
                free(s->gpus[i].vendor);
                free(s->gpus[i].name);
                free(s->gpus[i].arch);
                free(s->gpus[i].uuid);
            }
            s->n_gpus = before;
            for (size_t i = 0; i < smi.n_gpus; i++) {
                *cf_survey_add_gpu(s) = smi.gpus[i];
                memset(&smi.gpus[i], 0, sizeof smi.gpus[i]);
            }
            if (!s->driver.nvidia_version) {
                s->driver.nvidia_version = smi.driver.nvidia_version;
                smi.driver.nvidia_version = NULL;
            }
            free(p->method);
            p->method = cf_strdup("nvidia-smi");
            free(p->note);
            p->note = note ? cf_asprintf("%s; used nvidia-smi", note) : cf_strdup("physical set from nvidia-smi");
            n = m;
        } else if (n >= 0 && visible) {
            free(p->note);
            p->note = cf_strdup("CUDA_VISIBLE_DEVICES hides devices from the driver API and nvidia-smi is "
                                "absent: only the visible set is known");
        }
        free(note);
        free(tmp.note);
        cf_survey_release(&smi);
    }
    p->ok = n >= 0;
    p->count = n > 0 ? n : 0;
    if (n >= 0 && !p->note && n == 0)
        p->note = cf_strdup("driver loaded, no NVIDIA GPU");
    if (n >= 0 && !(visible && !strcmp(p->method, "driver-api")))
        cf_apply_visible_devices(s->gpus + before, s->n_gpus - before, "nvidia", visible);
    else
        cf_apply_visible_devices(s->gpus + before, s->n_gpus - before, "nvidia", NULL);
}
