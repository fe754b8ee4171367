/* System calls that glibc 2.17 (the release build's floor, manylinux2014)
 * does not wrap, made through syscall(2), with the fallback a kernel that
 * lacks the call needs (CentOS 7's 3.10 has neither getrandom nor renameat2).
 * Same contracts as the glibc wrappers of the same names. */
#ifndef CCLFORGE_SYSCOMPAT_H
#define CCLFORGE_SYSCOMPAT_H

#include <stddef.h>
#include <sys/types.h>

#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 0x0001
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* getrandom(2); on a kernel without it (ENOSYS), /dev/urandom, which on such
 * a kernel is the same pool. */
ssize_t cf_getrandom(void *buf, size_t len, unsigned int flags);

/* renameat2(2). Without it (ENOSYS, or EINVAL from a file system that lacks
 * the flag): RENAME_NOREPLACE becomes a check then renameat (EEXIST when the
 * target exists; a racing creator in between is not caught), RENAME_EXCHANGE
 * three renames through a unique name beside the target (for a moment the
 * target is absent; never lost: each step is a rename). */
int cf_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

#endif
