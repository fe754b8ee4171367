/* Files cclforge reads beside itself at run time (share/cclforge/ in the
 * source tree, mirrored into every build directory, installed under
 * <prefix>/share/cclforge). */
#ifndef CCLFORGE_SHARE_H
#define CCLFORGE_SHARE_H

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The real path of share/cclforge/<rel> beside the running executable: the
 * one lookup rule is <exe dir>/share/cclforge (a build directory) then
 * <exe dir>/../share/cclforge (an installed prefix). NULL when neither holds a
 * regular file. Caller frees. */
char *cf_share_file(const char *rel);
/* The paths cf_share_file looked at for rel, comma-separated, for an error
 * that says where: a wheel installed with pip puts the executable in
 * <prefix>/bin and share/ in <prefix>/share, a tarball keeps them side by
 * side. Caller frees. */
char *cf_share_looked(const char *rel);
/* cf_share_file for a file cclforge cannot work without (a script it runs):
 * NULL with err (CF_ERR_NOTFOUND) naming the file, where it was looked for
 * and the fix (reinstall: the wheel and the tarball carry share/cclforge). */
char *cf_share_need(const char *rel, cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
