/* An object whose section headers are stripped (sstrip, objcopy
 * --strip-section-headers) loads like any other: glibc never reads section
 * headers, only the dynamic segment's tags. For such an object the sections
 * the readers of symbols, versions, hash tables and relocations look for are
 * made here from those tags, so those readers see the tables the loader
 * uses. Each is named after the tag that locates it, so an error about one
 * says where its bytes came from. The relocation tables are found this way
 * for every object (cf_elf_dynamic_reloc_table), headers or not: they are
 * what glibc processes. Sizes no tag gives are worked out as
 * readelf does: the symbol count from DT_HASH's nchain or from the end of
 * DT_GNU_HASH's last chain, else up to the next table; version tables run
 * to the end of their segment's file bytes (their walks are bounded by the
 * bytes they have). */
#include "elf/elf_internal.h"

#include <stdlib.h>

#include "cclforge/strbuf.h"
#include "elf/ord_read.h"

enum sizing {
    SIZE_TAG,         /* the size tag (DT_RELASZ, ...); none: no bytes */
    SIZE_TAG_OR_ALL,  /* the size tag, else to the segment's end (DT_STRSZ) */
    SIZE_SYMBOLS,     /* entsize bytes per symbol */
    SIZE_HASH,        /* DT_HASH: its nbucket and nchain words */
    SIZE_GNU_HASH,    /* its header, bloom words, buckets, and a chain word per hashed symbol */
    SIZE_ALL,         /* to the end of the segment's file bytes */
};
enum link_to { LINK_NONE, LINK_STRINGS, LINK_SYMBOLS };
#define NO_TAG CF_DYN_SLOTS

/* In this order: the strings, then the symbols, which the others link to;
 * the relocation tables last (cf_elf_dynamic_reloc_table). */
static const struct view_table {
    const char *name;
    uint32_t type; /* 0: DT_JMPREL, whose type DT_PLTREL says */
    enum cf_dyn_slot addr;
    enum sizing sizing;
    enum cf_dyn_slot size; /* for SIZE_TAG* */
    enum cf_dyn_slot count; /* the sh_info a version table has: its entry count */
    enum link_to link;
    enum cf_dyn_slot relative; /* a relocation table: how many RELATIVE ones lead it */
} view_tables[] = {
    { "DT_STRTAB", SHT_STRTAB, CF_DYN_STRTAB, SIZE_TAG_OR_ALL, CF_DYN_STRSZ, NO_TAG, LINK_NONE, NO_TAG },
    { "DT_SYMTAB", SHT_DYNSYM, CF_DYN_SYMTAB, SIZE_SYMBOLS, NO_TAG, NO_TAG, LINK_STRINGS, NO_TAG },
    { "DT_VERSYM", SHT_GNU_versym, CF_DYN_VERSYM, SIZE_SYMBOLS, NO_TAG, NO_TAG, LINK_SYMBOLS, NO_TAG },
    { "DT_VERNEED", SHT_GNU_verneed, CF_DYN_VERNEED, SIZE_ALL, NO_TAG, CF_DYN_VERNEEDNUM, LINK_STRINGS, NO_TAG },
    { "DT_VERDEF", SHT_GNU_verdef, CF_DYN_VERDEF, SIZE_ALL, NO_TAG, CF_DYN_VERDEFNUM, LINK_STRINGS, NO_TAG },
    { "DT_GNU_HASH", SHT_GNU_HASH, CF_DYN_GNU_HASH, SIZE_GNU_HASH, NO_TAG, NO_TAG, LINK_SYMBOLS, NO_TAG },
    { "DT_HASH", SHT_HASH, CF_DYN_HASH, SIZE_HASH, NO_TAG, NO_TAG, LINK_SYMBOLS, NO_TAG },
    { "DT_RELA", SHT_RELA, CF_DYN_RELA, SIZE_TAG, CF_DYN_RELASZ, NO_TAG, LINK_SYMBOLS, CF_DYN_RELACOUNT },
    { "DT_REL", SHT_REL, CF_DYN_REL, SIZE_TAG, CF_DYN_RELSZ, NO_TAG, LINK_SYMBOLS, CF_DYN_RELCOUNT },
    { "DT_JMPREL", 0, CF_DYN_JMPREL, SIZE_TAG, CF_DYN_PLTRELSZ, NO_TAG, LINK_SYMBOLS, NO_TAG },
};
enum { N_VIEW = sizeof view_tables / sizeof view_tables[0] };

static int has(const struct cf_elf *elf, enum cf_dyn_slot slot)
{
    return slot < CF_DYN_SLOTS && (elf->dyn_tables.present >> slot & 1);
}

/* The file bytes from the address slot holds to the end of its segment's file bytes. */
static int table_bytes(const struct cf_elf *elf, enum cf_dyn_slot slot, struct cf_span *out)
{
    return has(elf, slot) ? cf_elf_vaddr_span(elf, elf->dyn_tables.value[slot], UINT64_MAX, out) : -1;
}

/* A GNU hash table's layout: offsets of its buckets and chains in its bytes. */
struct gnu_hash {
    uint32_t nbuckets, symoffset;
    uint64_t buckets_at, chains_at;
};

static int gnu_hash_layout(const struct cf_elf *elf, const struct cf_span *t, struct gnu_hash *g)
{
    int big = elf->header.big_endian;
    if (t->len < 16)
        return -1;
    g->nbuckets = ord32(t->data, big);
    g->symoffset = ord32(t->data + 4, big);
    g->buckets_at = 16 + (uint64_t)ord32(t->data + 8, big) * (elf->header.elf_class == 64 ? 8 : 4);
    g->chains_at = g->buckets_at + (uint64_t)g->nbuckets * 4;
    return g->chains_at <= t->len ? 0 : -1;
}

/* The symbols below this index are all GNU-hashed or before symoffset: the
 * highest bucket start, then along its chain to the word with the end bit.
 * 0 when no symbol is hashed (GNU ld then writes its "empty" table: one
 * empty bucket, symoffset 1, whatever the unhashed symbols are) or a chain
 * runs off its table: the count is not in the table. */
static uint64_t gnu_hash_count(const struct cf_elf *elf, const struct cf_span *t, const struct gnu_hash *g)
{
    int big = elf->header.big_endian;
    uint64_t last = 0;
    for (uint64_t b = 0; b < g->nbuckets; b++) {
        uint32_t start = ord32(t->data + g->buckets_at + 4 * b, big);
        last = start > last ? start : last;
    }
    if (last == 0 || last < g->symoffset)
        return 0;
    for (uint64_t at = g->chains_at + 4 * (last - g->symoffset); at + 4 <= t->len; at += 4, last++)
        if (ord32(t->data + at, big) & 1)
            return last + 1;
    return 0;
}

/* How many symbols the table has: the loader never needs to know, so no tag says. */
static uint64_t symbol_count(const struct cf_elf *elf)
{
    struct cf_span t;
    struct gnu_hash g;
    if (table_bytes(elf, CF_DYN_HASH, &t) == 0 && t.len >= 8)
        return ord32(t.data + 4, elf->header.big_endian); /* nchain: one entry per symbol */
    uint64_t n;
    if (table_bytes(elf, CF_DYN_GNU_HASH, &t) == 0 && gnu_hash_layout(elf, &t, &g) == 0 &&
        (n = gnu_hash_count(elf, &t, &g)) != 0)
        return n;
    /* No table that counts them (glibc then binds nothing to the object): up
     * to the next table, which linkers place right after (.dynstr or
     * .gnu.version, aligned to no more than a symbol). */
    if (table_bytes(elf, CF_DYN_SYMTAB, &t) != 0)
        return 0;
    uint64_t start = elf->dyn_tables.value[CF_DYN_SYMTAB], room = t.len;
    for (size_t i = 0; i < N_VIEW; i++) {
        uint64_t at = elf->dyn_tables.value[view_tables[i].addr];
        if (has(elf, view_tables[i].addr) && at > start && at - start < room)
            room = at - start;
    }
    return room / elf->layout->sym.size;
}

/* The bytes of one entry of a table the size is a whole number of (1: any size). */
static uint64_t entry_size(const struct cf_elf *elf, uint32_t type)
{
    return type == SHT_DYNSYM ? elf->layout->sym.size : type == SHT_GNU_versym ? 2 : 1;
}

static uint64_t table_size(const struct cf_elf *elf, const struct view_table *v, uint64_t n_syms,
                           const struct cf_span *bytes)
{
    int big = elf->header.big_endian;
    struct gnu_hash g;
    switch (v->sizing) {
    case SIZE_TAG:
    case SIZE_TAG_OR_ALL:
        if (has(elf, v->size))
            return elf->dyn_tables.value[v->size];
        return v->sizing == SIZE_TAG ? 0 : bytes->len;
    case SIZE_SYMBOLS:
        return n_syms * entry_size(elf, v->type);
    case SIZE_HASH:
        return bytes->len >= 8 ? (2 + (uint64_t)ord32(bytes->data, big) + ord32(bytes->data + 4, big)) * 4 : 0;
    case SIZE_GNU_HASH:
        if (gnu_hash_layout(elf, bytes, &g) != 0)
            return 0;
        return g.chains_at + (n_syms > g.symoffset ? 4 * (n_syms - g.symoffset) : 0);
    case SIZE_ALL:
        return bytes->len;
    }
    return 0;
}

/* One table as a section over its file bytes; -1 when its address maps to none. */
static int make_table(const struct cf_elf *elf, const struct view_table *v, uint64_t n_syms, size_t link,
                      struct cf_elf_section *out)
{
    struct cf_span bytes;
    if (table_bytes(elf, v->addr, &bytes) != 0)
        return -1;
    uint32_t type = v->type ? v->type : elf->dyn_tables.value[CF_DYN_PLTREL] == DT_REL ? SHT_REL : SHT_RELA;
    uint64_t size = table_size(elf, v, n_syms, &bytes);
    /* Past the segment's file bytes the loader reads zeros: no names, no relocations. */
    if (size > bytes.len)
        size = bytes.len;
    uint64_t entsize = entry_size(elf, type);
    size -= size % entsize;
    *out = (struct cf_elf_section){
        .name = v->name,
        .type = type,
        .flags = SHF_ALLOC,
        .addr = elf->dyn_tables.value[v->addr],
        .offset = (uint64_t)(bytes.data - elf->data),
        .size = size,
        .link = (uint32_t)link,
        .info = has(elf, v->count) ? (uint32_t)elf->dyn_tables.value[v->count] : 0,
        .entsize = entsize > 1 ? entsize : 0,
    };
    return 0;
}

int cf_elf_dynamic_reloc_table(const struct cf_elf *elf, size_t i, struct cf_elf_section *out,
                               uint64_t *leading_relative)
{
    if (i >= CF_ELF_DYN_RELOC_TABLES)
        return -1;
    const struct view_table *v = &view_tables[N_VIEW - CF_ELF_DYN_RELOC_TABLES + i];
    *leading_relative = has(elf, v->relative) ? elf->dyn_tables.value[v->relative] : 0;
    return make_table(elf, v, 0, 0, out);
}

void cf_elf_sections_from_dynamic(struct cf_elf *elf)
{
    if (elf->n_sections || !elf->dynamic.has_dynamic)
        return;
    free(elf->sections); /* a header table of no entries still has its allocation */
    elf->sections = cf_xcalloc(N_VIEW + 1, sizeof *elf->sections);
    elf->sections[0].name = ""; /* the null section, as a real table starts */
    elf->n_sections = 1;
    uint64_t n_syms = symbol_count(elf);
    if (n_syms > CF_ELF_MAX_SYMBOLS)
        n_syms = CF_ELF_MAX_SYMBOLS;
    size_t strings = 0, symbols = 0;
    for (size_t i = 0; i < N_VIEW; i++) {
        const struct view_table *v = &view_tables[i];
        size_t link = v->link == LINK_STRINGS ? strings : v->link == LINK_SYMBOLS ? symbols : 0;
        struct cf_elf_section *s = &elf->sections[elf->n_sections];
        /* left out: not in the file, or the names or symbols it refers to are not */
        if ((v->link != LINK_NONE && !link) || make_table(elf, v, n_syms, link, s) != 0)
            continue;
        if (s->type == SHT_STRTAB)
            strings = elf->n_sections;
        else if (s->type == SHT_DYNSYM)
            symbols = elf->n_sections;
        elf->n_sections++;
    }
}
