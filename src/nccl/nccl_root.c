/* The install root: where it is by default, the directories cclforge keeps
 * in it, and the rule that it uses only a root that no other user can change
 * (cclforge/trust.h): `nccl env` hands out a library to LD_PRELOAD. */
#include "nccl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/trust.h"

/* <root>/nccl/...: finished builds, per-target locks, build trees, and the
 * per-target staging parents installs are assembled (and removals taken
 * apart) in. */
static const char *const root_dirs[] = { "nccl", "nccl/builds", "nccl/locks", "nccl/work", "nccl/staging" };

char *cf_nccl_default_root(cf_error *err)
{
    char *root = cf_cache_root();
    if (!root)
        cf_error_set(err, CF_ERR_USAGE,
                     "HOME is not set (as under cron or a systemd unit) and neither is CCLFORGE_HOME: set CCLFORGE_HOME "
                     "or pass --root (cclforge never falls back to a shared directory such as /tmp)");
    return root;
}

char *cf_nccl_root_path(const char *root, const char *sub, const char *name)
{
    return name ? cf_asprintf("%s/nccl/%s/%s", root, sub, name) : cf_asprintf("%s/nccl/%s", root, sub);
}

int cf_nccl_root_check(const char *root, cf_error *err)
{
    struct stat st;
    int exists = stat(root, &st) == 0;
    if (!exists && errno != ENOENT)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", root, strerror(errno));
    if (exists && !S_ISDIR(st.st_mode))
        return cf_error_set(err, CF_ERR_USAGE, "the install root %s is not a directory", root);
    /* the root and every directory above it: a parent another user may write
     * lets them swap the root (and what `nccl env` hands to LD_PRELOAD) */
    if (cf_dir_trusted(root, err) < 0)
        return cf_error_prefix(err, "the install root");
    if (!exists)
        return 0;
    for (size_t i = 0; i < sizeof root_dirs / sizeof root_dirs[0]; i++) {
        char *p = cf_path_join(root, root_dirs[i]);
        int rc = 0;
        if (lstat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                rc = cf_error_set(err, CF_ERR_FAILED, "%s is not a directory (a link or a file is there): remove it",
                                  p);
            else
                rc = cf_stat_trusted(p, &st, err);
        }
        free(p);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int cf_nccl_root_prepare(const char *root, cf_error *err)
{
    if (cf_nccl_root_check(root, err) < 0 || cf_mkdir_p(root, 0755, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof root_dirs / sizeof root_dirs[0]; i++) {
        char *p = cf_path_join(root, root_dirs[i]);
        int rc = mkdir(p, 0755) != 0 && errno != EEXIST
                     ? cf_error_set(err, CF_ERR_IO, "cannot create directory %s: %s", p, strerror(errno))
                     : 0;
        free(p);
        if (rc < 0)
            return -1;
    }
    return cf_nccl_root_check(root, err);
}

int cf_nccl_lock_open(const char *root, const char *name, int cloexec, cf_error *err)
{
    char *file = cf_asprintf("%s.lock", name);
    char *path = cf_nccl_root_path(root, "locks", file);
    free(file);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | (cloexec ? O_CLOEXEC : 0), 0644);
    struct stat st;
    int rc = 0;
    if (fd < 0)
        rc = cf_error_set(err, CF_ERR_IO, "%s: cannot open the lock file: %s", path,
                          errno == ELOOP ? "it is a symbolic link (remove it)" : strerror(errno));
    else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = cf_error_set(err, CF_ERR_IO, "%s: the lock is not a regular file (remove it)", path);
    else
        rc = cf_stat_trusted(path, &st, err);
    free(path);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}
