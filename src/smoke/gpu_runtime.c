/* The device runtime (CUDA runtime for NVIDIA, HIP for AMD and Hygon DCU) by dlopen,
 * so one cclforge binary serves every vendor without their headers. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "smoke/nccl_api.h"

/* A list of names ends at its first NULL. */
struct runtime_vendor {
    const char *api;
    const char *sonames[5];
};

static const struct runtime_vendor vendors[] = {
    { "cuda", { "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0" } },
    { "hip", { "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5" } },
};

struct runtime_symbol {
    const char *suffix; /* after the vendor prefix: cuda<suffix>, hip<suffix> */
    size_t offset;
    int required;
};
#define RSYM(field, req) { #field, offsetof(struct cf_gpu_runtime, field), req }
static const struct runtime_symbol runtime_symbols[] = {
    RSYM(GetDeviceCount, 1),    RSYM(SetDevice, 1),        RSYM(Malloc, 1),          RSYM(Free, 1),
    RSYM(Memcpy, 1),            RSYM(Memset, 1),           RSYM(StreamCreate, 1),    RSYM(StreamSynchronize, 1),
    RSYM(StreamDestroy, 1),     RSYM(GetErrorString, 1),   RSYM(RuntimeGetVersion, 1), RSYM(GetLastError, 1),
    RSYM(PeekAtLastError, 1),   RSYM(MemsetAsync, 1),      RSYM(MemcpyAsync, 1),     RSYM(DeviceGetPCIBusId, 1),
    RSYM(EventCreateWithFlags, 1), RSYM(EventRecord, 1),   RSYM(EventQuery, 1),      RSYM(EventDestroy, 1),
    RSYM(StreamCreateWithFlags, 0), RSYM(DeviceGetAttribute, 0), RSYM(StreamBeginCapture, 0),
    RSYM(StreamEndCapture, 0),  RSYM(GraphInstantiateWithFlags, 0), RSYM(GraphLaunch, 0),
    RSYM(GraphExecDestroy, 0),  RSYM(GraphDestroy, 0),
};
#undef RSYM

static void *open_first(const struct runtime_vendor *v, const char *near_dir, struct strbuf *tried, char **chosen)
{
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 && !near_dir)
            continue;
        for (size_t k = 0; v->sonames[k]; k++) {
            const char *so = v->sonames[k];
            char *cand = pass == 0 ? cf_path_join(near_dir, so) : cf_strdup(so);
            if (pass == 0 && !cf_path_exists(cand)) {
                free(cand);
                continue;
            }
            void *h = dlopen(cand, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                *chosen = cand;
                return h;
            }
            const char *why = dlerror();
            cf_sb_addf(tried, "\n  %s: %s", cand, why ? why : "failed");
            free(cand);
        }
    }
    return NULL;
}

int cf_gpu_runtime_load(struct cf_gpu_runtime *rt, const char *vendor, const char *path, const char *near_dir,
                        cf_error *err)
{
    memset(rt, 0, sizeof *rt);
    const struct runtime_vendor *v = NULL;
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
        if (!strcmp(vendors[i].api, vendor))
            v = &vendors[i];
    if (!v)
        return cf_error_set(err, CF_ERR_INTERNAL, "unknown device runtime '%s'", vendor);
    struct strbuf tried = STRBUF_INIT;
    if (path) {
        rt->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!rt->handle) {
            const char *why = dlerror();
            cf_sb_addf(&tried, "\n  %s: %s", path, why ? why : "failed");
        } else {
            rt->path = cf_strdup(path);
        }
    } else {
        rt->handle = open_first(v, near_dir, &tried, &rt->path);
    }
    if (!rt->handle) {
        cf_error_set(err, CF_ERR_NOTFOUND, "no %s runtime could be loaded (give --runtime PATH); tried:%s",
                     v->api, cf_sb_str(&tried));
        cf_sb_release(&tried);
        return -1;
    }
    cf_sb_release(&tried);
    rt->api = v->api;
    for (size_t i = 0; i < sizeof runtime_symbols / sizeof runtime_symbols[0]; i++) {
        char name[64];
        int len = snprintf(name, sizeof name, "%s%s", v->api, runtime_symbols[i].suffix);
        void *sym = len < (int)sizeof name ? dlsym(rt->handle, name) : NULL;
        if (!sym && runtime_symbols[i].required) {
            cf_error_set(err, CF_ERR_FORMAT, "%s has no %s: not a %s runtime library", rt->path, name, v->api);
            cf_gpu_runtime_unload(rt);
            return -1;
        }
        memcpy((char *)rt + runtime_symbols[i].offset, &sym, sizeof sym);
    }
    return 0;
}

void cf_gpu_runtime_unload(struct cf_gpu_runtime *rt)
{
    free(rt->path);
    memset(rt, 0, sizeof *rt);
}

char *cf_gpu_explain(const struct cf_gpu_runtime *rt, const char *call, int code)
{
    const char *words = rt->GetErrorString ? rt->GetErrorString(code) : NULL;
    return cf_asprintf("%s%s failed: %s (error %d)", rt->api, call, words ? words : "unknown error", code);
}
