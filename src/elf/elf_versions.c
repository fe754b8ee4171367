/* Dynamic symbols and GNU symbol versioning: .dynsym, .gnu.version (versym),
 * .gnu.version_d (verdef) and .gnu.version_r (verneed), resolved into a version
 * name per symbol, with the providing file for undefined ones and the hidden
 * flag ('@' rather than '@@') for definitions. Loaded on first use only, so
 * opening a file never touches its symbol table. */
#include "elf/elf_internal.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

#define VERSYM_INDEX_MASK 0x7fffu
#define VERSYM_HIDDEN 0x8000u

/* One version index (vd_ndx or vna_other) and what it names. */
struct version_slot {
    unsigned index;
    const char *name;
    const char *file; /* the verneed file, NULL for a definition */
};

struct slot_list {
    struct version_slot *v;
    size_t n, alloc;
};

static void slot_push(struct slot_list *l, unsigned index, const char *name, const char *file)
{
    if (l->n == l->alloc) {
        l->alloc = l->alloc ? l->alloc * 2 : 16;
        l->v = cf_xrealloc(l->v, l->alloc * sizeof *l->v);
    }
    l->v[l->n++] = (struct version_slot){ index, name, file };
}

static const struct cf_elf_section *first_section_of_type(const struct cf_elf *elf, uint32_t type)
{
    for (size_t i = 0; i < elf->n_sections; i++)
        if (elf->sections[i].type == type)
            return &elf->sections[i];
    return NULL;
}

/* The entry of `size` bytes at off, or NULL when it does not lie wholly in the section. */
static const uint8_t *entry_at(const struct cf_span *data, size_t off, size_t size)
{
    return off <= data->len && data->len - off >= size ? data->data + off : NULL;
}

/* Walks one version section's entries into slots. */
typedef int version_walker(struct cf_elf *elf, const struct cf_elf_section *sec, struct cf_span data,
                           struct cf_span strtab, struct slot_list *slots, cf_error *err);

/* The first section of `type`, its bytes checked to lie in the file and its
 * linked string table found, walked into slots; nothing to do without one. */
static int load_section(struct cf_elf *elf, uint32_t type, version_walker *walk, struct slot_list *slots,
                        cf_error *err)
{
    const struct cf_elf_section *sec = first_section_of_type(elf, type);
    struct cf_span data, strtab;
    if (!sec)
        return 0;
    if (cf_elf_section_bytes(elf, sec, &data.data, &data.len, err) != 0 ||
        cf_elf_linked_strtab(elf, sec, sec->link, &strtab, err) != 0)
        return -1;
    return walk(elf, sec, data, strtab, slots, err);
}

static int walk_verdefs(struct cf_elf *elf, const struct cf_elf_section *sec, struct cf_span data,
                          struct cf_span strtab, struct slot_list *slots, cf_error *err)
{
    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    /* Each entry is at least one Verdef, so the size bounds the count whatever sh_info says. */
    size_t cap = data.len / L->verdef.size + 1;
    size_t off = 0;
    elf->verdef_names = cf_xcalloc(1, sizeof *elf->verdef_names);
    for (size_t i = 0; i < sec->info && i < cap; i++) {
        const uint8_t *vd = entry_at(&data, off, L->verdef.size);
        if (!vd)
            return cf_elf_fault(elf, err, "%s: version definition %zu at offset %zu lies outside the section (%zu bytes)",
                                sec->name, i, off, data.len);
        const uint8_t *aux = entry_at(&data, off + elf_get(vd, L->verdef.aux, big), L->verdaux.size);
        if (elf_get(vd, L->verdef.cnt, big) == 0 || !aux)
            return cf_elf_fault(elf, err, "%s: version definition %zu has no readable name entry", sec->name, i);
        uint64_t name_off = elf_get(aux, L->verdaux.name, big);
        const char *name = cf_span_string(&strtab, name_off);
        if (!name)
            return cf_elf_fault(elf, err, "%s: version name offset %#llx is outside the string table (%zu bytes)",
                                sec->name, (unsigned long long)name_off, strtab.len);
        slot_push(slots, (unsigned)elf_get(vd, L->verdef.ndx, big) & VERSYM_INDEX_MASK, name, NULL);
        if (!(elf_get(vd, L->verdef.flags, big) & VER_FLG_BASE)) {
            elf->verdef_names = cf_xrealloc(elf->verdef_names, (elf->n_verdefs + 2) * sizeof *elf->verdef_names);
            elf->verdef_names[elf->n_verdefs++] = name;
        }
        uint64_t next = elf_get(vd, L->verdef.next, big);
        if (next == 0)
            break;
        off += next;
    }
    return 0;
}

static int walk_verneeds(struct cf_elf *elf, const struct cf_elf_section *sec, struct cf_span data,
                          struct cf_span strtab, struct slot_list *slots, cf_error *err)
{
    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    /* Counts in the file are claims, not sizes: arrays grow as the chains are
     * walked, and the whole section pays for every entry read from it (each
     * Verneed and Vernaux takes 16 bytes of it), so memory and work stay in
     * proportion to the section however large vn_cnt or sh_info say they are. */
    size_t budget = data.len / L->vernaux.size;
    size_t needs_alloc = 0;
    size_t off = 0;
    for (size_t i = 0; i < sec->info; i++) {
        if (budget == 0)
            return cf_elf_fault(elf, err, "%s: more version requirements than its %zu bytes can hold",
                                sec->name, data.len);
        budget--;
        const uint8_t *vn = entry_at(&data, off, L->verneed.size);
        if (!vn)
            return cf_elf_fault(elf, err, "%s: version requirement %zu at offset %zu lies outside the section (%zu bytes)",
                                sec->name, i, off, data.len);
        uint64_t file_off = elf_get(vn, L->verneed.file, big);
        const char *file = cf_span_string(&strtab, file_off);
        if (!file)
            return cf_elf_fault(elf, err, "%s: file name offset %#llx is outside the string table (%zu bytes)",
                                sec->name, (unsigned long long)file_off, strtab.len);
        if (elf->n_verneeds == needs_alloc) {
            needs_alloc = needs_alloc ? needs_alloc * 2 : 8;
            elf->verneeds = cf_xrealloc(elf->verneeds, needs_alloc * sizeof *elf->verneeds);
        }
        struct cf_elf_verneed *need = &elf->verneeds[elf->n_verneeds++];
        memset(need, 0, sizeof *need);
        need->file = file;
        const char **versions = NULL;
        int *weak = NULL;
        size_t alloc = 0;
        size_t aux_off = off + elf_get(vn, L->verneed.aux, big);
        unsigned cnt = (unsigned)elf_get(vn, L->verneed.cnt, big);
        for (size_t j = 0; j < cnt; j++) {
            if (budget == 0)
                return cf_elf_fault(elf, err, "%s: %s claims %u version requirements, more than the section's %zu bytes hold",
                                    sec->name, file, cnt, data.len);
            budget--;
            const uint8_t *aux = entry_at(&data, aux_off, L->vernaux.size);
            if (!aux)
                return cf_elf_fault(elf, err, "%s: requirement %zu of %s at offset %zu lies outside the section",
                                    sec->name, j, file, aux_off);
            uint64_t name_off = elf_get(aux, L->vernaux.name, big);
            const char *name = cf_span_string(&strtab, name_off);
            if (!name)
                return cf_elf_fault(elf, err, "%s: version name offset %#llx (needed from %s) is outside the string table",
                                    sec->name, (unsigned long long)name_off, file);
            if (need->n_versions == alloc) {
                alloc = alloc ? alloc * 2 : 4;
                versions = cf_xrealloc(versions, alloc * sizeof *versions);
                weak = cf_xrealloc(weak, alloc * sizeof *weak);
                need->versions = versions;
                need->weak = weak;
            }
            versions[need->n_versions] = name;
            weak[need->n_versions] = (elf_get(aux, L->vernaux.flags, big) & VER_FLG_WEAK) != 0;
            need->n_versions++;
            slot_push(slots, (unsigned)elf_get(aux, L->vernaux.other, big) & VERSYM_INDEX_MASK, name, file);
            uint64_t aux_next = elf_get(aux, L->vernaux.next, big);
            if (aux_next == 0)
                break;
            aux_off += aux_next;
        }
        uint64_t next = elf_get(vn, L->verneed.next, big);
        if (next == 0)
            break;
        off += next;
    }
    return 0;
}

static int load_versions(struct cf_elf *elf, cf_error *err)
{
    if (elf->versions_loaded)
        return elf->versions_loaded > 0 ? 0 : cf_elf_fault(elf, err, "symbol version sections are corrupt (see the first error)");
    struct slot_list slots = { 0 };
    elf->versions_loaded = -1;
    if (load_section(elf, SHT_GNU_verdef, walk_verdefs, &slots, err) != 0 ||
        load_section(elf, SHT_GNU_verneed, walk_verneeds, &slots, err) != 0) {
        free(slots.v);
        return -1;
    }
    unsigned max = 1;
    for (size_t i = 0; i < slots.n; i++)
        if (slots.v[i].index > max)
            max = slots.v[i].index;
    elf->n_index = (size_t)max + 1;
    elf->index_name = cf_xcalloc(elf->n_index, sizeof *elf->index_name);
    elf->index_file = cf_xcalloc(elf->n_index, sizeof *elf->index_file);
    for (size_t i = 0; i < slots.n; i++) {
        elf->index_name[slots.v[i].index] = slots.v[i].name;
        elf->index_file[slots.v[i].index] = slots.v[i].file;
    }
    free(slots.v);
    elf->versions_loaded = 1;
    return 0;
}

static enum cf_sym_bind bind_of(unsigned stb)
{
    static const struct { unsigned stb; enum cf_sym_bind bind; } table[] = {
        { STB_LOCAL, CF_BIND_LOCAL },
        { STB_GLOBAL, CF_BIND_GLOBAL },
        { STB_WEAK, CF_BIND_WEAK },
        { STB_GNU_UNIQUE, CF_BIND_GNU_UNIQUE },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].stb == stb)
            return table[i].bind;
    return CF_BIND_OTHER;
}

/* Fills one symbol's version from its versym entry. */
static int resolve_version(const struct cf_elf *elf, struct cf_elf_symbol *sym, unsigned versym, cf_error *err)
{
    unsigned index = versym & VERSYM_INDEX_MASK;
    if (index == VER_NDX_LOCAL || index == VER_NDX_GLOBAL)
        return 0;
    if (index >= elf->n_index || !elf->index_name[index])
        return cf_elf_fault(elf, err, "symbol %s has version index %u, which no version definition or requirement declares",
                            sym->name, index);
    sym->version = elf->index_name[index];
    if (!sym->defined)
        sym->version_file = elf->index_file[index];
    sym->version_hidden = sym->defined && (versym & VERSYM_HIDDEN) != 0;
    return 0;
}

static int load_dynsyms(struct cf_elf *elf, cf_error *err)
{
    const struct cf_elf_section *sec = first_section_of_type(elf, SHT_DYNSYM);
    if (!sec)
        return 0;
    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    struct cf_span data, strtab;
    size_t count;
    if (cf_elf_section_entries(elf, sec, L->sym.size, &data, &count, err) != 0 ||
        cf_elf_linked_strtab(elf, sec, sec->link, &strtab, err) != 0)
        return -1;
    if (count > CF_ELF_MAX_SYMBOLS)
        return cf_elf_fault(elf, err, "%s holds %zu symbols, more than this reader accepts", sec->name, count);

    struct cf_span versym = { NULL, 0 };
    const struct cf_elf_section *vs_sec = first_section_of_type(elf, SHT_GNU_versym);
    if (vs_sec) {
        size_t n_versym;
        if (cf_elf_section_entries(elf, vs_sec, sizeof(Elf64_Versym), &versym, &n_versym, err) != 0)
            return -1;
        if (n_versym < count)
            return cf_elf_fault(elf, err, "%s has %zu entries for %zu dynamic symbols", vs_sec->name, n_versym, count);
        if (load_versions(elf, err) != 0)
            return -1;
    }

    elf->syms = cf_xcalloc(count ? count : 1, sizeof *elf->syms);
    /* Entry 0 is the reserved null symbol: left out. */
    for (size_t i = 1; i < count; i++) {
        const uint8_t *st = data.data + i * L->sym.size;
        struct cf_elf_symbol *sym = &elf->syms[elf->n_syms];
        uint64_t name = elf_get(st, L->sym.name, big);
        unsigned info = (unsigned)elf_get(st, L->sym.info, big);
        sym->name = cf_span_string(&strtab, name);
        if (!sym->name)
            return cf_elf_fault(elf, err, "dynamic symbol %zu: name offset %#llx is outside the string table (%zu bytes)",
                                i, (unsigned long long)name, strtab.len);
        sym->defined = elf_get(st, L->sym.shndx, big) != SHN_UNDEF;
        sym->bind = bind_of(ELF64_ST_BIND(info));
        sym->type = ELF64_ST_TYPE(info);
        sym->visibility = ELF64_ST_VISIBILITY(elf_get(st, L->sym.other, big));
        sym->value = elf_get(st, L->sym.value, big);
        sym->size = elf_get(st, L->sym.bytes, big);
        if (versym.data && resolve_version(elf, sym, ord16(versym.data + 2 * i, big), err) != 0)
            return -1;
        elf->n_syms++;
    }
    return 0;
}

int cf_elf_dynsyms(struct cf_elf *elf, const struct cf_elf_symbol **syms, size_t *n, cf_error *err)
{
    *syms = NULL;
    *n = 0;
    if (elf->syms_loaded < 0)
        return cf_elf_fault(elf, err, "the dynamic symbol table is corrupt (see the first error)");
    if (!elf->syms_loaded) {
        elf->syms_loaded = -1;
        if (load_dynsyms(elf, err) != 0)
            return -1;
        elf->syms_loaded = 1;
    }
    *syms = elf->syms;
    *n = elf->n_syms;
    return 0;
}

int cf_elf_verdefs(struct cf_elf *elf, const char *const **names, size_t *n, cf_error *err)
{
    *names = NULL;
    *n = 0;
    if (load_versions(elf, err) != 0)
        return -1;
    *names = elf->verdef_names;
    *n = elf->n_verdefs;
    return 0;
}

int cf_elf_verneeds(struct cf_elf *elf, const struct cf_elf_verneed **needs, size_t *n, cf_error *err)
{
    *needs = NULL;
    *n = 0;
    if (load_versions(elf, err) != 0)
        return -1;
    *needs = elf->verneeds;
    *n = elf->n_verneeds;
    return 0;
}
