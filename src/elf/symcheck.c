/* ldd -r without running: glibc's version check (elf/dl-version.c,
 * _dl_check_map_versions/match_symbol) and symbol lookup in the global scope
 * (elf/dl-lookup.c, do_lookup_x/check_match), over every object of a closure.
 * As glibc, each reference probes each object's own hash table (.gnu.hash:
 * bloom filter, bucket, chain; else .hash; else every symbol), reading the
 * dynamic symbols it meets in place: nothing is converted, copied or indexed
 * up front, so an object costs what its references touch. */
#include "cclforge/symcheck.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/elf.h"
#include "cclforge/strbuf.h"
#include "elf/elf_internal.h"
#include "elf/ord_read.h"

#define VERSYM_INDEX 0x7fffu
#define VERSYM_HIDDEN 0x8000u

/* dl_new_hash (djb2: h = h * 33 + c from 5381) for .gnu.hash, over a string
 * of known length, four characters per step (h*33^4 + c0*33^3 + c1*33^2 +
 * c2*33 + c3, modulo 2^32 like the original); _dl_elf_hash for .hash. */
static uint32_t gnu_hash_n(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    uint32_t h = 5381;
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        h = h * 1185921u + s[i] * 35937u + s[i + 1] * 1089u + s[i + 2] * 33u + s[i + 3];
    for (; i < n; i++)
        h = h * 33 + s[i];
    return h;
}

/* A hash for the answer memo only: mixes the length with the first and
 * last 8 bytes (names of one library share prefixes, rarely both ends). */
static uint32_t memo_key(const char *s, size_t n)
{
    uint64_t a = 0, b = 0;
    memcpy(&a, s, n < 8 ? n : 8);
    if (n > 8)
        memcpy(&b, s + n - 8, 8);
    uint64_t x = (a ^ (b * 0x9e3779b97f4a7c15ull) ^ n) * 0xff51afd7ed558ccdull;
    return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

static uint32_t sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        h = (h << 4) + (unsigned char)*s;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* One object's dynamic symbols and hash tables, read in place. */
struct opened {
    struct cf_elf *elf;
    int borrowed;           /* the caller's: not closed here */
    int in_scope;           /* its definitions can be bound to */
    int wide, big;
    const uint8_t *syms;    /* .dynsym */
    size_t n_syms, symsize;
    struct cf_span names;   /* its string table */
    const uint8_t *versym;  /* .gnu.version, n_syms entries; NULL when none */
    const char *const *index_name; /* version index -> name (definitions and requirements) */
    size_t n_index;
    int has_verdef;
    /* .gnu.hash */
    uint32_t nbuckets, symoffset, bloom_words, bloom_shift;
    const uint8_t *bloom, *buckets, *chain;
    size_t n_chain;
    /* .hash */
    uint32_t nbucket, nchain;
    const uint8_t *sbuckets, *schain;
    const uint8_t *relocated; /* per .dynsym index: a dynamic relocation names it */
    size_t n_relocated;
};

struct rawsym {
    const char *name;
    unsigned bind, type, visibility;
    uint16_t shndx;
    uint64_t value;
    unsigned versym; /* 1 (global) when the object has no .gnu.version */
};

static int sym_at(const struct opened *o, size_t i, struct rawsym *s)
{
    if (i >= o->n_syms)
        return -1;
    const uint8_t *p = o->syms + i * o->symsize;
    uint32_t name = ord32(p, o->big);
    unsigned info, other;
    if (o->wide) {
        info = p[4];
        other = p[5];
        s->shndx = ord16(p + 6, o->big);
        s->value = ord64(p + 8, o->big);
    } else {
        s->value = ord32(p + 4, o->big);
        info = p[12];
        other = p[13];
        s->shndx = ord16(p + 14, o->big);
    }
    s->name = cf_span_string(&o->names, name);
    if (!s->name)
        return -1;
    s->bind = info >> 4;
    s->type = info & 0xf;
    s->visibility = other & 3;
    s->versym = o->versym ? ord16(o->versym + 2 * i, o->big) : 1;
    return 0;
}

static const char *version_name(const struct opened *o, unsigned versym)
{
    unsigned ndx = versym & VERSYM_INDEX;
    return ndx >= 2 && ndx < o->n_index ? o->index_name[ndx] : NULL;
}

/* do_lookup_x's filter: symbols a lookup may bind to. */
static int is_definition(const struct rawsym *s)
{
    static const unsigned allowed_types[] = { STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_COMMON, STT_TLS, STT_GNU_IFUNC };
    if (s->shndx == SHN_UNDEF || !s->name[0])
        return 0;
    /* check_match: no value and not absolute (and not TLS) is no definition */
    if (s->value == 0 && s->shndx != SHN_ABS && s->type != STT_TLS)
        return 0;
    if (s->bind != STB_GLOBAL && s->bind != STB_WEAK && s->bind != STB_GNU_UNIQUE)
        return 0;
    if (s->visibility == STV_HIDDEN || s->visibility == STV_INTERNAL)
        return 0;
    for (size_t i = 0; i < sizeof allowed_types / sizeof allowed_types[0]; i++)
        if (s->type == allowed_types[i])
            return 1;
    return 0;
}

/* The state check_match keeps over one object's candidates. */
struct match {
    const char *name, *version;
    int found, versioned_seen;
};

/* check_match for candidate symbol i of object o. */
static void consider(const struct opened *o, size_t i, struct match *m)
{
    struct rawsym s;
    if (sym_at(o, i, &s) != 0 || !is_definition(&s) || strcmp(s.name, m->name) != 0)
        return;
    unsigned ndx = s.versym & VERSYM_INDEX;
    int hidden = (s.versym & VERSYM_HIDDEN) != 0;
    if (m->version) {
        /* The version asked for, or an unversioned definition that is not hidden. */
        const char *v = version_name(o, s.versym);
        if (v ? strcmp(v, m->version) == 0 : !hidden)
            m->found = 1;
    } else if (!o->versym || ndx < 3) {
        m->found = 1; /* unversioned, the base or the oldest version */
    } else if (!hidden) {
        m->versioned_seen++; /* binds only when it is the one versioned candidate */
    }
}

/* do_lookup_x over one object's hash table. */
static int binds_in(const struct opened *o, const char *name, uint32_t ghash, const char *version)
{
    struct match m = { name, version, 0, 0 };
    if (o->buckets) {
        /* The bloom filter: one word, two bits (ELFCLASS bits per word: 64 or 32). */
        unsigned log2_bits = o->wide ? 6 : 5, low = (1u << log2_bits) - 1;
        size_t word_index = (ghash >> log2_bits) & (o->bloom_words - 1);
        uint64_t word;
        if (o->wide && !o->big)
            memcpy(&word, o->bloom + 8 * word_index, 8);
        else
            word = o->wide ? ord64(o->bloom + 8 * word_index, o->big) : ord32(o->bloom + 4 * word_index, o->big);
        uint64_t mask = (1ull << (ghash & low)) | (1ull << ((ghash >> (o->bloom_shift & 31)) & low));
        if ((word & mask) != mask)
            return 0;
        uint32_t idx = ord32(o->buckets + 4 * (ghash % o->nbuckets), o->big);
        if (idx < o->symoffset)
            return 0;
        for (;; idx++) {
            size_t c = idx - o->symoffset;
            if (c >= o->n_chain)
                break;
            uint32_t h = ord32(o->chain + 4 * c, o->big);
            if (((h ^ ghash) >> 1) == 0)
                consider(o, idx, &m);
            if (m.found || (h & 1))
                break;
        }
    } else if (o->sbuckets) {
        uint32_t h = sysv_hash(name);
        size_t steps = 0;
        for (uint32_t idx = ord32(o->sbuckets + 4 * (h % o->nbucket), o->big); idx && idx < o->nchain && !m.found;
             idx = ord32(o->schain + 4 * idx, o->big)) {
            if (++steps > o->nchain)
                break; /* a chain that loops */
            consider(o, idx, &m);
        }
    } else {
        for (size_t i = 1; i < o->n_syms && !m.found; i++)
            consider(o, i, &m);
    }
    return m.found || (!version && m.versioned_seen == 1);
}

/* The object's .gnu.hash (else .hash) over its .dynsym; malformed tables are ignored. */
static void load_hash_tables(struct opened *o)
{
    for (size_t i = 0; i < cf_elf_section_count(o->elf); i++) {
        const struct cf_elf_section *sec = cf_elf_section_at(o->elf, i);
        const uint8_t *d;
        size_t len;
        if ((sec->type != SHT_GNU_HASH && sec->type != SHT_HASH) ||
            cf_elf_section_bytes(o->elf, sec, &d, &len, NULL) != 0)
            continue;
        if (sec->type == SHT_GNU_HASH && !o->buckets && len >= 16) {
            uint32_t nb = ord32(d, o->big), off = ord32(d + 4, o->big), bw = ord32(d + 8, o->big);
            uint64_t chain_at = 16 + (uint64_t)bw * (o->wide ? 8 : 4) + (uint64_t)nb * 4;
            /* the bloom size is a power of two (dl-lookup masks with it) */
            if (nb == 0 || bw == 0 || (bw & (bw - 1)) || chain_at > len)
                continue;
            o->nbuckets = nb;
            o->symoffset = off;
            o->bloom_words = bw;
            o->bloom_shift = ord32(d + 12, o->big);
            o->bloom = d + 16;
            o->buckets = o->bloom + (size_t)bw * (o->wide ? 8 : 4);
            o->chain = d + chain_at;
            o->n_chain = (len - (size_t)chain_at) / 4;
        } else if (sec->type == SHT_HASH && !o->sbuckets && len >= 8) {
            uint32_t nb = ord32(d, o->big), nc = ord32(d + 4, o->big);
            if (nb == 0 || (uint64_t)(2 + nb + nc) * 4 > len)
                continue;
            o->nbucket = nb;
            o->nchain = nc;
            o->sbuckets = d + 8;
            o->schain = d + 8 + 4 * (size_t)nb;
        }
    }
}

static int open_symbols(struct opened *o, cf_error *err)
{
    struct cf_elf *elf = o->elf;
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    o->wide = h->elf_class == 64;
    o->big = h->big_endian;
    o->symsize = o->wide ? 24 : 16;
    const char *const *names;
    size_t n_names;
    if (cf_elf_verdefs(elf, &names, &n_names, err) != 0) /* loads the version index too */
        return -1;
    o->index_name = elf->index_name;
    o->n_index = elf->n_index;
    for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
        const struct cf_elf_section *sec = cf_elf_section_at(elf, i);
        const uint8_t *d;
        size_t len;
        if (sec->type == SHT_GNU_verdef)
            o->has_verdef = 1;
        if (sec->type == SHT_DYNSYM && !o->syms) {
            if (cf_elf_section_bytes(elf, sec, &d, &len, err) != 0 ||
                cf_elf_linked_strtab(elf, sec, sec->link, &o->names, err) != 0)
                return -1;
            o->syms = d;
            o->n_syms = len / o->symsize;
        }
    }
    for (size_t i = 0; i < cf_elf_section_count(elf) && o->syms; i++) {
        const struct cf_elf_section *sec = cf_elf_section_at(elf, i);
        const uint8_t *d;
        size_t len;
        if (sec->type == SHT_GNU_versym && cf_elf_section_bytes(elf, sec, &d, &len, err) == 0 &&
            len / 2 >= o->n_syms)
            o->versym = d;
    }
    load_hash_tables(o);
    return cf_elf_relocated_symbols(elf, &o->relocated, &o->n_relocated, err);
}

/* An undefined reference the loader must bind: strong (weak ones may stay
 * unresolved), and named by a dynamic relocation, the only thing glibc looks
 * symbols up for. */
static int is_reference(const struct opened *o, size_t i, struct rawsym *s)
{
    if (i >= o->n_relocated || !o->relocated[i])
        return 0;
    if (i >= o->n_syms)
        return 0;
    /* Most relocated symbols are the object's own definitions: look at the
     * section index and binding before decoding the rest. */
    const uint8_t *p = o->syms + i * o->symsize;
    if (ord16(p + (o->wide ? 6 : 14), o->big) != SHN_UNDEF || (p[o->wide ? 4 : 12] >> 4) != STB_GLOBAL)
        return 0;
    return sym_at(o, i, s) == 0 && s->name[0];
}

/* Whether any object of the scope binds the reference. Only that it is
 * defined matters, not which object glibc would pick first, so the objects
 * are probed in the order most likely to answer early: the one that answered
 * the previous miss of this referencing object, its own DT_NEEDED objects,
 * then the rest (`order`, a permutation of the scope). */
static int is_defined(const struct opened *objs, const size_t *order, size_t n, size_t *last_hit, const char *name,
                      uint32_t h, const char *version)
{
    if (*last_hit < n && binds_in(&objs[*last_hit], name, h, version))
        return 1;
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (i != *last_hit && binds_in(&objs[i], name, h, version)) {
            *last_hit = i;
            return 1;
        }
    }
    return 0;
}

/* The scope objects (in scope, with symbols) for referencing object `who`:
 * its direct dependencies first, then the others in load order. */
static size_t probe_order(const struct cf_ldso_result *c, const struct opened *objs, size_t who, size_t *order,
                          unsigned char *taken)
{
    size_t n = 0;
    memset(taken, 0, c->n_objects);
    for (size_t k = 0; k < c->n_nodes; k++) {
        const struct cf_ldso_node *nd = &c->nodes[k];
        if (nd->parent == (long)who && nd->object >= 0 && (size_t)nd->object < c->n_objects &&
            !taken[nd->object] && objs[nd->object].in_scope && objs[nd->object].syms) {
            taken[nd->object] = 1;
            order[n++] = (size_t)nd->object;
        }
    }
    for (size_t i = 0; i < c->n_objects; i++)
        if (!taken[i] && objs[i].in_scope && objs[i].syms)
            order[n++] = i;
    return n;
}

/* The answer for each (name, version) asked once: a closure's objects ask
 * for the same symbols (malloc, memcpy, the C++ runtime) over and over, and
 * the global scope answers each the same way. Open addressing on the hash. */
struct answers {
    struct answer {
        const char *name, *version; /* NULL name: empty slot; strings live in the objects */
        uint32_t hash;
        int defined;
    } *v;
    size_t n, cap;
};

static int answered(struct answers *a, const char *name, uint32_t h, const char *version, int *defined)
{
    for (size_t i = a->cap ? h & (a->cap - 1) : 0; a->cap && a->v[i].name; i = (i + 1) & (a->cap - 1)) {
        const struct answer *x = &a->v[i];
        if (x->hash == h && strcmp(x->name, name) == 0 &&
            (x->version == version || (x->version && version && strcmp(x->version, version) == 0))) {
            *defined = x->defined;
            return 1;
        }
    }
    return 0;
}

static void remember(struct answers *a, const char *name, uint32_t h, const char *version, int defined)
{
    if ((a->n + 1) * 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1024;
        struct answer *v = cf_xcalloc(cap, sizeof *v);
        for (size_t i = 0; i < a->cap; i++) {
            if (!a->v[i].name)
                continue;
            size_t k = a->v[i].hash & (cap - 1);
            while (v[k].name)
                k = (k + 1) & (cap - 1);
            v[k] = a->v[i];
        }
        free(a->v);
        a->v = v;
        a->cap = cap;
    }
    size_t k = h & (a->cap - 1);
    while (a->v[k].name)
        k = (k + 1) & (a->cap - 1);
    a->v[k] = (struct answer){ name, version, h, defined };
    a->n++;
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

int cf_symcheck_run(const struct cf_ldso_result *c, struct cf_symcheck_result *out, cf_error *err)
{
    return cf_symcheck_run_opened(c, NULL, out, err);
}

int cf_symcheck_run_opened(const struct cf_ldso_result *c, struct cf_elf *const *elves,
                           struct cf_symcheck_result *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    struct opened *objs = cf_xcalloc(c->n_objects ? c->n_objects : 1, sizeof *objs);
    int rc = 0;
    for (size_t i = 0; i < c->n_objects && rc == 0; i++) {
        struct opened *o = &objs[i];
        o->borrowed = elves && elves[i];
        if (o->borrowed)
            o->elf = elves[i];
        if ((!o->borrowed && cf_elf_open(c->objects[i].file, &o->elf, err) != 0) || open_symbols(o, err) != 0) {
            rc = -1;
            break;
        }
        /* A loader listed (glibc 2.41+) but needed by nothing is in no symbol scope. */
        o->in_scope = !(c->objects[i].is_interp && c->objects[i].node < 0);
        /* .gnu.hash lists exactly the exported definitions, from symoffset on. */
        struct rawsym s;
        if (o->in_scope && o->buckets && o->symoffset <= o->n_syms)
            out->n_definitions += o->n_syms - o->symoffset;
        else
            for (size_t k = 1; k < o->n_syms && o->in_scope; k++)
                if (sym_at(o, k, &s) == 0 && is_definition(&s))
                    out->n_definitions++;
    }
    struct answers known = { 0 };
    size_t *order = cf_xcalloc(c->n_objects ? c->n_objects : 1, sizeof *order);
    unsigned char *taken = cf_xcalloc(c->n_objects ? c->n_objects : 1, 1);
    if (rc == 0) {
        check_versions(c, objs, out);
        /* rtld relocates objects in reverse load order; ldd -r reports in that order. */
        for (size_t i = c->n_objects; i-- > 0;) {
            if (c->objects[i].is_interp)
                continue; /* the loader relocates itself before anything else */
            const struct opened *o = &objs[i];
            size_t n_order = 0, last_hit = SIZE_MAX;
            for (size_t k = 1; k < o->n_syms; k++) {
                struct rawsym s;
                if (!is_reference(o, k, &s))
                    continue;
                out->n_references++;
                const char *version = version_name(o, s.versym);
                /* The answer memo is keyed by a cheap hash of the name (its
                 * length and first and last 8 bytes); the loader's hash is
                 * computed only for names not answered yet. */
                size_t name_len = strlen(s.name);
                uint32_t h = memo_key(s.name, name_len);
                int defined;
                if (!answered(&known, s.name, h, version, &defined)) {
                    if (n_order == 0)
                        n_order = probe_order(c, objs, i, order, taken);
                    defined = is_defined(objs, order, n_order, &last_hit, s.name, gnu_hash_n(s.name, name_len), version);
                    remember(&known, s.name, h, version, defined);
                }
                if (defined)
                    continue;
                char *msg = version ? cf_asprintf("undefined symbol: %s, version %s\t(%s)", s.name, version,
                                                  c->objects[i].path)
                                    : cf_asprintf("undefined symbol: %s\t(%s)", s.name, c->objects[i].path);
                add_problem(out, CF_SYMCHECK_UNDEFINED, s.name, version, c->objects[i].path, NULL, msg);
            }
        }
    }
    free(known.v);
    free(order);
    free(taken);
    for (size_t i = 0; i < c->n_objects; i++)
        if (objs[i].elf && !objs[i].borrowed)
            cf_elf_close(objs[i].elf);
    free(objs);
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
