/* The MPI backend lives in a plugin (cclforge_smoke_mpi.so, linked with libmpi) that
 * is dlopen'ed only for --backend mpi, so cclforge itself never depends on MPI.
 *
 * Search order: $CCLFORGE_PLUGIN_DIR (an explicit choice wins), the directory of the
 * cclforge executable (a build tree), <exe dir>/../lib/cclforge (a relocated install),
 * then the libdir the build was configured to install into. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/envp.h"
#include "cclforge/fs.h"
#include "smoke/smoke_internal.h"

void cf_smoke_plugin_candidates(char *const *envp, struct strvec *out)
{
    const char *dir = cf_envp_get(envp, "CCLFORGE_PLUGIN_DIR");
    if (dir && *dir)
        cf_strvec_push_nodup(out, cf_path_join(dir, CF_SMOKE_MPI_PLUGIN_NAME));
    char *exe = cf_realpath("/proc/self/exe");
    if (exe) {
        char *exe_dir = cf_dirname(exe);
        cf_strvec_push_nodup(out, cf_path_join(exe_dir, CF_SMOKE_MPI_PLUGIN_NAME));
        cf_strvec_pushf(out, "%s/../lib/cclforge/%s", exe_dir, CF_SMOKE_MPI_PLUGIN_NAME);
        free(exe_dir);
        free(exe);
    }
#ifdef CCLFORGE_PLUGIN_INSTALL_DIR
    cf_strvec_pushf(out, "%s/%s", CCLFORGE_PLUGIN_INSTALL_DIR, CF_SMOKE_MPI_PLUGIN_NAME);
#endif
}

int cf_smoke_mpi_backend_open(struct cf_smoke_backend *b, char *const *envp, char **plugin_path, cf_error *err)
{
    struct strvec cands = STRVEC_INIT;
    cf_smoke_plugin_candidates(envp, &cands);
    struct strbuf tried = STRBUF_INIT;
    void *h = NULL;
    for (size_t i = 0; i < cands.n && !h; i++) {
        if (!cf_path_exists(cands.v[i])) {
            cf_sb_addf(&tried, "\n  %s: not there", cands.v[i]);
            continue;
        }
        /* global: Open MPI's own components resolve libmpi's symbols through it */
        h = dlopen(cands.v[i], RTLD_NOW | RTLD_GLOBAL);
        if (h) {
            *plugin_path = cf_strdup(cands.v[i]);
        } else {
            const char *why = dlerror();
            cf_sb_addf(&tried, "\n  %s: %s", cands.v[i], why ? why : "dlopen failed");
        }
    }
    cf_strvec_clear(&cands);
    if (!h) {
        cf_error_set(err, CF_ERR_NOTFOUND,
                     "the MPI backend plugin %s could not be loaded (build it with libopenmpi-dev installed, or "
                     "set CCLFORGE_PLUGIN_DIR); tried:%s",
                     CF_SMOKE_MPI_PLUGIN_NAME, cf_sb_str(&tried));
        cf_sb_release(&tried);
        return -1;
    }
    cf_sb_release(&tried);
    cf_smoke_plugin_open_fn open_fn;
    void *sym = dlsym(h, CF_SMOKE_PLUGIN_SYMBOL);
    memcpy(&open_fn, &sym, sizeof open_fn);
    char errbuf[512] = "";
    memset(b, 0, sizeof *b);
    if (!sym || open_fn(b, CF_SMOKE_BACKEND_ABI, errbuf, sizeof errbuf) < 0) {
        cf_error_set(err, CF_ERR_FORMAT, "%s: %s", *plugin_path,
                     sym ? errbuf : "no " CF_SMOKE_PLUGIN_SYMBOL ": not a cclforge smoke plugin");
        free(*plugin_path);
        *plugin_path = NULL;
        return -1;
    }
    return 0;
}
