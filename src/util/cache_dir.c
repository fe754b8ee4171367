/* Where cclforge keeps what it can rebuild: builds, scan results, probes. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "cclforge/trust.h"

static const char *absolute_env(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '/' ? v : NULL;
}

char *cf_cache_root(void)
{
    const char *home = getenv("CCLFORGE_HOME");
    if (home && *home)
        return cf_strdup(home);
    /* XDG: a relative XDG_CACHE_HOME is invalid and ignored. */
    const char *xdg = absolute_env("XDG_CACHE_HOME");
    if (xdg)
        return cf_path_join(xdg, "cclforge");
    const char *user_home = absolute_env("HOME");
    /* Never a shared directory such as /tmp: another user could plant what
     * cclforge would then load or LD_PRELOAD. */
    return user_home ? cf_asprintf("%s/.cache/cclforge", user_home) : NULL;
}

char *cf_cache_root_usable(cf_error *why)
{
    char *root = cf_cache_root();
    if (root && cf_dir_trusted(root, why) < 0) {
        cf_error_prefix(why, "the cache root %s is not used", root);
        free(root);
        return NULL;
    }
    return root;
}

int cf_file_id_racy(const struct cf_file_id *id)
{
    const int64_t racy_ns = 2LL * 1000000000;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* file times are wall-clock times */
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return now - id->mtime_ns < racy_ns || now - id->ctime_ns < racy_ns;
}

struct cached_file {
    char *path;
    int64_t mtime;
    uint64_t size;
};

struct cached_files {
    struct cached_file *v;
    size_t n, cap;
    uint64_t total;
};

static void list_cached(const char *dir, int depth, struct cached_files *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *p = cf_path_join(dir, e->d_name);
        struct stat st;
        if (depth > 1) {
            list_cached(p, depth - 1, out);
        } else if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 64;
                out->v = cf_xrealloc(out->v, out->cap * sizeof *out->v);
            }
            out->v[out->n++] = (struct cached_file){ p, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
                                                     (uint64_t)st.st_size };
            out->total += (uint64_t)st.st_size;
            p = NULL;
        }
        free(p);
    }
    closedir(d);
}

size_t cf_cache_prune(const char *dir, int depth, size_t max_files, uint64_t max_bytes)
{
    struct cached_files f = { NULL, 0, 0, 0 };
    list_cached(dir, depth, &f);
    size_t removed = 0;
    while (f.n && (f.n > max_files || f.total > max_bytes)) {
        size_t oldest = 0;
        for (size_t i = 1; i < f.n; i++)
            if (f.v[i].mtime < f.v[oldest].mtime)
                oldest = i;
        if (unlink(f.v[oldest].path) == 0)
            removed++;
        f.total -= f.v[oldest].size;
        free(f.v[oldest].path);
        f.v[oldest] = f.v[--f.n];
    }
    for (size_t i = 0; i < f.n; i++)
        free(f.v[i].path);
    free(f.v);
    return removed;
}
