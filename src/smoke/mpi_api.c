/* Choosing a libmpi, loading it by dlopen, telling its ABI from the library itself
 * and resolving the MPI calls and predefined handles smoke uses (mpi_api.h). */
#include "smoke/mpi_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/envp.h"
#include "cclforge/fs.h"

/* Where an int argument is the low half of the slot an intptr_t fills (mpi_api.h). */
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64) ||                    \
    (defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#define INT_HANDLES_WIDEN 1
#else
#define INT_HANDLES_WIDEN 0
#endif

struct api_symbol {
    const char *name;
    size_t offset;
};
#define SYM(field) { "MPI_" #field, offsetof(struct cf_mpi_api, field) }
static const struct api_symbol mpi_symbols[] = {
    SYM(Init),      SYM(Initialized), SYM(Finalized), SYM(Finalize), SYM(Get_library_version), SYM(Error_string),
    SYM(Comm_set_errhandler), SYM(Comm_rank), SYM(Comm_size), SYM(Comm_split), SYM(Comm_free), SYM(Op_create),
    SYM(Op_free),   SYM(Allreduce),   SYM(Reduce),    SYM(Reduce_scatter_block), SYM(Bcast),  SYM(Allgather),
    SYM(Gather),    SYM(Scatter),     SYM(Alltoall),  SYM(Sendrecv), SYM(Sendrecv_replace), SYM(Ibarrier),
    SYM(Test),
};
#undef SYM

/* The variable that names an ABI's launcher: a rank variable of its own first (a
 * launcher's), then any variable of its prefixes (its runtime's settings). */
static const struct cf_mpi_abi *launcher_abi(char *const *envp, char **why)
{
    for (int id = 0; id < CF_MPI_ABI_COUNT; id++) {
        const struct cf_mpi_abi *abi = cf_mpi_abi(id);
        for (size_t k = 0; k < sizeof abi->rank_vars / sizeof abi->rank_vars[0] && abi->rank_vars[k]; k++)
            if (cf_envp_get(envp, abi->rank_vars[k])) {
                *why = cf_asprintf("the launcher's %s", abi->rank_vars[k]);
                return abi;
            }
    }
    for (int id = 0; id < CF_MPI_ABI_COUNT; id++) {
        const struct cf_mpi_abi *abi = cf_mpi_abi(id);
        for (size_t k = 0; k < sizeof abi->env_prefixes / sizeof abi->env_prefixes[0] && abi->env_prefixes[k]; k++)
            for (char *const *e = envp; e && *e; e++)
                if (!strncmp(*e, abi->env_prefixes[k], strlen(abi->env_prefixes[k]))) {
                    *why = cf_asprintf("the environment's %.*s", (int)strcspn(*e, "="), *e);
                    return abi;
                }
    }
    return NULL;
}

/* <dir of the launcher's executable>/../lib/<soname>: the libmpi an MPI installed
 * in a prefix of its own (a pip venv, /opt/intel/mpi) ships beside its launcher */
static void beside_launcher(const char *soname, struct strvec *out)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%ld/exe", (long)getppid());
    char *exe = cf_realpath(proc);
    if (!exe)
        return;
    char *dir = cf_dirname(exe);
    char *lib = cf_asprintf("%s/../lib/%s", dir, soname);
    char *real = cf_is_file(lib) ? cf_realpath(lib) : NULL;
    if (real && !cf_strvec_contains(out, real))
        cf_strvec_push_nodup(out, real);
    else
        free(real);
    free(lib);
    free(dir);
    free(exe);
}

void cf_mpi_candidates(const char *mpi_lib, char *const *envp, struct strvec *out, const struct cf_mpi_abi **expect,
                       char **chosen_by)
{
    *expect = NULL;
    const char *env_lib = cf_envp_get(envp, "CCLFORGE_MPI_LIB");
    if ((mpi_lib && *mpi_lib) || (env_lib && *env_lib)) {
        cf_strvec_push(out, mpi_lib && *mpi_lib ? mpi_lib : env_lib);
        *chosen_by = cf_strdup(mpi_lib && *mpi_lib ? "--mpi-lib" : "CCLFORGE_MPI_LIB");
        return;
    }
    const struct cf_mpi_abi *abi = launcher_abi(envp, chosen_by);
    if (abi) {
        *expect = abi;
        for (size_t k = 0; abi->sonames[k]; k++)
            beside_launcher(abi->sonames[k], out);
        for (size_t k = 0; abi->sonames[k]; k++)
            cf_strvec_push(out, abi->sonames[k]);
        return;
    }
    *chosen_by = cf_strdup("the default order (no launcher variables)");
    for (int id = 0; id < CF_MPI_ABI_COUNT; id++)
        for (size_t k = 0; cf_mpi_abi(id)->sonames[k]; k++)
            cf_strvec_push(out, cf_mpi_abi(id)->sonames[k]);
}

static const struct cf_mpi_abi *identify(void *dl, void **marker)
{
    for (int id = 0; id < CF_MPI_ABI_COUNT; id++)
        if ((*marker = dlsym(dl, cf_mpi_abi(id)->marker)))
            return cf_mpi_abi(id);
    return NULL;
}

static void markers(struct strbuf *sb)
{
    for (int id = 0; id < CF_MPI_ABI_COUNT; id++)
        cf_sb_addf(sb, "%s%s (%s)", id ? ", " : "", cf_mpi_abi(id)->marker, cf_mpi_abi(id)->name);
}

/* The API and the handles of an identified library; -1 with what is missing. */
static int resolve(struct cf_mpi_api *api, struct strbuf *why)
{
    const struct cf_mpi_abi *abi = api->abi;
    if (abi->handle_size != sizeof(cf_mpi_handle) && !INT_HANDLES_WIDEN) {
        cf_sb_addf(why, "the %s ABI's int handles are not supported on this architecture", abi->name);
        return -1;
    }
    size_t missing = why->len;
    for (size_t i = 0; i < sizeof mpi_symbols / sizeof mpi_symbols[0]; i++) {
        void *sym = dlsym(api->dl, mpi_symbols[i].name);
        if (!sym)
            cf_sb_addf(why, "%s%s", why->len > missing ? ", " : "no ", mpi_symbols[i].name);
        /* a function pointer slot filled from dlsym's object pointer, without a cast */
        memcpy((char *)api + mpi_symbols[i].offset, &sym, sizeof sym);
    }
    for (int h = 0; h < CF_MPI_HANDLE_COUNT; h++) {
        if (!abi->handle_symbol[h]) {
            api->h[h] = (cf_mpi_handle)abi->handle_value[h]; /* sign-extended, as the psABIs pass an int */
            continue;
        }
        void *sym = dlsym(api->dl, abi->handle_symbol[h]);
        if (!sym)
            cf_sb_addf(why, "%s%s (%s)", why->len > missing ? ", " : "no ", abi->handle_symbol[h],
                       cf_mpi_handle_name(h));
        api->h[h] = (cf_mpi_handle)sym;
    }
    api->in_place = (void *)abi->in_place;
    api->status_ignore = (void *)abi->status_ignore;
    return why->len > missing ? -1 : 0;
}

static char *loaded_path(void *marker, const char *asked)
{
    Dl_info info;
    if (marker && dladdr(marker, &info) && info.dli_fname && *info.dli_fname) {
        char *real = cf_realpath(info.dli_fname);
        if (real)
            return real;
    }
    return cf_strdup(asked);
}

int cf_mpi_api_load(struct cf_mpi_api *api, const char *mpi_lib, char *const *envp, cf_error *err)
{
    memset(api, 0, sizeof *api);
    struct strvec cands = STRVEC_INIT;
    const struct cf_mpi_abi *expect = NULL;
    char *chosen_by = NULL;
    cf_mpi_candidates(mpi_lib, envp, &cands, &expect, &chosen_by);
    struct strbuf tried = STRBUF_INIT;
    for (size_t i = 0; i < cands.n && !api->dl; i++) {
        dlerror();
        void *dl = dlopen(cands.v[i], RTLD_NOW | RTLD_GLOBAL);
        if (!dl) {
            const char *why = dlerror();
            cf_sb_addf(&tried, "\n  %s: %s", cands.v[i], why ? why : "dlopen failed");
            continue;
        }
        void *marker = NULL;
        const struct cf_mpi_abi *abi = identify(dl, &marker);
        if (!abi || (expect && abi != expect)) {
            cf_sb_addf(&tried, "\n  %s: ", cands.v[i]);
            if (abi)
                cf_sb_addf(&tried, "speaks the %s ABI, but %s is a launcher of the %s ABI", abi->name, chosen_by,
                           expect->name);
            else {
                cf_sb_adds(&tried, "not an MPI library of a known ABI (it exports none of ");
                markers(&tried);
                cf_sb_adds(&tried, ")");
            }
            dlclose(dl);
            continue;
        }
        api->dl = dl;
        api->abi = abi;
        api->path = loaded_path(marker, cands.v[i]);
        struct strbuf why = STRBUF_INIT;
        if (resolve(api, &why) < 0) {
            cf_sb_addf(&tried, "\n  %s: %s ABI, but %s", api->path, abi->name, cf_sb_str(&why));
            free(api->path);
            memset(api, 0, sizeof *api);
            dlclose(dl);
        }
        cf_sb_release(&why);
    }
    cf_strvec_clear(&cands);
    if (!api->dl) {
        struct strbuf fix = STRBUF_INIT;
        for (int id = 0; id < CF_MPI_ABI_COUNT; id++)
            if (!expect || cf_mpi_abi(id) == expect)
                cf_sb_addf(&fix, "%s%s", fix.len ? " or " : "", cf_mpi_abi(id)->install);
        cf_error_set(err, CF_ERR_NOTFOUND,
                     "no MPI library could be loaded for --backend mpi (chosen by %s); tried:%s\ninstall %s, or give "
                     "--mpi-lib PATH (or CCLFORGE_MPI_LIB) naming your MPI's libmpi.so",
                     chosen_by, cf_sb_str(&tried), cf_sb_str(&fix));
        cf_sb_release(&fix);
        cf_sb_release(&tried);
        free(chosen_by);
        return -1;
    }
    cf_sb_release(&tried);
    api->chosen_by = chosen_by;
    return 0;
}

void cf_mpi_api_unload(struct cf_mpi_api *api)
{
    free(api->path);
    free(api->chosen_by);
    memset(api, 0, sizeof *api);
}

cf_mpi_handle cf_mpi_slot_get(const struct cf_mpi_api *api, const union cf_mpi_slot *slot)
{
    return api->abi->handle_size == sizeof slot->i ? (cf_mpi_handle)slot->i : (cf_mpi_handle)slot->p;
}

void cf_mpi_slot_set(const struct cf_mpi_api *api, union cf_mpi_slot *slot, cf_mpi_handle h)
{
    memset(slot, 0, sizeof *slot);
    if (api->abi->handle_size == sizeof slot->i)
        slot->i = (int32_t)h;
    else
        slot->p = (void *)h;
}
