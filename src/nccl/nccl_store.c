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
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/atomic_file.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"

static char *active_link(const char *root)
{
    return cf_nccl_root_path(root, "active", NULL);
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

/* Build names are what make_target writes: v<X.Y.Z>-<archs>[-noptx][-funcs<sha8>]. */
static int valid_name(const char *name, cf_error *err)
{
    size_t n = strlen(name);
    if (!n || n > 200 || name[0] == '.' || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != n)
        return cf_error_set(err, CF_ERR_USAGE, "'%s' is not a build name: use a name from 'cclforge nccl list'", name);
    return 0;
}

/* <root>/nccl/builds/<name> as a directory descriptor, never through a link. */
static int open_build(const char *root, const char *name, char **dir, cf_error *err)
{
    *dir = NULL;
    if (valid_name(name, err) < 0)
        return -1;
    *dir = cf_nccl_root_path(root, "builds", name);
    int fd = open(*dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        return fd;
    char *builds = cf_nccl_root_path(root, "builds", NULL);
    if (errno == ENOENT)
        cf_error_set(err, CF_ERR_NOTFOUND, "no build named %s under %s: see 'cclforge nccl list'", name, builds);
    else
        cf_error_set(err, CF_ERR_FAILED, "%s is not a build directory (%s): remove it with 'cclforge nccl remove %s'",
                     *dir, errno == ELOOP || errno == ENOTDIR ? "a link or a file is there" : strerror(errno), name);
    free(builds);
    free(*dir);
    *dir = NULL;
    return -1;
}

/* Fills out from the manifest and checks the files against it (out->damage).
 * Without a readable manifest: -1, and out names the build as damaged. */
static int fill_install(int fd, const char *dir, const char *name, const char *active, int verify,
                        struct cf_nccl_install *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    out->name = cf_strdup(name);
    out->dir = cf_strdup(dir);
    out->active = active && !strcmp(active, name);
    struct nccl_manifest m;
    if (cf_nccl_manifest_read_at(fd, &m) < 0) {
        out->tag = cf_strdup("");
        out->version = cf_strdup("");
        out->archs = cf_strdup("");
        out->damage = cf_strdup("manifest.json is missing or not JSON");
        return cf_error_set(err, CF_ERR_FORMAT, "%s/manifest.json is missing or not JSON: remove the build with "
                                                "'cclforge nccl remove %s' and build it again",
                            dir, name);
    }
    out->tag = cf_strdup(m.tag);
    out->version = cf_strdup(m.version);
    out->version_code = m.version_code;
    struct strbuf joined = STRBUF_INIT;
    for (size_t i = 0; i < m.archs.n; i++)
        cf_sb_addf(&joined, "%s%s", i ? ";" : "", m.archs.v[i]);
    cf_sb_adds(&joined, "");
    out->archs = cf_sb_detach(&joined);
    out->ptx = m.ptx;
    out->cuda_version = m.cuda_version ? cf_strdup(m.cuda_version) : NULL;
    out->library = m.library ? cf_path_join(dir, m.library) : NULL;
    out->build_seconds = m.build_seconds;
    struct strbuf why = STRBUF_INIT;
    if (cf_nccl_tree_check(fd, &m, verify, &why))
        out->damage = cf_sb_detach(&why);
    cf_sb_release(&why);
    cf_nccl_manifest_release(&m);
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
    free(i->damage);
    memset(i, 0, sizeof *i);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct cf_nccl_install *)a)->name, ((const struct cf_nccl_install *)b)->name);
}

int cf_nccl_store_list(const char *root, int verify, struct cf_nccl_install_list *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    if (cf_nccl_root_check(root, err) < 0)
        return -1;
    char *dir = cf_nccl_root_path(root, "builds", NULL);
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
            continue; /* ".", "..", and leftovers of older versions' staging */
        char *p = NULL;
        int fd = open_build(root, e->d_name, &p, NULL);
        if (fd >= 0) {
            if (out->n == alloc) {
                alloc = alloc ? alloc * 2 : 8;
                out->v = cf_xrealloc(out->v, alloc * sizeof *out->v);
            }
            fill_install(fd, p, e->d_name, active, verify, &out->v[out->n++], NULL);
            close(fd);
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
    memset(out, 0, sizeof *out);
    if (cf_nccl_root_check(root, err) < 0)
        return -1;
    char *active = active_name(root);
    if (!name) {
        if (!active)
            return cf_error_set(err, CF_ERR_NOTFOUND,
                                "no active NCCL build under %s: name one, or run 'cclforge nccl activate <build>'", root);
        name = active;
    }
    char *dir = NULL;
    int fd = open_build(root, name, &dir, err);
    int rc = -1;
    if (fd >= 0) {
        rc = fill_install(fd, dir, name, active, 0, out, err);
        if (rc < 0)
            cf_nccl_install_release(out);
        close(fd);
    }
    free(dir);
    free(active);
    return rc;
}

/* A damaged build is never handed out. */
static int refuse_damaged(const struct cf_nccl_install *inst, cf_error *err)
{
    if (!inst->damage)
        return 0;
    return cf_error_set(err, CF_ERR_FAILED,
                        "build %s is damaged (%s): rebuild it (the same 'cclforge nccl build' again repairs it) or "
                        "'cclforge nccl remove %s'",
                        inst->name, inst->damage, inst->name);
}

int cf_nccl_store_activate(const char *root, const char *name, cf_error *err)
{
    struct cf_nccl_install inst;
    if (cf_nccl_store_get(root, name, &inst, err) < 0)
        return -1;
    int rc = refuse_damaged(&inst, err);
    cf_nccl_install_release(&inst);
    if (rc < 0)
        return -1;
    /* A new link renamed over the old: readers see one or the other. */
    char *link = active_link(root);
    char *target = cf_asprintf("builds/%s", name);
    rc = cf_symlink_atomic(target, link, err);
    free(link);
    free(target);
    return rc;
}

int cf_nccl_store_remove(const char *root, const char *name, cf_error *err)
{
    if (valid_name(name, err) < 0 || cf_nccl_root_check(root, err) < 0)
        return -1;
    char *dir = cf_nccl_root_path(root, "builds", name);
    struct stat st;
    if (lstat(dir, &st) != 0) {
        char *builds = cf_nccl_root_path(root, "builds", NULL);
        int rc = cf_error_set(err, CF_ERR_NOTFOUND, "no build named %s under %s: see 'cclforge nccl list'", name,
                              builds);
        free(builds);
        free(dir);
        return rc;
    }
    /* Do not pull a build from under a running rebuild of the same target. */
    int fd = cf_nccl_root_prepare(root, err) == 0 ? cf_nccl_lock_open(root, name, 1, err) : -1;
    if (fd < 0) {
        free(dir);
        return -1;
    }
    int rc = 0;
    char *active = active_name(root);
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        rc = cf_error_set(err, CF_ERR_FAILED, "a build of %s is running (lock %s/nccl/locks/%s.lock): remove it when "
                                              "that build ends",
                          name, root, name);
    } else {
        /* Renamed into this target's staging parent first (atomic for readers;
         * a kill leaves it where stale cleanup finds it), then deleted. */
        char *parent = cf_nccl_root_path(root, "staging", name);
        char *doomed = NULL;
        if (!S_ISDIR(st.st_mode)) {
            rc = unlink(dir) == 0 ? 0 : cf_error_set(err, CF_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
        } else if ((mkdir(parent, 0755) != 0 && errno != EEXIST) ||
                   !(doomed = cf_mkdtemp(parent, "removing-", err))) {
            rc = cf_error_set(err, CF_ERR_IO, "cannot remove %s: no staging directory %s", dir, parent);
        } else if (rename(dir, doomed) != 0) {
            rc = cf_error_set(err, CF_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
            rmdir(doomed);
        } else {
            rc = cf_rm_rf(doomed, err);
        }
        free(doomed);
        free(parent);
        if (rc == 0 && active && !strcmp(active, name)) {
            char *link = active_link(root);
            unlink(link);
            free(link);
        }
    }
    close(fd);
    free(active);
    free(dir);
    return rc;
}

/* ld.so splits LD_PRELOAD at spaces and ':', LD_LIBRARY_PATH at ':' and ';'. */
static int env_path_char(unsigned char c)
{
    return c != ' ' && c != ':' && c != ';' && c >= 0x20 && c != 0x7f;
}

static int env_safe_path(const char *path, cf_error *err)
{
    char *c = cf_nccl_refused_char(path, env_path_char);
    if (!c)
        return 0;
    cf_error_set(err, CF_ERR_FAILED,
                 "%s contains %s, which ld.so takes as a separator in LD_PRELOAD or LD_LIBRARY_PATH (or a "
                 "terminal control character): the job would load another NCCL; use a root without it",
                 path, c);
    free(c);
    return -1;
}

int cf_nccl_env_make(const char *root, const char *name, const struct cf_arch_list *host_archs,
                     struct cf_nccl_env *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    if (cf_nccl_store_get(root, name, &out->build, err) < 0)
        return -1;
    const char *dir = out->build.dir;
    if (refuse_damaged(&out->build, err) < 0 || env_safe_path(dir, err) < 0) {
        cf_nccl_env_release(out);
        return -1;
    }
    /* the soname of the library the build holds: lib/librccl.so.1.0 -> librccl.so.1 */
    const struct cf_comm_profile *comm = cf_comm_profile(cf_commlib_from_name(out->build.library));
    if (!comm)
        comm = cf_comm_profile(CF_COMMLIB_NCCL);
    out->ld_preload = cf_asprintf("%s/lib/%s", dir, comm->soname);
    out->ld_library_path = cf_asprintf("%s/lib", dir);
    out->nccl_home = cf_strdup(dir);
    if (!host_archs)
        return 0;
    out->coverage_checked = 1;
    struct nccl_manifest m;
    cf_nccl_manifest_read(dir, &m);
    /* The build's code: machine code ("sm_80", "gfx90a:xnack-") and PTX ("compute_90"). */
    struct strvec code = STRVEC_INIT;
    for (size_t i = 0; i < m.sass.n; i++)
        cf_strvec_push(&code, m.sass.v[i]);
    for (size_t i = 0; i < m.ptx_archs.n; i++)
        cf_strvec_push(&code, m.ptx_archs.v[i]);
    cf_nccl_manifest_release(&m);
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
