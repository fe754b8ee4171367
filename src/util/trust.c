/* The ownership and mode rule of cclforge/trust.h. */
#include "cclforge/trust.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

/* Group write is harmless when the group is the user's private one (named
 * after the user, the user's primary group, no other member), as Debian's
 * OpenSSH accepts it: umask 002 systems create such directories. */
static int private_group(gid_t gid)
{
    const struct passwd *pw = getpwuid(geteuid());
    if (!pw || pw->pw_gid != gid)
        return 0;
    const struct group *gr = getgrgid(gid);
    if (!gr || strcmp(gr->gr_name, pw->pw_name))
        return 0;
    for (char **m = gr->gr_mem; *m; m++)
        if (strcmp(*m, pw->pw_name))
            return 0;
    return 1;
}

int cf_stat_trusted(const char *path, const struct stat *st, cf_error *err)
{
    uid_t me = geteuid();
    if (st->st_uid != me && st->st_uid != 0)
        return cf_error_set(err, CF_ERR_FAILED,
                            "%s is owned by uid %u, not by you (uid %u) or root: another user could change what "
                            "cclforge uses there; use a directory of your own (--root or CCLFORGE_HOME)",
                            path, (unsigned)st->st_uid, (unsigned)me);
    if (S_ISLNK(st->st_mode))
        return 0; /* a link's own mode means nothing; what it points to is checked */
    if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && !private_group(st->st_gid)))
        return cf_error_set(err, CF_ERR_FAILED,
                            "%s is writable by %s (mode %04o): another user could change what cclforge uses there; "
                            "chmod go-w %s",
                            path, st->st_mode & S_IWOTH ? "everyone" : "its group", (unsigned)(st->st_mode & 07777),
                            path);
    return 0;
}

int cf_path_trusted(const char *path, int follow, cf_error *err)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0)
        return cf_error_set(err, errno == ENOENT ? CF_ERR_NOTFOUND : CF_ERR_IO, "%s: %s", path, strerror(errno));
    return cf_stat_trusted(path, &st, err);
}
