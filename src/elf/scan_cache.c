/* The per-file scan cache (scancache.h): a memory layer for one run and a
 * directory of entries, one file per (device, inode), each holding its full
 * key. */
#include "cclforge/fs.h"
#include "cclforge/scancache.h"

#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "cclforge/fnv1a.h"
#include "cclforge/strbuf.h"

enum { MAX_ENTRY = 8 << 20 };      /* an entry is kilobytes; anything this large is not ours */
#define DEFAULT_MAX ((uint64_t)256 << 20)

/* Entries are kept encoded, as on disk: a disk hit is kept as read, a miss
 * encoded once (for the disk too), and each use decodes its own copy. */
struct remembered {
    struct cf_file_id id;
    unsigned have;
    struct strbuf bytes;
};

struct cf_scan_cache {
    char *dir;                 /* NULL: memory only */
    uint64_t max_bytes;
    struct remembered *v;
    size_t n;
    struct cf_scan_cache_stats stats;
};

struct cf_scan_cache *cf_scan_cache_new(const char *dir, int persistent, uint64_t max_bytes)
{
    struct cf_scan_cache *c = cf_xcalloc(1, sizeof *c);
    const char *env = getenv("CCLFORGE_SCAN_CACHE_MAX"); /* bytes; tests set a tiny bound */
    uint64_t from_env = env && *env ? strtoull(env, NULL, 10) : 0;
    c->max_bytes = max_bytes ? max_bytes : from_env ? from_env : DEFAULT_MAX;
    if (persistent) {
        if (dir) {
            c->dir = cf_strdup(dir);
        } else {
            char *root = cf_cache_root_usable(NULL); /* none (or untrusted): kept in memory only */
            /* the version moves with what names or fills an entry (v2: named
             * from the published FNV-1a basis): an old entry is never read */
            c->dir = root ? cf_path_join(root, "scan-v2") : NULL;
            free(root);
        }
    }
    return c;
}

void cf_scan_cache_free(struct cf_scan_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        cf_sb_release(&c->v[i].bytes);
    free(c->v);
    free(c->dir);
    free(c);
}

void cf_scan_cache_stats(const struct cf_scan_cache *c, struct cf_scan_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    if (c)
        *out = c->stats;
}

const char *cf_scan_cache_dir(const struct cf_scan_cache *c)
{
    return c ? c->dir : NULL;
}

static const struct remembered *memory_find(const struct cf_scan_cache *c, const struct cf_file_id *id)
{
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(&c->v[i].id, id, sizeof *id) == 0)
            return &c->v[i];
    return NULL;
}

/* Keeps an encoded entry (taking over *bytes); a fuller one replaces an older one. */
static void memory_keep(struct cf_scan_cache *c, const struct cf_file_id *id, unsigned have, struct strbuf *bytes)
{
    struct remembered *r = (struct remembered *)memory_find(c, id);
    if (r) {
        cf_sb_release(&r->bytes);
    } else {
        c->v = cf_xrealloc(c->v, (c->n + 1) * sizeof *c->v);
        r = &c->v[c->n++];
        r->id = *id;
    }
    r->have = have;
    r->bytes = *bytes;
    memset(bytes, 0, sizeof *bytes);
}

/* <dir>/<xx>/<16 hex digits of a hash of device and inode> */
static char *entry_path(const struct cf_scan_cache *c, const struct cf_file_id *id, char **subdir)
{
    uint64_t h = cf_fnv1a64_u64(cf_fnv1a64_u64(CF_FNV1A64_BASIS, id->dev), id->ino);
    *subdir = cf_asprintf("%s/%02x", c->dir, (unsigned)(h >> 56));
    return cf_asprintf("%s/%016llx", *subdir, (unsigned long long)h);
}

/* Reads the entry for id into *bytes and decodes it into *out; 1 when it is there and whole. */
static int disk_find(struct cf_scan_cache *c, const struct cf_file_id *id, struct cf_scan_facts *out,
                     struct strbuf *bytes)
{
    char *sub;
    char *path = entry_path(c, id, &sub);
    free(sub);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    free(path);
    if (fd < 0)
        return 0;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= MAX_ENTRY) {
        /* read straight into the kept bytes: one copy, no bounce buffer */
        size_t len = (size_t)st.st_size;
        cf_sb_grow(bytes, len);
        if (pread(fd, bytes->buf + bytes->len, len, 0) == st.st_size) {
            bytes->len += len;
            bytes->buf[bytes->len] = '\0';
            rc = cf_scan_entry_decode((const uint8_t *)bytes->buf, bytes->len, id, out, NULL) == 0;
        }
    }
    close(fd);
    return rc;
}

/* Keeps the directory under its bound: oldest entries (by mtime) out. Run
 * at most every EVICT_EVERY seconds (a ".evicted" stamp), not per store: a
 * listing per store would make a cold run over hundreds of files quadratic;
 * between two runs the directory grows by one run's entries at most. */
enum { EVICT_EVERY = 600 };

static void evict(struct cf_scan_cache *c)
{
    char *stamp = cf_path_join(c->dir, ".evicted");
    struct stat sst;
    int due = stat(stamp, &sst) != 0 || time(NULL) - sst.st_mtime >= EVICT_EVERY;
    if (due) {
        int fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            futimens(fd, NULL);
            close(fd);
        }
    }
    free(stamp);
    if (!due)
        return;
    c->stats.evicted += cf_cache_prune(c->dir, 2, SIZE_MAX, c->max_bytes);
}

static void disk_store(struct cf_scan_cache *c, const struct cf_file_id *id, const struct strbuf *b)
{
    if (cf_file_id_racy(id))
        return; /* racily clean: a change within the same tick would not show */
    char *sub;
    char *path = entry_path(c, id, &sub);
    if (cf_mkdir_p(sub, 0700, NULL) != 0) {
        free(sub);
        free(path);
        return;
    }
    char *tmp = cf_asprintf("%s/.tmp-XXXXXX", sub);
    int fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        int wrote = cf_write_all(fd, b->buf, b->len) == 0;
        int ok = close(fd) == 0 && wrote && rename(tmp, path) == 0;
        if (!ok)
            unlink(tmp);
        else
            c->stats.stored++;
        if (ok)
            evict(c);
    }
    free(tmp);
    free(sub);
    free(path);
}

/* Scans what is asked and not yet known. */
static int scan_now(struct cf_elf *elf, unsigned what, struct cf_scan_facts *f, cf_error *err)
{
    if ((what & (CF_SCAN_BANNER | CF_SCAN_GPU)) && !(f->have & CF_SCAN_BANNER)) {
        if (cf_commlib_scan(elf, &f->id, &f->sites, err) != 0)
            return -1;
        f->have |= CF_SCAN_BANNER;
    }
    if ((what & CF_SCAN_GPU) && !(f->have & CF_SCAN_GPU)) {
        if (cf_gpucode_inventory(elf, &f->gpu, err) != 0)
            return -1;
        if (cf_gpucode_inventory_add_sites(elf, &f->sites, &f->gpu, err) != 0) {
            cf_gpucode_inventory_release(&f->gpu);
            return -1;
        }
        f->have |= CF_SCAN_GPU;
    }
    return 0;
}

int cf_scan_file(struct cf_scan_cache *c, struct cf_elf *elf, unsigned what, struct cf_scan_facts *out, int *hit,
                 cf_error *err)
{
    memset(out, 0, sizeof *out);
    *hit = 0;
    if (what & CF_SCAN_GPU)
        what |= CF_SCAN_BANNER;
    struct cf_file_id id;
    int keyed = c && cf_elf_file_id(elf, &id) == 0;
    if (keyed) {
        const struct remembered *r = memory_find(c, &id);
        struct strbuf bytes = STRBUF_INIT;
        if (r && (r->have & what) == what &&
            cf_scan_entry_decode((const uint8_t *)r->bytes.buf, r->bytes.len, &id, out, NULL) == 0) {
            *hit = 1;
            c->stats.memory_hits++;
        } else if (!r && c->dir && disk_find(c, &id, out, &bytes)) {
            if ((out->have & what) == what) {
                *hit = 1;
                c->stats.disk_hits++;
            }
            memory_keep(c, &id, out->have, &bytes);
        }
        cf_sb_release(&bytes);
    }
    if (!*hit) {
        unsigned had = out->have;
        if (scan_now(elf, what, out, err) != 0) {
            cf_scan_facts_release(out);
            return -1;
        }
        if (c)
            c->stats.misses++;
        /* Only what the bytes were read for: a file changed while it was read is not remembered. */
        if (keyed && out->have != had && cf_elf_check_intact(elf, NULL) == 0) {
            struct strbuf bytes = STRBUF_INIT;
            cf_scan_entry_encode(&id, out, &bytes);
            if (c->dir)
                disk_store(c, &id, &bytes);
            memory_keep(c, &id, out->have, &bytes);
            cf_sb_release(&bytes);
        }
    }
    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    cf_commlib_identity_name(&out->id, dyn && dyn->soname ? dyn->soname : cf_elf_path(elf));
    return 0;
}
