#include "cclforge/syscompat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/strbuf.h"

/* Linux's numbers where the build's headers predate the calls (the release
 * toolchain's are a 2.17 glibc's). */
#ifndef SYS_getrandom
#if defined(__x86_64__)
#define SYS_getrandom 318
#elif defined(__aarch64__)
#define SYS_getrandom 278
#endif
#endif
#ifndef SYS_renameat2
#if defined(__x86_64__)
#define SYS_renameat2 316
#elif defined(__aarch64__)
#define SYS_renameat2 276
#endif
#endif

static ssize_t urandom_read(void *buf, size_t len)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            errno = e;
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    return (ssize_t)got;
}

ssize_t cf_getrandom(void *buf, size_t len, unsigned int flags)
{
#ifdef SYS_getrandom
    long n = syscall(SYS_getrandom, buf, len, flags);
    if (n >= 0 || errno != ENOSYS)
        return (ssize_t)n;
#endif
    return urandom_read(buf, len);
}

static int exists_at(int dirfd, const char *path)
{
    struct stat st;
    return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int exchange_by_renames(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char *aside = cf_asprintf("%s.cclforge-exchange-%ld-%ld", newpath, (long)getpid(), (long)ts.tv_nsec);
    int rc = -1;
    if (renameat(newdirfd, newpath, newdirfd, aside) == 0) {
        if (renameat(olddirfd, oldpath, newdirfd, newpath) == 0) {
            rc = renameat(newdirfd, aside, olddirfd, oldpath);
        } else {
            int e = errno;
            (void)renameat(newdirfd, aside, newdirfd, newpath); /* put it back */
            errno = e;
        }
    }
    free(aside);
    return rc;
}

int cf_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)
{
#ifdef SYS_renameat2
    long r = syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
    if (r == 0 || (errno != ENOSYS && errno != EINVAL))
        return (int)r;
#endif
    if (flags == 0)
        return renameat(olddirfd, oldpath, newdirfd, newpath);
    if (flags == RENAME_NOREPLACE) {
        if (exists_at(newdirfd, newpath)) {
            errno = EEXIST;
            return -1;
        }
        return renameat(olddirfd, oldpath, newdirfd, newpath);
    }
    if (flags == RENAME_EXCHANGE) {
        if (!exists_at(olddirfd, oldpath) || !exists_at(newdirfd, newpath)) {
            errno = ENOENT;
            return -1;
        }
        return exchange_by_renames(olddirfd, oldpath, newdirfd, newpath);
    }
    errno = EINVAL;
    return -1;
}
