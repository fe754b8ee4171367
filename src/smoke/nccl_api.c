/* Loading a comm library with the NCCL C API by dlopen, and explaining its errors
 * in its own words. */
#include "smoke/nccl_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "cclforge/vendor.h"

struct api_symbol {
    const char *name;
    size_t offset;
    int required;
};

#define SYM(field, req) { "nccl" #field, offsetof(struct cf_nccl_api, field), req }
static const struct api_symbol nccl_symbols[] = {
    SYM(GetVersion, 1),    SYM(GetUniqueId, 1), SYM(CommInitRank, 1), SYM(CommDestroy, 1),
    SYM(CommAbort, 0),     SYM(CommGetAsyncError, 0), SYM(GetErrorString, 1), SYM(GetLastError, 0),
    SYM(AllReduce, 1),     SYM(Broadcast, 1),   SYM(AllGather, 1),    SYM(ReduceScatter, 1),
    SYM(Send, 1),          SYM(Recv, 1),        SYM(GroupStart, 1),   SYM(GroupEnd, 1),
    SYM(Reduce, 1),        SYM(CommUserRank, 1), SYM(CommCount, 1),   SYM(CommSplit, 0),
    SYM(CommRegister, 0),  SYM(CommDeregister, 0), SYM(MemAlloc, 0),  SYM(MemFree, 0),
};
#undef SYM

void cf_nccl_version_string(int code, char *buf, size_t len)
{
    /* NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since */
    int major = code >= 10000 ? code / 10000 : code / 1000;
    int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
    snprintf(buf, len, "%d.%d.%d", major, minor, code % 100);
}

int cf_nccl_api_load(struct cf_nccl_api *api, const char *path, const char *default_soname, cf_error *err)
{
    memset(api, 0, sizeof *api);
    const char *what = path ? path : default_soname;
    dlerror();
    api->handle = dlopen(what, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) {
        const char *why = dlerror();
        return cf_error_set(err, CF_ERR_NOTFOUND, "cannot load the comm library %s: %s%s%s%s", what,
                            why ? why : "unknown dlopen error", path ? "" : " (give --lib PATH, e.g. $NCCL_HOME/lib/",
                            path ? "" : default_soname, path ? "" : ")");
    }
    api->path = cf_strdup(what);
    struct strbuf missing = STRBUF_INIT;
    for (size_t i = 0; i < sizeof nccl_symbols / sizeof nccl_symbols[0]; i++) {
        void *sym = dlsym(api->handle, nccl_symbols[i].name);
        if (!sym && nccl_symbols[i].required)
            cf_sb_addf(&missing, "%s%s", missing.len ? ", " : "", nccl_symbols[i].name);
        /* a function pointer slot filled from dlsym's object pointer, without a cast */
        memcpy((char *)api + nccl_symbols[i].offset, &sym, sizeof sym);
    }
    if (missing.len) {
        cf_error_set(err, CF_ERR_FORMAT,
                     "%s does not provide the NCCL C API (missing %s): give --lib the path of %s or %s", what,
                     cf_sb_str(&missing), cf_comm_profile(CF_COMMLIB_NCCL)->soname,
                     cf_comm_profile(CF_COMMLIB_RCCL)->soname);
        cf_sb_release(&missing);
        cf_nccl_api_unload(api);
        return -1;
    }
    int rc = api->GetVersion(&api->version);
    if (rc != CF_NCCL_SUCCESS) {
        char *why = cf_nccl_explain(api, rc, NULL);
        cf_error_set(err, CF_ERR_FAILED, "%s: ncclGetVersion failed: %s", what, why);
        free(why);
        cf_nccl_api_unload(api);
        return -1;
    }
    return 0;
}

void cf_nccl_api_unload(struct cf_nccl_api *api)
{
    /* not dlclose'd: NCCL keeps threads and atexit handlers that would outlive the code */
    free(api->path);
    memset(api, 0, sizeof *api);
}

char *cf_nccl_explain(const struct cf_nccl_api *api, int result, cf_nccl_comm_t comm)
{
    struct strbuf sb = STRBUF_INIT;
    const char *words = api->GetErrorString ? api->GetErrorString(result) : NULL;
    cf_sb_addf(&sb, "%s (ncclResult %d)", words ? words : "unknown error", result);
    const char *last = api->GetLastError ? api->GetLastError(comm) : NULL;
    if (last && *last)
        cf_sb_addf(&sb, "; last error: %s", last);
    return cf_sb_detach(&sb);
}
