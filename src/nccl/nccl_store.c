/* The installed NCCL/RCCL builds under <root>/nccl/builds: list, activate,
 * remove, and the environment a worker needs to use one. */
#include "nccl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"

static char *builds_dir(const char *root)
{
    return cf_asprintf("%s/nccl/builds", root);
}

static char *active_link(const char *root)
{
    return cf_asprintf("%s/nccl/active", root);
}

/* The name the active link points to ("builds/<name>"), or NULL. */
static char *active_name(const char *root)
{
    char *link = active_link(root);
    char target[4096];
    ssize_t n = readlink(link, target, sizeof target - 1);
    free(link);
    if (n <= 0)
        return NULL;
    target[n] = 0;
    return cf_strdup(cf_basename(target));
}

static int valid_name(const char *name, cf_error *err)
{
    if (!*name || name[0] == '.' || strchr(name, '/'))
        return cf_error_set(err, CF_ERR_USAGE, "'%s' is not a build name: use a name from 'cclforge nccl list'", name);
    return 0;
}

/* A manifest field as a string: "" when absent or of another type. */
static char *manifest_str(const cJSON *m, const char *key)
{
    const char *v = cf_json_str(m, key);
    return cf_strdup(v ? v : "");
}

static int fill_install(const char *dir, const char *name, const char *active, struct cf_nccl_install *out,
                        cf_error *err)
{
    memset(out, 0, sizeof *out);
    cJSON *m = cf_nccl_read_manifest(dir);
    if (!m)
        return cf_error_set(err, CF_ERR_FORMAT, "%s/manifest.json is missing or not JSON: remove the build with "
                                                "'cclforge nccl remove %s' and build it again",
                            dir, name);
    out->name = cf_strdup(name);
    out->dir = cf_strdup(dir);
    out->tag = manifest_str(m, "tag");
    out->version = manifest_str(m, "version");
    double code = cf_json_num(m, "version_code", 0);
    out->version_code = code > 0 && code < 1e9 ? (int)code : 0;
    struct strvec archs = STRVEC_INIT;
    cf_json_get_strvec(m, "archs", &archs);
    struct strbuf joined = STRBUF_INIT;
    for (size_t i = 0; i < archs.n; i++)
        cf_sb_addf(&joined, "%s%s", i ? ";" : "", archs.v[i]);
    cf_sb_adds(&joined, "");
    out->archs = cf_sb_detach(&joined);
    cf_strvec_clear(&archs);
    int ptx = 0;
    cf_json_get_bool(m, "ptx", &ptx);
    out->ptx = ptx;
    const char *cuda = cf_json_str(m, "cuda_version"), *lib = cf_json_str(m, "library");
    out->cuda_version = cuda ? cf_strdup(cuda) : NULL;
    out->library = lib ? cf_path_join(dir, lib) : NULL;
    out->build_seconds = cf_json_num(m, "build_seconds", 0);
    out->active = active && !strcmp(active, name);
    cJSON_Delete(m);
    return 0;
}

void cf_nccl_install_release(struct cf_nccl_install *i)
{
    free(i->name);
    free(i->dir);
    free(i->tag);
    free(i->version);
    free(i->archs);
    free(i->cuda_version);
    free(i->library);
    memset(i, 0, sizeof *i);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct cf_nccl_install *)a)->name, ((const struct cf_nccl_install *)b)->name);
}

int cf_nccl_store_list(const char *root, struct cf_nccl_install_list *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    char *dir = builds_dir(root);
    DIR *d = opendir(dir);
    if (!d) {
        int missing = errno == ENOENT;
        int rc = missing ? 0 : cf_error_set(err, CF_ERR_IO, "%s: %s", dir, strerror(errno));
        free(dir);
        return rc;
    }
    char *active = active_name(root);
    size_t alloc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", and .staging-* of builds in progress or killed */
        char *p = cf_path_join(dir, e->d_name);
        struct cf_nccl_install inst;
        if (cf_is_dir(p) && fill_install(p, e->d_name, active, &inst, NULL) == 0) {
            if (out->n == alloc) {
                alloc = alloc ? alloc * 2 : 8;
                out->v = cf_xrealloc(out->v, alloc * sizeof *out->v);
            }
            out->v[out->n++] = inst;
        }
        free(p);
    }
    closedir(d);
    free(active);
    free(dir);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_name);
    return 0;
}

void cf_nccl_install_list_release(struct cf_nccl_install_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        cf_nccl_install_release(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

int cf_nccl_store_get(const char *root, const char *name, struct cf_nccl_install *out, cf_error *err)
{
    char *active = active_name(root);
    if (!name) {
        if (!active)
            return cf_error_set(err, CF_ERR_NOTFOUND,
                                "no active NCCL build under %s: name one, or run 'cclforge nccl activate <build>'", root);
        name = active;
    }
    int rc = valid_name(name, err);
    if (rc == 0) {
        char *builds = builds_dir(root);
        char *dir = cf_path_join(builds, name);
        if (!cf_is_dir(dir))
            rc = cf_error_set(err, CF_ERR_NOTFOUND, "no build named %s under %s: see 'cclforge nccl list'", name,
                              builds);
        else
            rc = fill_install(dir, name, active, out, err);
        free(dir);
        free(builds);
    }
    free(active);
    return rc;
}

int cf_nccl_store_activate(const char *root, const char *name, cf_error *err)
{
    struct cf_nccl_install inst;
    if (cf_nccl_store_get(root, name, &inst, err) < 0)
        return -1;
    cf_nccl_install_release(&inst);
    /* A new symlink renamed over the old: readers see one or the other. */
    char *link = active_link(root);
    char *tmp = cf_asprintf("%s.tmp-%d", link, (int)getpid());
    char *target = cf_asprintf("builds/%s", name);
    unlink(tmp);
    int rc = 0;
    if (symlink(target, tmp) < 0 || rename(tmp, link) < 0) {
        rc = cf_error_set(err, CF_ERR_IO, "%s: cannot point it at %s: %s", link, target, strerror(errno));
        unlink(tmp);
    }
    free(link);
    free(tmp);
    free(target);
    return rc;
}

int cf_nccl_store_remove(const char *root, const char *name, cf_error *err)
{
    struct cf_nccl_install inst;
    if (cf_nccl_store_get(root, name, &inst, err) < 0)
        return -1;
    /* Do not pull a build from under a running rebuild of the same target. */
    char *lock = cf_asprintf("%s/nccl/locks/%s.lock", root, name);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
        rc = cf_error_set(err, CF_ERR_FAILED, "a build of %s is running (lock %s): remove it when that build ends",
                          name, lock);
    } else {
        /* Rename first so the removal is atomic for readers, then delete. */
        char *doomed = cf_asprintf("%s/nccl/builds/.removing-%s-%d", root, name, (int)getpid());
        if (rename(inst.dir, doomed) < 0)
            rc = cf_error_set(err, CF_ERR_IO, "%s: %s", inst.dir, strerror(errno));
        else
            rc = cf_rm_rf(doomed, err);
        free(doomed);
        if (rc == 0 && inst.active) {
            char *link = active_link(root);
            unlink(link);
            free(link);
        }
    }
    if (fd >= 0)
        close(fd);
    free(lock);
    cf_nccl_install_release(&inst);
    return rc;
}

int cf_nccl_env_make(const char *root, const char *name, const struct cf_arch_list *host_archs,
                     struct cf_nccl_env *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    if (cf_nccl_store_get(root, name, &out->build, err) < 0)
        return -1;
    const char *dir = out->build.dir;
    /* the soname of the library the build holds: lib/librccl.so.1.0 -> librccl.so.1 */
    const struct cf_comm_profile *comm = cf_comm_profile(cf_commlib_from_name(out->build.library));
    if (!comm)
        comm = cf_comm_profile(CF_COMMLIB_NCCL);
    out->ld_preload = cf_asprintf("%s/lib/%s", dir, comm->soname);
    out->ld_library_path = cf_asprintf("%s/lib", dir);
    out->nccl_home = cf_strdup(dir);
    if (!host_archs)
        return 0;
    cJSON *m = cf_nccl_read_manifest(dir);
    /* The build's code: machine code ("sm_80", "gfx90a:xnack-") and PTX ("compute_90"). */
    struct strvec code = STRVEC_INIT;
    cf_json_get_strvec(m, "sass", &code);
    cf_json_get_strvec(m, "ptx_archs", &code);
    cJSON_Delete(m);
    for (size_t i = 0; i < host_archs->n; i++) {
        const struct cf_arch *a = &host_archs->v[i];
        cf_strvec_push(&out->host_archs, a->name);
        enum cf_arch_fit fit = cf_arch_best_fit(&code, a->name);
        if (fit != CF_FIT_NATIVE)
            cf_strvec_push(fit == CF_FIT_JIT ? &out->jit_only : &out->uncovered, a->name);
    }
    cf_strvec_clear(&code);
    return 0;
}

void cf_nccl_env_release(struct cf_nccl_env *e)
{
    cf_nccl_install_release(&e->build);
    free(e->ld_preload);
    free(e->ld_library_path);
    free(e->nccl_home);
    cf_strvec_clear(&e->host_archs);
    cf_strvec_clear(&e->uncovered);
    cf_strvec_clear(&e->jit_only);
    memset(e, 0, sizeof *e);
}
