/* An installed build's files and their record in the manifest ("files": size,
 * sha256 and a stat stamp per file, the target per link): written once when
 * the tree is staged, checked before the staged tree is renamed into place,
 * on every cache hit, by `nccl list` and before `nccl env` hands it out. All
 * through the build directory's descriptor: no path is re-resolved. */
#include "nccl_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/trust.h"
#include "cclforge/vendor.h"

/* The subtrees a build holds besides manifest.json and build.log. */
static const char *const recorded_dirs[] = { "include", "lib" };

#define MAX_DEPTH 16
#define MAX_ENTRIES 100000

static void stamp_of(const struct stat *st, char *out, size_t n)
{
    snprintf(out, n, "%llu:%lld.%09ld:%lld.%09ld", (unsigned long long)st->st_ino, (long long)st->st_mtim.tv_sec,
             st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

static int hash_at(int dir_fd, const char *rel, char hex[65], cf_error *err)
{
    int fd = openat(dir_fd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", rel, strerror(errno));
    int rc = cf_sha256_fd(fd, rel, hex, err);
    close(fd);
    return rc;
}

struct walk {
    int root_fd;
    cJSON *files;
    size_t entries;
};

static int record_dir(struct walk *w, const char *rel, int depth, cf_error *err)
{
    if (depth > MAX_DEPTH)
        return cf_error_set(err, CF_ERR_FORMAT, "%s: nested deeper than %d directories", rel, MAX_DEPTH);
    int fd = openat(w->root_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return cf_error_set(err, CF_ERR_IO, "%s: %s", rel, strerror(errno));
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (++w->entries > MAX_ENTRIES) {
            rc = cf_error_set(err, CF_ERR_FORMAT, "more than %d files in the build", MAX_ENTRIES);
            break;
        }
        char *child = cf_asprintf("%s/%s", rel, e->d_name);
        struct stat st;
        if (fstatat(w->root_fd, child, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = cf_error_set(err, CF_ERR_IO, "%s: %s", child, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            rc = record_dir(w, child, depth + 1, err);
        } else if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t n = readlinkat(w->root_fd, child, target, sizeof target - 1);
            if (n < 0) {
                rc = cf_error_set(err, CF_ERR_IO, "%s: %s", child, strerror(errno));
            } else {
                target[n] = 0;
                cJSON *f = cJSON_AddObjectToObject(w->files, child);
                cJSON_AddStringToObject(f, "link", target);
            }
        } else if (S_ISREG(st.st_mode)) {
            char hex[65], stamp[96];
            rc = hash_at(w->root_fd, child, hex, err);
            if (rc == 0) {
                stamp_of(&st, stamp, sizeof stamp);
                cJSON *f = cJSON_AddObjectToObject(w->files, child);
                cJSON_AddNumberToObject(f, "size", (double)st.st_size);
                cJSON_AddStringToObject(f, "sha256", hex);
                cJSON_AddStringToObject(f, "stamp", stamp);
            }
        }
        free(child);
    }
    closedir(d);
    return rc;
}

cJSON *cf_nccl_tree_record(int dir_fd, cf_error *err)
{
    struct walk w = { dir_fd, cJSON_CreateObject(), 0 };
    for (size_t i = 0; i < sizeof recorded_dirs / sizeof recorded_dirs[0]; i++) {
        struct stat st;
        if (fstatat(dir_fd, recorded_dirs[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (record_dir(&w, recorded_dirs[i], 0, err) < 0) {
            cJSON_Delete(w.files);
            return NULL;
        }
    }
    return w.files;
}

/* ---- checking ---- */

/* A manifest path must stay inside the build: relative, no "." or ".." parts. */
static int inside_path(const char *rel)
{
    if (!*rel || rel[0] == '/' || strlen(rel) > 4096)
        return 0;
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += n;
        if (*p == '/')
            p++;
        if (!*p && p[-1] == '/')
            return 0;
    }
    return 1;
}

static int damaged(struct strbuf *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int damaged(struct strbuf *why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(why, fmt, ap);
    va_end(ap);
    return 1;
}

static int check_trusted(const char *rel, const struct stat *st, struct strbuf *why)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_stat_trusted(rel, st, &err) == 0)
        return 0;
    cf_sb_adds(why, cf_error_message(&err));
    cf_error_clear(&err);
    return 1;
}

static int check_file(int dir_fd, const char *rel, const cJSON *want, int full, struct strbuf *why)
{
    if (!inside_path(rel))
        return damaged(why, "the manifest names '%s', a path outside the build", rel);
    struct stat st;
    if (fstatat(dir_fd, rel, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return damaged(why, "%s is missing", rel);
    const cJSON *link = cJSON_GetObjectItemCaseSensitive(want, "link");
    if (cJSON_IsString(link)) {
        char target[4096];
        ssize_t n = S_ISLNK(st.st_mode) ? readlinkat(dir_fd, rel, target, sizeof target - 1) : -1;
        if (n >= 0)
            target[n] = 0;
        if (n < 0 || strcmp(target, link->valuestring))
            return damaged(why, "%s should be a link to %s%s%s", rel, link->valuestring, n < 0 ? "" : ", not to ",
                           n < 0 ? "" : target);
        return 0;
    }
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(want, "size");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(want, "sha256");
    const cJSON *stamp = cJSON_GetObjectItemCaseSensitive(want, "stamp");
    if (!cJSON_IsNumber(size) || !cJSON_IsString(sha))
        return damaged(why, "the manifest's entry for %s has no size or sha256", rel);
    if (!S_ISREG(st.st_mode))
        return damaged(why, "%s is not a regular file any more", rel);
    if (check_trusted(rel, &st, why))
        return 1;
    if ((double)st.st_size != size->valuedouble)
        return damaged(why, "%s has %lld bytes, the manifest says %.0f", rel, (long long)st.st_size, size->valuedouble);
    char now[96];
    stamp_of(&st, now, sizeof now);
    if (!full && cJSON_IsString(stamp) && !strcmp(now, stamp->valuestring))
        return 0; /* unchanged since the manifest was written: the cheap path */
    char hex[65];
    cf_error err = CF_ERROR_INIT;
    if (hash_at(dir_fd, rel, hex, &err) < 0) {
        cf_sb_adds(why, cf_error_message(&err));
        cf_error_clear(&err);
        return 1;
    }
    if (strcmp(hex, sha->valuestring))
        return damaged(why, "%s was changed after install (sha256 %.12s..., the manifest says %.12s...)", rel, hex,
                       sha->valuestring);
    return 0;
}

/* Everything the layout promises (the vendor table's comm library: NCCL's
 * src/Makefile lib target) is in the record: the library, its soname and
 * development links, a header, the pkg-config file. */
static int check_promised(const struct nccl_manifest *m, struct strbuf *why)
{
    const cJSON *files = m->files;
    const struct cf_comm_profile *comm = cf_comm_profile_by_kind(m->library_kind ? m->library_kind : "nccl");
    if (!comm || !m->library)
        return damaged(why, "the manifest names no library or an unknown library kind");
    char *soname = cf_asprintf("lib/%s", comm->soname);
    char *dev = cf_asprintf("lib/%s", comm->stem);
    char *pc = cf_asprintf("lib/pkgconfig/%s.pc", comm->link_name);
    const char *need[] = { m->library, soname, dev, pc };
    int bad = 0;
    for (size_t i = 0; !bad && i < sizeof need / sizeof need[0]; i++)
        if (!cJSON_GetObjectItemCaseSensitive(files, need[i]))
            bad = damaged(why, "%s is not part of the build", need[i]);
    int header = 0;
    for (size_t i = 0; !header && comm->headers[i]; i++) {
        char *h = cf_asprintf("include/%s", comm->headers[i]);
        header = cJSON_GetObjectItemCaseSensitive(files, h) != NULL;
        free(h);
    }
    if (!bad && !header)
        bad = damaged(why, "include/%s is not part of the build", comm->headers[0]);
    free(soname);
    free(dev);
    free(pc);
    return bad;
}

/* Nothing in lib/ that the manifest does not list: LD_LIBRARY_PATH points there. */
static int check_no_extra(int dir_fd, const char *rel, const cJSON *files, struct strbuf *why)
{
    int fd = openat(dir_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return damaged(why, "%s/ is missing or not a directory", rel);
    }
    struct stat st;
    int bad = fstat(dirfd(d), &st) == 0 ? check_trusted(rel, &st, why) : 0;
    struct dirent *e;
    while (!bad && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *child = cf_asprintf("%s/%s", rel, e->d_name);
        if (!strcmp(child, "lib/pkgconfig"))
            bad = check_no_extra(dir_fd, child, files, why);
        else if (!cJSON_GetObjectItemCaseSensitive(files, child))
            bad = damaged(why, "%s is not part of the build (the manifest does not list it)", child);
        free(child);
    }
    closedir(d);
    return bad;
}

int cf_nccl_tree_check(int dir_fd, const struct nccl_manifest *m, int full, struct strbuf *why)
{
    struct stat st;
    if (fstat(dir_fd, &st) == 0 && check_trusted("the build directory", &st, why))
        return 1;
    if (!m->files) {
        /* A manifest of an older cclforge: the library's hash is all there is. */
        const char *lib = m->library;
        if (!lib || !m->library_sha256)
            return damaged(why, "the manifest names no library and no hash");
        if (!inside_path(lib))
            return damaged(why, "the manifest names '%s', a path outside the build", lib);
        char hex[65];
        if (fstatat(dir_fd, lib, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            return damaged(why, "%s is missing or not a regular file", lib);
        if (check_trusted(lib, &st, why))
            return 1;
        if (hash_at(dir_fd, lib, hex, NULL) < 0 || strcmp(hex, m->library_sha256))
            return damaged(why, "%s was changed after install (its sha256 differs from the manifest's)", lib);
        return 0;
    }
    if (check_promised(m, why))
        return 1;
    const cJSON *f;
    cJSON_ArrayForEach(f, m->files)
    {
        if (!f->string || check_file(dir_fd, f->string, f, full, why))
            return 1;
    }
    return check_no_extra(dir_fd, "lib", m->files, why);
}
