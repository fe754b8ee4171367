/* The install side of an NCCL build. The tree is assembled in a fresh
 * directory under <root>/nccl/staging/<target>/ (a parent no other target's
 * build touches), written through that directory's descriptor, recorded in
 * the manifest, checked complete against it, and one rename puts it in place.
 * Removals go the same way backwards. */
#include "nccl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cclforge/atomic_file.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/syscompat.h"
#include "cclforge/trust.h"

#define MAX_TREE_DEPTH 16

static int copy_file_at(const char *from, int to_fd, const char *to, mode_t mode, cf_error *err)
{
    int in = cf_open_regular(from, err);
    if (in < 0)
        return -1;
    struct cf_atomic_file out;
    if (cf_atomic_begin(&out, to_fd, to, mode & 0777, err) < 0) {
        close(in);
        return -1;
    }
    char buf[1 << 16];
    int rc = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
            break;
        }
        if (cf_write_all(out.fd, buf, (size_t)n) < 0)
            rc = cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
        if (rc)
            break;
    }
    close(in);
    if (rc < 0) {
        cf_atomic_abort(&out);
        return rc;
    }
    return cf_atomic_commit(&out, err);
}

/* Copies from (a path) to `to` inside to_fd; links stay links, other kinds of
 * file are skipped (nothing a build installs). */
static int copy_tree_at(const char *from, int to_fd, const char *to, int depth, cf_error *err)
{
    struct stat st;
    if (lstat(from, &st) < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(from, target, sizeof target - 1);
        if (n < 0)
            return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
        target[n] = 0;
        if (symlinkat(target, to_fd, to) < 0)
            return cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
        return 0;
    }
    if (S_ISREG(st.st_mode))
        return copy_file_at(from, to_fd, to, st.st_mode, err);
    if (!S_ISDIR(st.st_mode))
        return 0;
    if (depth > MAX_TREE_DEPTH)
        return cf_error_set(err, CF_ERR_FORMAT, "%s: nested deeper than %d directories", from, MAX_TREE_DEPTH);
    if (mkdirat(to_fd, to, 0755) < 0 && errno != EEXIST)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", to, strerror(errno));
    DIR *d = opendir(from);
    if (!d)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", from, strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *a = cf_path_join(from, e->d_name), *b = cf_asprintf("%s/%s", to, e->d_name);
        rc = copy_tree_at(a, to_fd, b, depth + 1, err);
        free(a);
        free(b);
    }
    closedir(d);
    return rc;
}

/* ---- staging ---- */

int cf_nccl_stage_begin(const struct cf_nccl_plan *plan, struct nccl_stage *st, cf_error *err)
{
    memset(st, 0, sizeof *st);
    st->parent_fd = st->fd = -1;
    st->parent = cf_nccl_root_path(plan->root, "staging", plan->target_name);
    if (mkdir(st->parent, 0755) < 0 && errno != EEXIST)
        return cf_error_set(err, CF_ERR_IO, "cannot create %s: %s", st->parent, strerror(errno));
    st->parent_fd = open(st->parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (st->parent_fd < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", st->parent, strerror(errno));
    if (cf_path_trusted(st->parent, 0, err) < 0)
        return -1;
    st->path = cf_mkdtemp(st->parent, "", err);
    if (!st->path)
        return -1;
    st->name = cf_strdup(cf_basename(st->path));
    st->fd = openat(st->parent_fd, st->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (st->fd < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", st->path, strerror(errno));
    return 0;
}

void cf_nccl_stage_end(struct nccl_stage *st, int remove)
{
    if (remove && st->path)
        cf_rm_rf(st->path, NULL);
    if (st->fd >= 0)
        close(st->fd);
    if (st->parent_fd >= 0)
        close(st->parent_fd);
    free(st->parent);
    free(st->path);
    free(st->name);
    memset(st, 0, sizeof *st);
    st->parent_fd = st->fd = -1;
}

static char *pkgconfig_text(const struct cf_nccl_plan *plan, const struct cf_comm_profile *comm)
{
    return cf_asprintf("prefix=%s\nexec_prefix=${prefix}\nlibdir=${exec_prefix}/lib\nincludedir=${prefix}/include\n\n"
                       "Name: %s\nDescription: %s built by cclforge for %s\nVersion: %d.%d.%d\n"
                       "Libs: -L${libdir} -l%s\nCflags: -I${includedir}\n",
                       plan->target_dir, comm->link_name, comm->display, plan->target_name, plan->tag.major,
                       plan->tag.minor, plan->tag.patch, comm->link_name);
}

int cf_nccl_stage_layout(const struct cf_nccl_plan *plan, struct nccl_stage *st, const char *library,
                         struct nccl_built *built, cf_error *err)
{
    const struct cf_comm_profile *comm = plan->vendor->comm;
    char *inc_from = cf_path_join(plan->build_dir, "include");
    /* NCCL names its file after the release (libnccl.so.2.28.9), RCCL librccl.so.1.0 */
    char *real_name = comm->lib == CF_COMMLIB_RCCL
                          ? cf_asprintf("%s.0", comm->soname)
                          : cf_asprintf("%s.%d.%d.%d", comm->stem, plan->tag.major, plan->tag.minor, plan->tag.patch);
    char *lib_to = cf_asprintf("lib/%s", real_name);
    char *so_link = cf_asprintf("lib/%s", comm->soname), *dev_link = cf_asprintf("lib/%s", comm->stem);
    char *pc_path = cf_asprintf("lib/pkgconfig/%s.pc", comm->link_name);
    char *resolved = cf_realpath(library);
    int rc = 0;

    if (cf_is_dir(inc_from))
        rc = copy_tree_at(inc_from, st->fd, "include", 0, err);
    else if (mkdirat(st->fd, "include", 0755) < 0)
        rc = cf_error_set(err, CF_ERR_IO, "%s/include: %s", st->path, strerror(errno));
    if (rc == 0 && (mkdirat(st->fd, "lib", 0755) < 0 || mkdirat(st->fd, "lib/pkgconfig", 0755) < 0))
        rc = cf_error_set(err, CF_ERR_IO, "%s/lib: %s", st->path, strerror(errno));
    if (rc == 0)
        rc = resolved ? copy_tree_at(resolved, st->fd, lib_to, 0, err)
                      : cf_error_set(err, CF_ERR_IO, "%s: cannot resolve the built library", library);
    if (rc == 0 && (symlinkat(real_name, st->fd, so_link) < 0 || symlinkat(comm->soname, st->fd, dev_link) < 0))
        rc = cf_error_set(err, CF_ERR_IO, "%s/lib: cannot create the library links: %s", st->path, strerror(errno));
    if (rc == 0) {
        char *pc = pkgconfig_text(plan, comm);
        rc = cf_write_file_at(st->fd, pc_path, pc, strlen(pc), 0644, err);
        free(pc);
    }
    if (rc == 0 && cf_is_file(plan->log_path))
        rc = copy_file_at(plan->log_path, st->fd, "build.log", 0644, err);
    if (rc == 0) {
        built->library_rel = cf_strdup(lib_to);
        built->files = cf_nccl_tree_record(st->fd, err);
        const cJSON *lib = built->files ? cJSON_GetObjectItemCaseSensitive(built->files, lib_to) : NULL;
        const cJSON *sha = cJSON_GetObjectItemCaseSensitive(lib, "sha256");
        if (!built->files)
            rc = -1;
        else if (cJSON_IsString(sha))
            built->library_sha256 = cf_strdup(sha->valuestring);
    }
    if (rc == 0) {
        char *text = cf_nccl_manifest_text(plan, built);
        rc = cf_write_file_at(st->fd, "manifest.json", text, strlen(text), 0644, err);
        free(text);
    }
    free(inc_from);
    free(real_name);
    free(lib_to);
    free(so_link);
    free(dev_link);
    free(pc_path);
    free(resolved);
    return rc;
}

/* The staged tree against the manifest it holds, every hash recomputed: what
 * the rename is about to publish is complete. */
int cf_nccl_stage_check(const struct nccl_stage *st, cf_error *err)
{
    struct nccl_manifest m;
    struct strbuf why = STRBUF_INIT;
    int rc = 0;
    if (cf_nccl_manifest_read_at(st->fd, &m) < 0)
        rc = cf_error_set(err, CF_ERR_FAILED, "the staged build %s has no readable manifest.json; nothing was installed",
                          st->path);
    else if (cf_nccl_tree_check(st->fd, &m, 1, &why))
        rc = cf_error_set(err, CF_ERR_FAILED, "the staged build %s is incomplete (%s); nothing was installed",
                          st->path, cf_sb_str(&why));
    cf_nccl_manifest_release(&m);
    cf_sb_release(&why);
    return rc;
}

/* One rename puts the staged tree in place; an existing target (a --force or
 * damaged rebuild, changed inputs) is swapped atomically and the old one,
 * now in the staging parent, removed. */
int cf_nccl_stage_install(const struct cf_nccl_plan *plan, struct nccl_stage *st, cf_error *err)
{
    if (fchmod(st->fd, 0755) < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", st->path, strerror(errno));
    char *builds = cf_dirname(plan->target_dir);
    int builds_fd = open(builds, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = 0;
    if (builds_fd < 0) {
        rc = cf_error_set(err, CF_ERR_IO, "%s: %s", builds, strerror(errno));
    } else if (cf_renameat2(st->parent_fd, st->name, builds_fd, plan->target_name, RENAME_NOREPLACE) == 0) {
        free(st->path); /* nothing left to remove */
        st->path = NULL;
    } else if (errno != EEXIST && errno != ENOTEMPTY) {
        rc = cf_error_set(err, CF_ERR_IO, "installing %s: rename %s: %s", plan->target_dir, st->path, strerror(errno));
    } else if (cf_renameat2(st->parent_fd, st->name, builds_fd, plan->target_name, RENAME_EXCHANGE) < 0) {
        rc = cf_error_set(err, CF_ERR_IO, "replacing %s: %s", plan->target_dir, strerror(errno));
    }
    if (builds_fd >= 0) {
        fsync(builds_fd);
        close(builds_fd);
    }
    free(builds);
    return rc;
}

/* ---- leftovers of killed builds and removals ---- */

/* Removes path when the lock of target `name` is free (its build is dead). */
static void remove_if_unlocked(const char *root, const char *name, const char *path)
{
    int fd = cf_nccl_lock_open(root, name, 1, NULL);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        cf_rm_rf(path, NULL);
    close(fd);
}

/* Staging directories of older cclforge versions, in builds/:
 * ".staging-<name>-XXXXXX" (mkdtemp) and ".removing-<name>-<pid>". */
static char *legacy_owner(const char *entry)
{
    static const struct {
        const char *prefix;
        const char *suffix_chars;
        size_t suffix_len; /* 0: any length */
    } forms[] = { { ".staging-", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 6 },
                  { ".removing-", "0123456789", 0 } };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        if (!cf_starts_with(entry, forms[i].prefix))
            continue;
        const char *dash = strrchr(entry, '-');
        const char *name = entry + strlen(forms[i].prefix);
        size_t tail = strlen(dash + 1);
        if (dash < name || !tail || strspn(dash + 1, forms[i].suffix_chars) != tail ||
            (forms[i].suffix_len && tail != forms[i].suffix_len) || dash == name)
            return NULL;
        return cf_strndup(name, (size_t)(dash - name));
    }
    return NULL;
}

void cf_nccl_clean_stale(const char *root, const char *own_target)
{
    char *staging = cf_nccl_root_path(root, "staging", NULL);
    DIR *d = opendir(staging);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = cf_path_join(staging, e->d_name);
        if (own_target && !strcmp(e->d_name, own_target))
            cf_rm_rf(p, NULL); /* ours: its lock is held by the caller */
        else
            remove_if_unlocked(root, e->d_name, p);
        free(p);
    }
    if (d)
        closedir(d);
    free(staging);
    char *builds = cf_nccl_root_path(root, "builds", NULL);
    d = opendir(builds);
    while (d && (e = readdir(d))) {
        char *owner = legacy_owner(e->d_name);
        if (!owner)
            continue;
        char *p = cf_path_join(builds, e->d_name);
        if (own_target && !strcmp(owner, own_target))
            cf_rm_rf(p, NULL);
        else
            remove_if_unlocked(root, owner, p);
        free(p);
        free(owner);
    }
    if (d)
        closedir(d);
    free(builds);
}
