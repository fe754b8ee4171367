/* Whether cclforge may trust what lies at a path, as ssh trusts ~/.ssh: owned
 * by you or by root, and writable by nobody else (group write only when the
 * group is your own private group). A library another user can change would
 * be LD_PRELOADed into your jobs. */
#ifndef CCLFORGE_TRUST_H
#define CCLFORGE_TRUST_H

#include <sys/stat.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when st (of path) is trusted; -1 with err naming the owner or the mode
 * and the fix. */
int cf_stat_trusted(const char *path, const struct stat *st, cf_error *err);
/* The same for path itself: stat()ed when follow is 1, lstat()ed otherwise.
 * A path that does not exist is an error (CF_ERR_NOTFOUND). */
int cf_path_trusted(const char *path, int follow, cf_error *err);
/* 0 when the directory path and every directory above it may be trusted, as
 * ssh checks ~/.ssh: path by cf_stat_trusted; each directory above owned by
 * you or root and writable by no one else unless it is sticky (/tmp), both as
 * written and with its symbolic links resolved. What does not exist yet
 * (cclforge creates it) is not checked, what is above it is. -1 with err
 * naming the directory at fault and the fix. */
int cf_dir_trusted(const char *path, cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
