/* The ownership and mode rule of cclforge/trust.h, for one path and for a
 * directory with every directory above it. */
#include "cclforge/trust.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"

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

/* cf_stat_trusted for the user me: a walk asks geteuid once, not per component. */
static int stat_trusted_as(uid_t me, const char *path, const struct stat *st, cf_error *err)
{
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

int cf_stat_trusted(const char *path, const struct stat *st, cf_error *err)
{
    return stat_trusted_as(geteuid(), path, st, err);
}

int cf_path_trusted(const char *path, int follow, cf_error *err)
{
    struct stat st;
    if ((follow ? stat(path, &st) : lstat(path, &st)) != 0)
        return cf_error_set(err, errno == ENOENT ? CF_ERR_NOTFOUND : CF_ERR_IO, "%s: %s", path, strerror(errno));
    return cf_stat_trusted(path, &st, err);
}

/* A directory above the one cclforge uses: its owner and anyone who may write
 * it could rename what lies below and put their own in its place, unless it
 * is sticky (as /tmp: only an entry's owner may rename it). */
static int ancestor_trusted(uid_t me, const char *dir, const char *below, const struct stat *st, cf_error *err)
{
    if (st->st_uid != me && st->st_uid != 0)
        return cf_error_set(err, CF_ERR_FAILED,
                            "%s, a directory above %s, is owned by uid %u, not by you (uid %u) or root: its owner "
                            "could replace what lies below it; use a directory of your own (--root or CCLFORGE_HOME)",
                            dir, below, (unsigned)st->st_uid, (unsigned)me);
    if (S_ISLNK(st->st_mode) || (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX)))
        return 0;
    if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && !private_group(st->st_gid)))
        return cf_error_set(err, CF_ERR_FAILED,
                            "%s, a directory above %s, is writable by %s (mode %04o) and not sticky: another user "
                            "could rename what lies below it and put their own in its place; chmod go-w %s (or "
                            "chmod +t %s), or use a directory of your own (--root or CCLFORGE_HOME)",
                            dir, below, st->st_mode & S_IWOTH ? "everyone" : "its group",
                            (unsigned)(st->st_mode & 07777), dir, dir);
    return 0;
}

/* Every existing prefix of abs (normalised), "/" first: ancestors by the
 * ancestor rule, abs itself by cf_stat_trusted. What does not exist yet
 * ends the walk: cclforge creates it. */
static int chain_trusted(const char *abs, const char *named, int *saw_link, cf_error *err)
{
    size_t len = strlen(abs);
    char *prefix = cf_xmalloc(len + 2);
    uid_t me = geteuid();
    int rc = 0;
    for (size_t end = 0;;) {
        size_t n = end ? end : 1;
        memcpy(prefix, abs, n);
        prefix[n] = 0;
        struct stat st;
        if (lstat(prefix, &st) != 0) {
            if (errno != ENOENT)
                rc = cf_error_set(err, CF_ERR_IO, "%s: %s", prefix, strerror(errno));
            break;
        }
        int leaf = n >= len;
        *saw_link |= S_ISLNK(st.st_mode);
        rc = leaf ? stat_trusted_as(me, prefix, &st, err) : ancestor_trusted(me, prefix, named, &st, err);
        if (rc < 0 || leaf)
            break;
        for (end = n + 1; end < len && abs[end] != '/'; end++)
            ;
    }
    free(prefix);
    return rc;
}

/* The deepest prefix of lexical that exists, its links resolved, and the rest
 * as written; NULL when nothing resolves. */
static char *resolved(const char *lexical)
{
    char *p = cf_strdup(lexical);
    for (;;) {
        char *real = cf_realpath(p);
        if (real) {
            const char *rest = lexical + strlen(p);
            char *whole = !strcmp(real, "/") && *rest ? cf_strdup(rest) : cf_asprintf("%s%s", real, rest);
            free(real);
            free(p);
            return whole;
        }
        if (!strcmp(p, "/")) {
            free(p);
            return NULL;
        }
        char *up = cf_dirname(p);
        free(p);
        p = up;
    }
}

/* strstr(path, "/..") without strstr: every inspect asks this of the cache
 * root, and libc's strstr is a page of code no other part of a warm run
 * touches. */
static int has_dotdot(const char *path)
{
    for (const char *p = path; *p; p++)
        if (p[0] == '/' && p[1] == '.' && p[2] == '.')
            return 1;
    return 0;
}

int cf_dir_trusted(const char *path, cf_error *err)
{
    char *abs = cf_path_absolute(path);
    char *lexical = cf_path_normalize(abs, NULL);
    /* as written (a link is checked where it lies), then, when a link was
     * on the way or ".." was written, as the kernel resolves it */
    int saw_link = has_dotdot(abs);
    int rc = chain_trusted(lexical, path, &saw_link, err);
    char *real = rc == 0 && saw_link ? resolved(lexical) : NULL;
    if (real && strcmp(real, lexical))
        rc = chain_trusted(real, path, &saw_link, err);
    free(real);
    free(lexical);
    free(abs);
    return rc;
}
