/* A small on-disk cache of what a probe (a program's --version, a Python's
 * description of itself) answered: one file per key under
 * <cache root>/<kind>-v2/, holding the key, the answer and the files the
 * answer depends on with their identity (device, inode, size, mtime and
 * ctime in ns). An entry is used only while every such file is unchanged and
 * was not changed in the two seconds before it was stored (a timestamp tick
 * could hide a second change). Writers race safely: mkostemp (O_NOFOLLOW) in
 * the entry's directory, then rename. At most MAX_ENTRIES per kind. */
#include "cclforge/depcache.h"
#include "cclforge/fnv1a.h"

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
/* A prune lists the whole directory, so it runs after one store in
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

/* <root>/<kind>-v2, and an entry's path in it; the version moves whenever
 * what names or fills an entry does (v2: keys hashed from the published
 * FNV-1a basis), so an older entry is never read under a new key. */
static char *dir_in(const char *root, const char *kind)
{
    if (!root)
        return NULL; /* no (trusted) root: nothing is kept */
    struct strbuf d = STRBUF_INIT;
    cf_sb_adds(&d, root);
    cf_sb_addc(&d, '/');
    cf_sb_adds(&d, kind);
    cf_sb_adds(&d, "-v2");
    return cf_sb_detach(&d);
}

static char *dir_of(const char *kind)
{
    char *root = cf_cache_root_usable(NULL);
    char *d = dir_in(root, kind);
    free(root);
    return d;
}

static uint64_t key_hash(const char *key, size_t key_len)
{
    return cf_fnv1a64(key, key_len);
}

/* "<dir>/<the key's hash in 16 hex digits>" */
static char *entry_path_in(const char *root, const char *kind, const char *key, size_t key_len)
{
    static const char hex[16] = { '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f' };
    char *d = dir_in(root, kind);
    if (!d)
        return NULL;
    uint64_t h = key_hash(key, key_len);
    char name[18] = { '/' };
    for (int i = 0; i < 16; i++)
        name[1 + i] = hex[(h >> (60 - 4 * i)) & 0xf];
    struct strbuf p = STRBUF_INIT;
    cf_sb_adds(&p, d);
    cf_sb_add(&p, name, sizeof name);
    free(d);
    return cf_sb_detach(&p);
}

static char *entry_path(const char *kind, const char *key, size_t key_len)
{
    char *root = cf_cache_root_usable(NULL);
    char *p = entry_path_in(root, kind, key, key_len);
    free(root);
    return p;
}

/* The decimal digits at p, before end, into *v; NULL when none, more than
 * fit 64 bits, or running into end. What follows is the caller's to check. */
static const char *decimal(const char *p, const char *end, uint64_t *v)
{
    const char *start = p;
    uint64_t n = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned digit = (unsigned)(*p - '0');
        if (n > (UINT64_MAX - digit) / 10)
            return NULL;
        n = n * 10 + digit;
    }
    *v = n;
    return p > start && p < end ? p : NULL;
}

/* The same with an optional '-' (times before 1970), within int64_t. */
static const char *signed_decimal(const char *p, const char *end, int64_t *v)
{
    int neg = p < end && *p == '-';
    uint64_t n;
    if (!(p = decimal(p + neg, end, &n)) || n > (uint64_t)INT64_MAX + (uint64_t)neg)
        return NULL;
    *v = neg && n ? -(int64_t)(n - 1) - 1 : (int64_t)n;
    return p;
}

/* One dependency's identity line: "<dev> <ino> <size> <mtime_ns> <ctime_ns>\n". */
static const char *identity(const char *p, const char *end, struct cf_file_id *id)
{
    if ((p = decimal(p, end, &id->dev)) && *p == ' ' && (p = decimal(p + 1, end, &id->ino)) && *p == ' ' &&
        (p = decimal(p + 1, end, &id->size)) && *p == ' ' && (p = signed_decimal(p + 1, end, &id->mtime_ns)) &&
        *p == ' ' && (p = signed_decimal(p + 1, end, &id->ctime_ns)) && *p == '\n')
        return p + 1;
    return NULL;
}

/* Reads a length-prefixed field ("<decimal>\n<bytes>\n"). */
static const char *field(const char *p, const char *end, const char **start, size_t *len)
{
    uint64_t n;
    if (!(p = decimal(p, end, &n)) || *p != '\n' || n > (uint64_t)(end - p - 1))
        return NULL;
    *start = p + 1;
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
        cf_sb_grow(&b, (size_t)st.st_size); /* read in place: one copy of the entry */
        if (pread(fd, b.buf, (size_t)st.st_size, 0) == st.st_size) {
            b.len = (size_t)st.st_size;
            b.buf[b.len] = '\0';
        }
    }
    close(fd);
    const char *k, *v;
    size_t kl, vl;
    uint64_t n_deps;
    if (b.len < sizeof MAGIC - 1 || memcmp(b.buf, MAGIC, sizeof MAGIC - 1) != 0)
        goto done;
    const char *p = b.buf, *end = b.buf + b.len;
    p += sizeof MAGIC - 1;
    if (!(p = field(p, end, &k, &kl)) || kl != key_len || memcmp(k, key, kl) != 0)
        goto done;
    if (!(p = field(p, end, &v, &vl)))
        goto done;
    if (!(p = decimal(p, end, &n_deps)) || *p != '\n' || n_deps > CF_DEPCACHE_MAX_DEPS)
        goto done;
    p++;
    for (uint64_t i = 0; i < n_deps; i++) {
        const char *dp;
        size_t dl;
        struct cf_file_id want, now;
        if (!(p = field(p, end, &dp, &dl)) || !(p = identity(p, end, &want)))
            goto done;
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
