/* A small on-disk cache of what a probe (a program's --version, a Python's
 * description of itself) answered: one file per key under
 * <cache root>/<kind>-v1/, holding the key, the answer and the files the
 * answer depends on with their identity (device, inode, size, mtime and
 * ctime in ns). An entry is used only while every such file is unchanged and
 * was not changed in the two seconds before it was stored (a timestamp tick
 * could hide a second change). Writers race safely: mkostemp (O_NOFOLLOW) in
 * the entry's directory, then rename. At most MAX_ENTRIES per kind. */
#include "cclforge/depcache.h"

#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/fs.h"

#define MAGIC "CFDEP1\n"
/* MAX_ENTRIES: inspect keeps one answer per file and output form, and a
 * corpus walked in rotation by more entries than the bound would never hit.
 * A prune lists the whole directory, so it runs after one store in
 * PRUNE_EVERY (chosen by the key's hash): the bound is overshot by about
 * that many entries at most, and a cold run does not pay a listing per file. */
enum { MAX_ENTRY = 1 << 20, MAX_ENTRIES = 2048, PRUNE_EVERY = 32 };

static int file_id(const char *path, struct cf_file_id *id)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    id->dev = (uint64_t)st.st_dev;
    id->ino = (uint64_t)st.st_ino;
    id->size = (uint64_t)st.st_size;
    id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    id->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
    return 0;
}

static char *dir_of(const char *kind)
{
    char *root = cf_cache_root_usable(NULL);
    char *d = root ? cf_asprintf("%s/%s-v1", root, kind) : NULL; /* no (trusted) root: nothing is kept */
    free(root);
    return d;
}

static uint64_t key_hash(const char *key, size_t key_len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < key_len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
    return h;
}

static char *entry_path(const char *kind, const char *key, size_t key_len)
{
    uint64_t h = key_hash(key, key_len);
    char *d = dir_of(kind);
    char *p = d ? cf_asprintf("%s/%016llx", d, (unsigned long long)h) : NULL;
    free(d);
    return p;
}

/* Reads a length-prefixed field ("<decimal>\n<bytes>\n"). */
static const char *field(const char *p, const char *end, const char **start, size_t *len)
{
    char *nl;
    unsigned long long n = strtoull(p, &nl, 10);
    if (nl == p || nl >= end || *nl != '\n' || n > (unsigned long long)(end - nl - 1))
        return NULL;
    *start = nl + 1;
    *len = (size_t)n;
    const char *next = *start + n;
    return next < end && *next == '\n' ? next + 1 : NULL;
}

int cf_depcache_get(const char *kind, const char *key, size_t key_len, struct strbuf *value)
{
    char *path = entry_path(kind, key, key_len);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
    free(path);
    if (fd < 0)
        return 0;
    struct stat st;
    struct strbuf b = STRBUF_INIT;
    int ok = 0;
    /* ours alone: the root is trusted (cf_cache_root_usable), its entries must be too */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022) &&
        st.st_size > 0 && st.st_size <= MAX_ENTRY) {
        char *buf = cf_xmalloc((size_t)st.st_size);
        if (pread(fd, buf, (size_t)st.st_size, 0) == st.st_size)
            cf_sb_add(&b, buf, (size_t)st.st_size);
        free(buf);
    }
    close(fd);
    const char *p = b.buf, *end = b.buf ? b.buf + b.len : NULL;
    const char *k, *v;
    size_t kl, vl, n_deps;
    if (!p || b.len < sizeof MAGIC - 1 || memcmp(p, MAGIC, sizeof MAGIC - 1) != 0)
        goto done;
    p += sizeof MAGIC - 1;
    if (!(p = field(p, end, &k, &kl)) || kl != key_len || memcmp(k, key, kl) != 0)
        goto done;
    if (!(p = field(p, end, &v, &vl)))
        goto done;
    char *nl;
    n_deps = (size_t)strtoull(p, &nl, 10);
    if (nl == p || *nl != '\n' || n_deps > CF_DEPCACHE_MAX_DEPS)
        goto done;
    p = nl + 1;
    for (size_t i = 0; i < n_deps; i++) {
        const char *dp;
        size_t dl;
        if (!(p = field(p, end, &dp, &dl)))
            goto done;
        struct cf_file_id want, now;
        int used = 0;
        if (sscanf(p, "%llu %llu %llu %lld %lld%n", (unsigned long long *)&want.dev, (unsigned long long *)&want.ino,
                   (unsigned long long *)&want.size, (long long *)&want.mtime_ns, (long long *)&want.ctime_ns,
                   &used) != 5 || p + used >= end || p[used] != '\n')
            goto done;
        p += used + 1;
        char *dep = cf_strndup(dp, dl);
        struct cf_file_id absent = { 0 };
        int same = memcmp(&want, &absent, sizeof want) == 0
                       ? file_id(dep, &now) != 0 /* recorded as absent: must still be */
                       : file_id(dep, &now) == 0 && memcmp(&now, &want, sizeof now) == 0;
        free(dep);
        if (!same)
            goto done;
    }
    if (p != end)
        goto done;
    cf_sb_add(value, v, vl);
    ok = 1;
done:
    cf_sb_release(&b);
    return ok;
}

void cf_depcache_put(const char *kind, const char *key, size_t key_len, const char *value, size_t value_len,
                     const char *const *deps)
{
    struct strbuf b = STRBUF_INIT;
    cf_sb_adds(&b, MAGIC);
    cf_sb_addf(&b, "%zu\n", key_len);
    cf_sb_add(&b, key, key_len);
    cf_sb_addf(&b, "\n%zu\n", value_len);
    cf_sb_add(&b, value, value_len);
    size_t n = 0;
    while (deps && deps[n])
        n++;
    if (n > CF_DEPCACHE_MAX_DEPS) {
        cf_sb_release(&b); /* get would refuse it */
        return;
    }
    cf_sb_addf(&b, "\n%zu\n", n);
    for (size_t i = 0; i < n; i++) {
        struct cf_file_id id = { 0 };
        int optional = deps[i][0] == '?';
        const char *dep = deps[i] + optional;
        if (file_id(dep, &id) != 0) {
            if (!optional) {
                cf_sb_release(&b); /* missing: not safe to remember */
                return;
            }
            memset(&id, 0, sizeof id); /* absent, and must stay so */
        } else if (cf_file_id_racy(&id)) {
            cf_sb_release(&b); /* changed just now: a tick could hide a second change */
            return;
        }
        cf_sb_addf(&b, "%zu\n%s\n%llu %llu %llu %lld %lld\n", strlen(dep), dep, (unsigned long long)id.dev,
                   (unsigned long long)id.ino, (unsigned long long)id.size, (long long)id.mtime_ns,
                   (long long)id.ctime_ns);
    }
    char *dir = dir_of(kind);
    char *path = entry_path(kind, key, key_len);
    char *tmp = dir ? cf_asprintf("%s/.tmp-XXXXXX", dir) : NULL;
    int fd = dir && cf_mkdir_p(dir, 0700, NULL) == 0 ? mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW) : -1;
    if (fd >= 0) {
        int wrote = cf_write_all(fd, b.buf, b.len) == 0;
        if (close(fd) != 0 || !wrote || rename(tmp, path) != 0)
            unlink(tmp);
        else if (key_hash(key, key_len) % PRUNE_EVERY == 0)
            cf_cache_prune(dir, 1, MAX_ENTRIES, UINT64_MAX);
    }
    free(tmp);
    free(path);
    free(dir);
    cf_sb_release(&b);
}
