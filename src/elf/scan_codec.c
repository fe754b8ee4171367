/* The on-disk form of one file's scan facts (scancache.h). Little-endian,
 * fixed widths, every list preceded by its count; the reader checks each
 * count against the bytes left before it allocates, so a corrupt or hostile
 * entry costs memory in proportion to its own size and decodes to an error. */
#include "cclforge/scancache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

#define MAGIC "CFSCAN1"
/* Bumped when the layout or what a scan finds changes (old entries miss). */
#define FORMAT 3u

/* ---- writing ---- */

static void put(struct strbuf *b, uint64_t v, int bytes)
{
    char le[8];
    for (int i = 0; i < bytes; i++)
        le[i] = (char)(v >> (8 * i));
    cf_sb_add(b, le, (size_t)bytes);
}

static void put_str(struct strbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > 0xffff)
        n = 0xffff;
    put(b, n, 2);
    cf_sb_add(b, s ? s : "", n);
}

/* NVIDIA archs as their sm and variant; the list they are in says the code form. */
static void put_archs(struct strbuf *b, const struct cf_arch *a, size_t n)
{
    put(b, n, 4);
    for (size_t i = 0; i < n; i++) {
        put(b, a[i].sm, 4);
        put(b, (unsigned char)a[i].variant, 1);
    }
}

void cf_scan_entry_encode(const struct cf_file_id *id, const struct cf_scan_facts *f, struct strbuf *b)
{
    cf_sb_add(b, MAGIC, sizeof MAGIC); /* with its NUL: 8 bytes */
    put(b, FORMAT, 4);
    put(b, f->have, 4);
    put(b, id->dev, 8);
    put(b, id->ino, 8);
    put(b, id->size, 8);
    put(b, (uint64_t)id->mtime_ns, 8);
    put(b, (uint64_t)id->ctime_ns, 8);
    if (f->have & CF_SCAN_BANNER) {
        put(b, sizeof f->id, 4);
        cf_sb_add(b, &f->id, sizeof f->id);
        put(b, f->sites.n, 4);
        for (size_t i = 0; i < f->sites.n; i++) {
            put(b, f->sites.v[i].section, 4);
            put(b, f->sites.v[i].offset, 8);
            put(b, f->sites.v[i].size, 8);
        }
    }
    if (f->have & CF_SCAN_GPU) {
        const struct cf_gpucode_inventory *g = &f->gpu;
        put_archs(b, g->sass, g->n_sass);
        put_archs(b, g->ptx, g->n_ptx);
        put_archs(b, g->ltoir, g->n_ltoir);
        put(b, g->amd_targets.n, 4);
        for (size_t i = 0; i < g->amd_targets.n; i++)
            put_str(b, g->amd_targets.v[i]);
        const uint64_t counts[] = { g->fatbin_sections, g->fatbin_containers, g->fatbin_entries,
                                    g->fatbin_compressed_entries, g->bundle_sections, g->bundles,
                                    g->compressed_bundles, g->embedded_containers, (uint64_t)g->truncated_lists,
                                    g->header_bytes_read, g->file_bytes_read };
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            put(b, counts[i], 8);
        put(b, g->problem != NULL, 1);
        put_str(b, g->problem);
        put(b, g->n_sections, 4);
        for (size_t i = 0; i < g->n_sections; i++) {
            const struct cf_gpucode_section *s = &g->sections[i];
            put_str(b, s->name);
            put(b, (uint64_t)s->embedded, 1);
            put(b, s->containers, 8);
            put(b, s->entries, 8);
            put_archs(b, s->sass, s->n_sass);
            put_archs(b, s->ptx, s->n_ptx);
            put_archs(b, s->ltoir, s->n_ltoir);
        }
    }
}

/* ---- reading ---- */

struct cursor {
    const uint8_t *p;
    size_t left;
    int bad;
};

static uint64_t get(struct cursor *c, int bytes)
{
    if (c->bad || c->left < (size_t)bytes) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += bytes;
    c->left -= (size_t)bytes;
    return v;
}

/* A count of items of at least `item` bytes each: no more than fit in what is left. */
static size_t get_count(struct cursor *c, size_t item, size_t cap)
{
    uint64_t n = get(c, 4);
    if (c->bad || n > cap || n > c->left / item) {
        c->bad = 1;
        return 0;
    }
    return (size_t)n;
}

static char *get_str(struct cursor *c)
{
    size_t n = (size_t)get(c, 2);
    if (c->bad || n > c->left) {
        c->bad = 1;
        return NULL;
    }
    char *s = cf_strndup((const char *)c->p, n);
    c->p += n;
    c->left -= n;
    return s;
}

static void get_archs(struct cursor *c, enum cf_arch_code code, struct cf_arch **out, size_t *n)
{
    *n = get_count(c, 5, CF_GPUCODE_MAX_UNIQUE);
    *out = *n ? cf_xcalloc(*n, sizeof **out) : NULL;
    for (size_t i = 0; i < *n && !c->bad; i++) {
        unsigned sm = (unsigned)get(c, 4);
        char variant = (char)get(c, 1);
        cf_arch_nvidia(sm, variant, code, &(*out)[i]);
    }
}

/* The restored identity holds only what a scan can produce. */
static int identity_sane(struct cf_commlib_identity *id)
{
    if (id->n_banners > CF_COMMLIB_MAX_BANNERS || (unsigned)id->library > CF_COMMLIB_RCCL)
        return 0;
    struct cf_commlib_banner *all[CF_COMMLIB_MAX_BANNERS + 1];
    all[0] = &id->banner;
    for (size_t i = 0; i < CF_COMMLIB_MAX_BANNERS; i++)
        all[i + 1] = &id->banners[i];
    for (size_t i = 0; i <= CF_COMMLIB_MAX_BANNERS; i++) {
        struct cf_commlib_banner *b = all[i];
        if ((unsigned)b->lib > CF_COMMLIB_RCCL)
            return 0;
        b->suffix[sizeof b->suffix - 1] = '\0';
        b->toolkit[sizeof b->toolkit - 1] = '\0';
        b->text[sizeof b->text - 1] = '\0';
    }
    return 1;
}

int cf_scan_entry_decode(const uint8_t *data, size_t len, const struct cf_file_id *want, struct cf_scan_facts *f,
                         cf_error *err)
{
    memset(f, 0, sizeof *f);
    struct cursor c = { data, len, 0 };
    if (len < sizeof MAGIC || memcmp(data, MAGIC, sizeof MAGIC) != 0)
        return cf_error_set(err, CF_ERR_FORMAT, "scan cache entry: no %s magic", MAGIC);
    c.p += sizeof MAGIC;
    c.left -= sizeof MAGIC;
    if (get(&c, 4) != FORMAT)
        return cf_error_set(err, CF_ERR_FORMAT, "scan cache entry: another format");
    unsigned have = (unsigned)get(&c, 4);
    struct cf_file_id id;
    id.dev = get(&c, 8);
    id.ino = get(&c, 8);
    id.size = get(&c, 8);
    id.mtime_ns = (int64_t)get(&c, 8);
    id.ctime_ns = (int64_t)get(&c, 8);
    if (c.bad || (have & ~(unsigned)(CF_SCAN_BANNER | CF_SCAN_GPU)) || ((have & CF_SCAN_GPU) && !(have & CF_SCAN_BANNER)))
        return cf_error_set(err, CF_ERR_FORMAT, "scan cache entry: truncated or unknown header");
    if (want && memcmp(&id, want, sizeof id) != 0)
        return cf_error_set(err, CF_ERR_NOTFOUND, "scan cache entry: for another file or version of it");
    if (have & CF_SCAN_BANNER) {
        if (get(&c, 4) != sizeof f->id || c.left < sizeof f->id)
            return cf_error_set(err, CF_ERR_FORMAT, "scan cache entry: identity of another size");
        memcpy(&f->id, c.p, sizeof f->id);
        c.p += sizeof f->id;
        c.left -= sizeof f->id;
        if (!identity_sane(&f->id))
            return cf_error_set(err, CF_ERR_FORMAT, "scan cache entry: impossible banner fields");
        f->sites.n = f->sites.cap = get_count(&c, 20, SIZE_MAX / sizeof *f->sites.v);
        f->sites.v = f->sites.n ? cf_xcalloc(f->sites.n, sizeof *f->sites.v) : NULL;
        for (size_t i = 0; i < f->sites.n && !c.bad; i++) {
            f->sites.v[i].section = (uint32_t)get(&c, 4);
            f->sites.v[i].offset = get(&c, 8);
            f->sites.v[i].size = get(&c, 8);
        }
    }
    if (have & CF_SCAN_GPU) {
        struct cf_gpucode_inventory *g = &f->gpu;
        get_archs(&c, CF_CODE_SASS, &g->sass, &g->n_sass);
        get_archs(&c, CF_CODE_PTX, &g->ptx, &g->n_ptx);
        get_archs(&c, CF_CODE_LTOIR, &g->ltoir, &g->n_ltoir);
        size_t n_amd = get_count(&c, 2, CF_GPUCODE_MAX_UNIQUE);
        for (size_t i = 0; i < n_amd && !c.bad; i++) {
            char *t = get_str(&c);
            if (t)
                cf_strvec_push(&g->amd_targets, t);
            free(t);
        }
        g->fatbin_sections = (size_t)get(&c, 8);
        g->fatbin_containers = (size_t)get(&c, 8);
        g->fatbin_entries = (size_t)get(&c, 8);
        g->fatbin_compressed_entries = (size_t)get(&c, 8);
        g->bundle_sections = (size_t)get(&c, 8);
        g->bundles = (size_t)get(&c, 8);
        g->compressed_bundles = (size_t)get(&c, 8);
        g->embedded_containers = (size_t)get(&c, 8);
        g->truncated_lists = get(&c, 8) != 0;
        g->header_bytes_read = get(&c, 8);
        g->file_bytes_read = get(&c, 8);
        int has_problem = (int)get(&c, 1);
        char *problem = get_str(&c);
        if (has_problem)
            g->problem = problem;
        else
            free(problem);
        /* a section record is at least its name's length, flag, two counts and three list counts */
        g->n_sections = get_count(&c, 2 + 1 + 16 + 12, 4096);
        g->sections = g->n_sections ? cf_xcalloc(g->n_sections, sizeof *g->sections) : NULL;
        for (size_t i = 0; i < g->n_sections && !c.bad; i++) {
            struct cf_gpucode_section *s = &g->sections[i];
            char *name = get_str(&c);
            if (name)
                snprintf(s->name, sizeof s->name, "%s", name);
            free(name);
            s->embedded = (int)get(&c, 1);
            s->containers = (size_t)get(&c, 8);
            s->entries = (size_t)get(&c, 8);
            get_archs(&c, CF_CODE_SASS, &s->sass, &s->n_sass);
            get_archs(&c, CF_CODE_PTX, &s->ptx, &s->n_ptx);
            get_archs(&c, CF_CODE_LTOIR, &s->ltoir, &s->n_ltoir);
        }
    }
    if (c.bad || c.left != 0) {
        cf_scan_facts_release(f);
        return cf_error_set(err, CF_ERR_FORMAT, "scan cache entry: truncated or trailing bytes");
    }
    f->have = have;
    return 0;
}

void cf_scan_facts_release(struct cf_scan_facts *f)
{
    cf_fatbin_sites_release(&f->sites);
    cf_gpucode_inventory_release(&f->gpu);
    memset(f, 0, sizeof *f);
}
