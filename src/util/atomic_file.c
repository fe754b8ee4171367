/* Writing files so that nothing planted at a path cclforge writes can redirect
 * the write, and no reader ever sees half a file (cclforge/atomic_file.h). */
#include "cclforge/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "cclforge/syscompat.h"

/* Longer names would pass NAME_MAX once the suffix is added. */
#define LONG_NAME 200

/* A name nobody can predict: "." + base + ".tmp-" + 12 random letters/digits. */
static char *random_name(const char *base)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char bytes[12];
    if (cf_getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        /* Early boot only: uniqueness still comes from O_EXCL and the retry. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long x = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16);
        for (size_t i = 0; i < sizeof bytes; i++, x = x * 6364136223846793005UL + 1442695040888963407UL)
            bytes[i] = (unsigned char)(x >> 33);
    }
    char suffix[sizeof bytes + 1];
    for (size_t i = 0; i < sizeof bytes; i++)
        suffix[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
    suffix[sizeof bytes] = 0;
    return strlen(base) > LONG_NAME ? cf_asprintf(".cclforge.tmp-%s", suffix) : cf_asprintf(".%s.tmp-%s", base, suffix);
}

static void release(struct cf_atomic_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->dir_fd >= 0)
        close(f->dir_fd);
    free(f->tmp_name);
    free(f->name);
    free(f->path);
    free(f->tmp_path);
    memset(f, 0, sizeof *f);
    f->fd = f->dir_fd = -1;
}

/* Opens the directory part of path (relative to at_fd) and returns the last component. */
static int open_parent(int at_fd, const char *path, int *dir_fd, char **base, cf_error *err)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
        return cf_error_set(err, CF_ERR_USAGE, "%s: not a file name", path);
    char *dir = slash ? (slash == path ? cf_strdup("/") : cf_strndup(path, (size_t)(slash - path))) : cf_strdup(".");
    *dir_fd = openat(at_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*dir_fd < 0) {
        int rc = cf_error_set(err, errno == ENOENT ? CF_ERR_NOTFOUND : CF_ERR_IO, "cannot write %s: directory %s: %s",
                              path, dir, strerror(errno));
        free(dir);
        return rc;
    }
    free(dir);
    *base = cf_strdup(name);
    return 0;
}

int cf_atomic_begin(struct cf_atomic_file *f, int at_fd, const char *path, unsigned mode, cf_error *err)
{
    memset(f, 0, sizeof *f);
    f->fd = f->dir_fd = -1;
    if (open_parent(at_fd, path, &f->dir_fd, &f->name, err) < 0) {
        release(f);
        return -1;
    }
    f->path = cf_strdup(path);
    for (int tries = 0; tries < 100 && f->fd < 0; tries++) {
        free(f->tmp_name);
        f->tmp_name = random_name(f->name);
        f->fd = openat(f->dir_fd, f->tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        if (f->fd < 0 && errno != EEXIST) {
            int rc = cf_error_set(err, CF_ERR_IO, "cannot write %s: %s", path, strerror(errno));
            release(f);
            return rc;
        }
    }
    if (f->fd < 0) {
        int rc = cf_error_set(err, CF_ERR_IO, "cannot write %s: no free temporary name", path);
        release(f);
        return rc;
    }
    if (at_fd == AT_FDCWD) {
        const char *slash = strrchr(path, '/');
        f->tmp_path = slash ? cf_asprintf("%.*s/%s", (int)(slash - path), path, f->tmp_name) : cf_strdup(f->tmp_name);
    }
    return 0;
}

void cf_atomic_abort(struct cf_atomic_file *f)
{
    if (f->dir_fd >= 0 && f->tmp_name)
        unlinkat(f->dir_fd, f->tmp_name, 0);
    release(f);
}

int cf_atomic_commit(struct cf_atomic_file *f, cf_error *err)
{
    int rc = 0;
    struct stat st;
    /* The temporary may have been rewritten by name (linker, libzip): sync what is there now. */
    int fd = openat(f->dir_fd, f->tmp_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0)
        rc = cf_error_set(err, CF_ERR_IO, "cannot write %s: %s", f->path, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc == 0 && f->fd >= 0 && close(f->fd) != 0)
        rc = cf_error_set(err, CF_ERR_IO, "cannot write %s: %s", f->path, strerror(errno));
    f->fd = -1;
    if (rc == 0 && fstatat(f->dir_fd, f->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        rc = cf_error_set(err, CF_ERR_IO,
                          "%s is a symbolic link: cclforge never writes through one; remove it or name the file it "
                          "points to",
                          f->path);
    if (rc == 0 && renameat(f->dir_fd, f->tmp_name, f->dir_fd, f->name) != 0)
        rc = cf_error_set(err, CF_ERR_IO, "cannot write %s: %s", f->path, strerror(errno));
    if (rc < 0) {
        cf_atomic_abort(f);
        return rc;
    }
    fsync(f->dir_fd); /* the rename itself survives a crash */
    release(f);
    return 0;
}

int cf_write_file_at(int at_fd, const char *path, const void *data, size_t len, unsigned mode, cf_error *err)
{
    struct cf_atomic_file f;
    if (cf_atomic_begin(&f, at_fd, path, mode, err) < 0)
        return -1;
    if (cf_write_all(f.fd, data, len) < 0) {
        int rc = cf_error_set(err, CF_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        cf_atomic_abort(&f);
        return rc;
    }
    return cf_atomic_commit(&f, err);
}

int cf_write_file_atomic(const char *path, const void *data, size_t len, cf_error *err)
{
    return cf_write_file_at(AT_FDCWD, path, data, len, 0644, err);
}

int cf_symlink_atomic(const char *target, const char *path, cf_error *err)
{
    int dir_fd = -1;
    char *base = NULL, *tmp = NULL;
    if (open_parent(AT_FDCWD, path, &dir_fd, &base, err) < 0)
        return -1;
    int rc = -1;
    for (int tries = 0; tries < 100 && rc < 0; tries++) {
        free(tmp);
        tmp = random_name(base);
        if (symlinkat(target, dir_fd, tmp) == 0)
            rc = 0;
        else if (errno != EEXIST)
            break;
    }
    if (rc < 0) {
        cf_error_set(err, CF_ERR_IO, "cannot create the link %s: %s", path, strerror(errno));
    } else if (renameat(dir_fd, tmp, dir_fd, base) != 0) {
        rc = cf_error_set(err, CF_ERR_IO, "cannot point %s at %s: %s", path, target, strerror(errno));
        unlinkat(dir_fd, tmp, 0);
    } else {
        fsync(dir_fd);
    }
    close(dir_fd);
    free(base);
    free(tmp);
    return rc;
}

int cf_open_log(const char *path, int cloexec, cf_error *err)
{
    /* O_NONBLOCK: a FIFO planted there fails at once instead of blocking. */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | (cloexec ? O_CLOEXEC : 0), 0644);
    if (fd < 0)
        return cf_error_set(err, CF_ERR_IO, "cannot write the log %s: %s", path,
                            errno == ELOOP ? "it is a symbolic link (cclforge never writes through one)"
                                           : strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cf_error_set(err, CF_ERR_IO, "cannot write the log %s: not a regular file", path);
    }
    fcntl(fd, F_SETFL, O_APPEND);
    return fd;
}
