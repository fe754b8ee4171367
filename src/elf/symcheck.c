/* ldd -r without running: glibc's version check (elf/dl-version.c,
 * _dl_check_map_versions/match_symbol) and symbol lookup in the global scope
 * (elf/dl-lookup.c, do_lookup_x/check_match), over every object of a closure.
 * Definitions of all objects are hashed once, so each reference costs one probe. */
#include "cclforge/symcheck.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/strbuf.h"

struct def {
    const char *name;
    const char *version; /* NULL: unversioned (index 0/1) */
    uint32_t hash;
    int hidden;          /* defined with '@' (non-default) */
    unsigned object;
    long next;           /* next def in the same bucket, -1 */
};

struct defs {
    struct def *v;
    size_t n, alloc;
    long *buckets;
    size_t mask;
};

/* djb2, as DT_GNU_HASH uses, without its low bit: the table's chain words
 * keep the hash there with bit 0 marking a chain's end, so a definition's hash
 * can be read from its object's .gnu.hash instead of computed. */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h & ~1u;
}

/* The chain words of an object's .gnu.hash: chain[i - symoffset] holds the hash
 * of dynamic symbol i (hashed symbols are the table's tail from symoffset). */
struct gnu_chain {
    const uint8_t *words;
    size_t n;
    uint32_t symoffset;
    int big_endian;
};

static uint32_t read_u32(const uint8_t *p, int big_endian)
{
    return big_endian ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                      : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* 0 and an empty chain when the object has no (well-formed) .gnu.hash. */
static void gnu_chain_of(struct cf_elf *elf, struct gnu_chain *out)
{
    memset(out, 0, sizeof *out);
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
        const struct cf_elf_section *sec = cf_elf_section_at(elf, i);
        const uint8_t *data;
        size_t len;
        if (sec->type != SHT_GNU_HASH || cf_elf_section_bytes(elf, sec, &data, &len, NULL) != 0 || len < 16)
            continue;
        uint64_t nbuckets = read_u32(data, h->big_endian), symoffset = read_u32(data + 4, h->big_endian);
        uint64_t bloom_words = read_u32(data + 8, h->big_endian);
        uint64_t chain_at = 16 + bloom_words * (h->elf_class == 64 ? 8 : 4) + nbuckets * 4;
        if (chain_at > len)
            return;
        out->words = data + chain_at;
        out->n = (len - (size_t)chain_at) / 4;
        out->symoffset = (uint32_t)symoffset;
        out->big_endian = h->big_endian;
        return;
    }
}

/* The hash of syms[k] (dynamic symbol k + 1: cf_elf_dynsyms leaves out entry 0). */
static uint32_t def_hash(const struct gnu_chain *gc, size_t k, const char *name)
{
    size_t index = k + 1;
    if (gc->words && index >= gc->symoffset && index - gc->symoffset < gc->n)
        return read_u32(gc->words + 4 * (index - gc->symoffset), gc->big_endian) & ~1u;
    return name_hash(name);
}

static void defs_add(struct defs *d, const struct cf_elf_symbol *s, uint32_t hash, unsigned object)
{
    if (d->n == d->alloc) {
        d->alloc = d->alloc ? d->alloc * 2 : 1024;
        d->v = cf_xrealloc(d->v, d->alloc * sizeof *d->v);
    }
    struct def *x = &d->v[d->n++];
    x->name = s->name;
    x->version = s->version;
    x->hash = hash;
    x->hidden = s->version_hidden;
    x->object = object;
    x->next = -1;
}

static void defs_index(struct defs *d)
{
    size_t size = 1;
    while (size < d->n * 2)
        size <<= 1;
    d->mask = size - 1;
    d->buckets = cf_xmalloc(size * sizeof *d->buckets);
    for (size_t i = 0; i < size; i++)
        d->buckets[i] = -1;
    /* Insert backwards so each chain lists definitions in load order. */
    for (size_t i = d->n; i-- > 0;) {
        size_t b = (d->v[i].hash >> 1) & d->mask;
        d->v[i].next = d->buckets[b];
        d->buckets[b] = (long)i;
    }
}

/* Symbols a lookup may bind to (do_lookup_x: ALLOWED_STT, global or weak binding). */
static int is_definition(const struct cf_elf_symbol *s)
{
    static const unsigned allowed_types[] = { STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_COMMON, STT_TLS, STT_GNU_IFUNC };
    if (!s->defined || s->name[0] == '\0')
        return 0;
    if (s->bind != CF_BIND_GLOBAL && s->bind != CF_BIND_WEAK && s->bind != CF_BIND_GNU_UNIQUE)
        return 0;
    if (s->visibility == STV_HIDDEN || s->visibility == STV_INTERNAL)
        return 0;
    for (size_t i = 0; i < sizeof allowed_types / sizeof allowed_types[0]; i++)
        if (s->type == allowed_types[i])
            return 1;
    return 0;
}

struct opened {
    struct cf_elf *elf;
    const struct cf_elf_symbol *syms;
    size_t n_syms;
    const uint8_t *relocated; /* per .dynsym index: a dynamic relocation names it */
    size_t n_relocated;
    int relocs_known;
    const char *first_version; /* verdef index 2, the "oldest" version */
    int has_verdef;
    int borrowed; /* the caller's: not closed here */
};

/* check_match for one object's candidates: does `name@version` bind here? */
/* An undefined reference the loader must bind: strong (weak ones may stay
 * unresolved), and named by a dynamic relocation, the only thing glibc looks
 * symbols up for (without relocation sections, every strong undefined
 * symbol counts). syms[k] is .dynsym index k + 1. */
static int is_reference(const struct opened *o, size_t k)
{
    const struct cf_elf_symbol *s = &o->syms[k];
    if (s->defined || s->name[0] == '\0' || s->bind != CF_BIND_GLOBAL)
        return 0;
    if (!o->relocs_known)
        return 1;
    return k + 1 < o->n_relocated && o->relocated[k + 1];
}

static int binds_in_object(const struct defs *d, long first, unsigned object, const struct opened *obj,
                           const char *name, uint32_t hash, const char *version)
{
    int versioned_seen = 0;
    for (long i = first; i >= 0; i = d->v[i].next) {
        const struct def *x = &d->v[i];
        if (x->object != object || x->hash != hash || strcmp(x->name, name) != 0)
            continue;
        if (version) {
            /* Same version name, or an unversioned definition that is not hidden. */
            if (x->version ? strcmp(x->version, version) == 0 : !x->hidden)
                return 1;
        } else {
            /* Unversioned reference: unversioned or base/oldest definitions bind;
             * otherwise exactly one non-hidden versioned definition does. */
            if (!x->version || (obj->first_version && strcmp(x->version, obj->first_version) == 0))
                return 1;
            if (!x->hidden)
                versioned_seen++;
        }
    }
    return !version && versioned_seen == 1;
}

static int is_defined(const struct defs *d, const struct opened *objs, size_t n_objs, const char *name,
                      const char *version)
{
    uint32_t hash = name_hash(name);
    long first = d->buckets[(hash >> 1) & d->mask];
    /* The chain is in load order; try each object that has a candidate once. */
    unsigned last = (unsigned)-1;
    for (long i = first; i >= 0; i = d->v[i].next) {
        const struct def *x = &d->v[i];
        if (x->hash != hash || x->object == last || strcmp(x->name, name) != 0)
            continue;
        last = x->object;
        if (x->object < n_objs && binds_in_object(d, i, x->object, &objs[x->object], name, hash, version))
            return 1;
    }
    return 0;
}

static void add_problem(struct cf_symcheck_result *r, enum cf_symcheck_kind kind, const char *symbol,
                        const char *version, const char *object, const char *provider, char *message)
{
    r->problems = cf_xrealloc(r->problems, (r->n_problems + 1) * sizeof *r->problems);
    struct cf_symcheck_problem *p = &r->problems[r->n_problems++];
    p->kind = kind;
    p->symbol = cf_strdup(symbol);
    p->version = cf_strdup(version);
    p->object = cf_strdup(object);
    p->provider = cf_strdup(provider);
    p->message = message;
    if (kind == CF_SYMCHECK_UNDEFINED)
        r->n_undefined++;
    else
        r->n_versions++;
}

/* find_needed (dl-version.c): the loaded object a verneed file name denotes. */
static long provider_of(const struct cf_ldso_result *c, long requirer, const char *file)
{
    for (size_t i = 0; i < c->n_nodes; i++) {
        const struct cf_ldso_node *n = &c->nodes[i];
        if (n->parent == requirer && n->object >= 0 && strcmp(n->needed, file) == 0)
            return n->object;
    }
    for (size_t i = 0; i < c->n_objects; i++)
        if (c->objects[i].soname && strcmp(c->objects[i].soname, file) == 0)
            return (long)i;
    for (size_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].object >= 0 && strcmp(c->nodes[i].needed, file) == 0)
            return c->nodes[i].object;
    return -1;
}

static void check_versions(const struct cf_ldso_result *c, struct opened *objs, struct cf_symcheck_result *r)
{
    for (size_t i = 0; i < c->n_objects; i++) {
        const struct cf_elf_verneed *needs;
        size_t n_needs;
        if (!objs[i].elf || cf_elf_verneeds(objs[i].elf, &needs, &n_needs, NULL) != 0)
            continue;
        for (size_t k = 0; k < n_needs; k++) {
            long p = provider_of(c, (long)i, needs[k].file);
            /* A dependency not found, or a provider without version definitions
             * (only reported by ldd -v): nothing to check. */
            if (p < 0 || !objs[p].elf || !objs[p].has_verdef)
                continue;
            const char *const *defs;
            size_t n_defs;
            if (cf_elf_verdefs(objs[p].elf, &defs, &n_defs, NULL) != 0)
                continue;
            const char *soname = c->objects[p].soname;
            for (size_t v = 0; v < needs[k].n_versions; v++) {
                const char *want = needs[k].versions[v];
                if (needs[k].weak[v])
                    continue; /* a weak version is reported only with ldd -v */
                int found = soname && strcmp(soname, want) == 0; /* the base definition */
                for (size_t d = 0; d < n_defs && !found; d++)
                    found = strcmp(defs[d], want) == 0;
                if (!found)
                    add_problem(r, CF_SYMCHECK_VERSION_NOT_FOUND, NULL, want, c->objects[i].path, c->objects[p].path,
                                cf_asprintf("%s: version `%s' not found (required by %s)", c->objects[p].path, want,
                                            c->objects[i].path));
            }
        }
    }
}

static int has_section_of_type(const struct cf_elf *elf, uint32_t type)
{
    for (size_t i = 0; i < cf_elf_section_count(elf); i++)
        if (cf_elf_section_at(elf, i)->type == type)
            return 1;
    return 0;
}

int cf_symcheck_run(const struct cf_ldso_result *c, struct cf_symcheck_result *out, cf_error *err)
{
    return cf_symcheck_run_opened(c, NULL, out, err);
}

int cf_symcheck_run_opened(const struct cf_ldso_result *c, struct cf_elf *const *elves,
                           struct cf_symcheck_result *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    struct opened *objs = cf_xcalloc(c->n_objects ? c->n_objects : 1, sizeof *objs);
    struct defs d;
    memset(&d, 0, sizeof d);
    enum { REFERENCED_MASK = (1 << 16) - 1 };
    uint8_t *referenced = cf_xcalloc(REFERENCED_MASK + 1, 1); /* by hash bits: may say yes wrongly, never no */
    int rc = 0;
    for (size_t i = 0; i < c->n_objects && rc == 0; i++) {
        struct opened *o = &objs[i];
        o->borrowed = elves && elves[i];
        if (o->borrowed)
            o->elf = elves[i];
        if ((!o->borrowed && cf_elf_open(c->objects[i].file, &o->elf, err) != 0) ||
            cf_elf_dynsyms(o->elf, &o->syms, &o->n_syms, err) != 0) {
            rc = -1;
            break;
        }
        const char *const *names;
        size_t n_names;
        if (cf_elf_verdefs(o->elf, &names, &n_names, err) != 0) {
            rc = -1;
            break;
        }
        o->first_version = n_names ? names[0] : NULL;
        if (cf_elf_relocated_symbols(o->elf, &o->relocated, &o->n_relocated, &o->relocs_known, err) != 0) {
            rc = -1;
            break;
        }
        o->has_verdef = has_section_of_type(o->elf, SHT_GNU_verdef);
        for (size_t k = 0; k < o->n_syms; k++)
            if (is_reference(o, k))
                referenced[(name_hash(o->syms[k].name) >> 1) & REFERENCED_MASK] = 1;
    }
    /* Only definitions whose hash some reference shares can ever be asked
     * about: the others (most of libstdc++'s and libc's) stay out of the table. */
    for (size_t i = 0; i < c->n_objects && rc == 0; i++) {
        struct opened *o = &objs[i];
        if (c->objects[i].is_interp && c->objects[i].node < 0)
            continue; /* listed (glibc 2.41+) but in no symbol scope: nothing needed it */
        struct gnu_chain gc;
        gnu_chain_of(o->elf, &gc);
        for (size_t k = 0; k < o->n_syms; k++) {
            if (!is_definition(&o->syms[k]))
                continue;
            out->n_definitions++;
            uint32_t hash = def_hash(&gc, k, o->syms[k].name);
            if (referenced[(hash >> 1) & REFERENCED_MASK])
                defs_add(&d, &o->syms[k], hash, (unsigned)i);
        }
    }
    free(referenced);
    if (rc == 0) {
        defs_index(&d);
        check_versions(c, objs, out);
        /* rtld relocates objects in reverse load order; ldd -r reports in that order. */
        for (size_t i = c->n_objects; i-- > 0;) {
            if (c->objects[i].is_interp)
                continue; /* the loader relocates itself before anything else */
            const struct opened *o = &objs[i];
            for (size_t k = 0; k < o->n_syms; k++) {
                const struct cf_elf_symbol *s = &o->syms[k];
                if (!is_reference(o, k))
                    continue;
                out->n_references++;
                if (is_defined(&d, objs, c->n_objects, s->name, s->version))
                    continue;
                char *msg = s->version ? cf_asprintf("undefined symbol: %s, version %s\t(%s)", s->name, s->version,
                                                     c->objects[i].path)
                                       : cf_asprintf("undefined symbol: %s\t(%s)", s->name, c->objects[i].path);
                add_problem(out, CF_SYMCHECK_UNDEFINED, s->name, s->version, c->objects[i].path, NULL, msg);
            }
        }
    }
    for (size_t i = 0; i < c->n_objects; i++)
        if (objs[i].elf && !objs[i].borrowed)
            cf_elf_close(objs[i].elf);
    free(objs);
    free(d.v);
    free(d.buckets);
    if (rc != 0)
        cf_symcheck_result_release(out);
    return rc;
}

void cf_symcheck_result_release(struct cf_symcheck_result *res)
{
    if (!res)
        return;
    for (size_t i = 0; i < res->n_problems; i++) {
        struct cf_symcheck_problem *p = &res->problems[i];
        free(p->symbol);
        free(p->version);
        free(p->object);
        free(p->provider);
        free(p->message);
    }
    free(res->problems);
    memset(res, 0, sizeof *res);
}
