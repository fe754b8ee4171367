/* The one way cclforge writes a file: a fresh temporary beside the final name
 * (a random name opened with O_CREAT|O_EXCL|O_NOFOLLOW, so nothing planted
 * there is ever opened), fsync, then rename over the final name, then fsync of
 * the directory. A symbolic link at the final name is refused, never written
 * through; a reader sees the old content or the new, never a part. */
#ifndef CCLFORGE_ATOMIC_FILE_H
#define CCLFORGE_ATOMIC_FILE_H

#include <stddef.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_atomic_file {
    int fd;         /* write the content here; -1 once committed or aborted */
    int dir_fd;     /* the directory holding both names */
    char *tmp_name; /* the temporary, inside dir_fd */
    char *name;     /* the final name, inside dir_fd */
    char *path;     /* the final path as given, for messages */
    char *tmp_path; /* the temporary as a path (at_fd AT_FDCWD only, else NULL), for
                       tools that write by name (the linker, libzip) */
};

/* Creates the temporary for path (relative paths resolve against at_fd, e.g.
 * AT_FDCWD or a staging directory's fd) with mode (the umask applies). */
int cf_atomic_begin(struct cf_atomic_file *f, int at_fd, const char *path, unsigned mode, cf_error *err);
/* fsync, rename over the final name, fsync the directory; releases f. On
 * failure the temporary is removed. */
int cf_atomic_commit(struct cf_atomic_file *f, cf_error *err);
/* Removes the temporary and releases f (safe after a commit). */
void cf_atomic_abort(struct cf_atomic_file *f);

/* The whole content at once (cf_write_file_atomic is this with AT_FDCWD, 0644). */
int cf_write_file_at(int at_fd, const char *path, const void *data, size_t len, unsigned mode, cf_error *err);
/* Points the symbolic link path at target: a new link under a random name
 * renamed over the old one (readers see one or the other). */
int cf_symlink_atomic(const char *target, const char *path, cf_error *err);
/* Opens a log that grows while a program runs (appended, created 0644): never
 * through a link, only a regular file. Returns the fd or -1. */
int cf_open_log(const char *path, int cloexec, cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
