/* The dynamic section (NEEDED, SONAME, RPATH, RUNPATH, FLAGS, FLAGS_1) and
 * PT_INTERP. Entries come from the SHT_DYNAMIC section with its linked string
 * table; an object without section headers falls back to PT_DYNAMIC and DT_STRTAB
 * translated through the PT_LOAD segments, as the loader itself reads it. */
#include "elf/elf_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

static int range_in_file(uint64_t offset, uint64_t size, size_t len)
{
    return offset <= len && size <= len - offset;
}

int cf_elf_vaddr_span(const struct cf_elf *elf, uint64_t addr, uint64_t max_len, struct cf_span *out)
{
    for (size_t i = 0; i < elf->n_segments; i++) {
        const struct cf_elf_segment *s = &elf->segments[i];
        if (s->type != PT_LOAD || addr < s->vaddr || addr - s->vaddr >= s->filesz)
            continue;
        uint64_t delta = addr - s->vaddr;
        uint64_t avail = s->filesz - delta;
        uint64_t off = s->offset + delta;
        if (off < s->offset || off > elf->len)
            return -1;
        if (avail > elf->len - off)
            avail = elf->len - off;
        if (avail > max_len)
            avail = max_len;
        out->data = elf->data + off;
        out->len = (size_t)avail;
        return 0;
    }
    return -1;
}

/* The bytes of the first segment of `type` (named `name` in a fault): 1, 0 when
 * there is none, -1 when it lies outside the file. */
static int segment_bytes(struct cf_elf *elf, uint32_t type, const char *name, struct cf_span *out, cf_error *err)
{
    for (size_t i = 0; i < elf->n_segments; i++) {
        const struct cf_elf_segment *s = &elf->segments[i];
        if (s->type != type)
            continue;
        if (!range_in_file(s->offset, s->filesz, elf->len))
            return cf_elf_fault(elf, err, "%s (offset %#llx, size %#llx) lies outside the file (%zu bytes)", name,
                                (unsigned long long)s->offset, (unsigned long long)s->filesz, elf->len);
        *out = (struct cf_span){ elf->data + s->offset, (size_t)s->filesz };
        return 1;
    }
    return 0;
}

static int load_interp(struct cf_elf *elf, cf_error *err)
{
    struct cf_span span;
    int found = segment_bytes(elf, PT_INTERP, "PT_INTERP", &span, err);
    if (found <= 0)
        return found;
    elf->dynamic.interp = cf_span_string(&span, 0);
    if (!elf->dynamic.interp)
        return cf_elf_fault(elf, err, "PT_INTERP is not a NUL-terminated path within its %zu bytes", span.len);
    return 0;
}

/* Where the entries are: the SHT_DYNAMIC section, else PT_DYNAMIC. data is
 * NULL when the object has neither (a static executable, a relocatable). */
static int find_dynamic_data(struct cf_elf *elf, struct cf_span *data, const struct cf_elf_section **sec, cf_error *err)
{
    *data = (struct cf_span){ NULL, 0 };
    *sec = NULL;
    size_t count;
    for (size_t i = 0; i < elf->n_sections; i++) {
        if (elf->sections[i].type != SHT_DYNAMIC)
            continue;
        if (cf_elf_section_entries(elf, &elf->sections[i], elf->layout->dyn.size, data, &count, err) != 0)
            return -1;
        *sec = &elf->sections[i];
        return 0;
    }
    struct cf_span seg;
    int found = segment_bytes(elf, PT_DYNAMIC, "PT_DYNAMIC", &seg, err);
    if (found < 0)
        return -1;
    /* The loader reads whole entries up to DT_NULL; a partial last one is not an entry. */
    if (found)
        *data = (struct cf_span){ seg.data, seg.len - seg.len % elf->layout->dyn.size };
    return 0;
}

/* One dynamic entry, with the tag sign-extended as the ELF32 Elf32_Sword is. */
struct dyn_entry {
    int64_t tag;
    uint64_t val; /* d_val or d_ptr */
};

static struct dyn_entry dyn_at(const struct cf_span *data, const struct elf_layout *L, int big, size_t i)
{
    const uint8_t *p = data->data + i * L->dyn.size;
    uint64_t tag = elf_get(p, L->dyn.tag, big);
    return (struct dyn_entry){
        .tag = L->dyn.tag.bytes == 4 ? (int64_t)(int32_t)(uint32_t)tag : (int64_t)tag,
        .val = elf_get(p, L->dyn.val, big),
    };
}

/* The tags whose value is kept as it is, and where. */
static const struct {
    int64_t tag;
    size_t field; /* offset of a uint64_t in struct cf_elf_dynamic */
} value_tags[] = {
    { DT_FLAGS, offsetof(struct cf_elf_dynamic, flags) },
    { DT_FLAGS_1, offsetof(struct cf_elf_dynamic, flags_1) },
};

/* The tags that locate the loader's tables (elf_dynamic_view.c). */
static const struct {
    int64_t tag;
    enum cf_dyn_slot slot;
} table_tags[] = {
    { DT_STRTAB, CF_DYN_STRTAB },       { DT_STRSZ, CF_DYN_STRSZ },
    { DT_SYMTAB, CF_DYN_SYMTAB },       { DT_HASH, CF_DYN_HASH },
    { DT_GNU_HASH, CF_DYN_GNU_HASH },   { DT_VERSYM, CF_DYN_VERSYM },
    { DT_VERNEED, CF_DYN_VERNEED },     { DT_VERNEEDNUM, CF_DYN_VERNEEDNUM },
    { DT_VERDEF, CF_DYN_VERDEF },       { DT_VERDEFNUM, CF_DYN_VERDEFNUM },
    { DT_RELA, CF_DYN_RELA },           { DT_RELASZ, CF_DYN_RELASZ },
    { DT_RELACOUNT, CF_DYN_RELACOUNT }, { DT_REL, CF_DYN_REL },
    { DT_RELSZ, CF_DYN_RELSZ },         { DT_RELCOUNT, CF_DYN_RELCOUNT },
    { DT_JMPREL, CF_DYN_JMPREL },       { DT_PLTRELSZ, CF_DYN_PLTRELSZ },
    { DT_PLTREL, CF_DYN_PLTREL },
};

/* The string-valued tags, in the order they are stored. */
struct string_tag {
    int64_t tag;
    const char *name;
};
static const struct string_tag string_tags[] = {
    { DT_NEEDED, "DT_NEEDED" },
    { DT_SONAME, "DT_SONAME" },
    { DT_RPATH, "DT_RPATH" },
    { DT_RUNPATH, "DT_RUNPATH" },
};

static const char *string_tag_name(int64_t tag)
{
    for (size_t i = 0; i < sizeof string_tags / sizeof string_tags[0]; i++)
        if (string_tags[i].tag == tag)
            return string_tags[i].name;
    return NULL;
}

int cf_elf_load_dynamic(struct cf_elf *elf, cf_error *err)
{
    struct cf_elf_dynamic *d = &elf->dynamic;
    if (load_interp(elf, err) != 0)
        return -1;
    struct cf_span data;
    const struct cf_elf_section *sec;
    if (find_dynamic_data(elf, &data, &sec, err) != 0)
        return -1;
    if (!data.data)
        return 0;
    d->has_dynamic = 1;

    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    size_t entsize = L->dyn.size;
    size_t count = data.len / entsize;
    if (count > CF_ELF_MAX_DYN_ENTRIES)
        count = CF_ELF_MAX_DYN_ENTRIES;

    /* First pass: the scalar tags, the tables' tags, and how many NEEDED. */
    struct cf_dyn_tables *t = &elf->dyn_tables;
    int have_strings = 0;
    size_t n_needed = 0, used = 0;
    for (; used < count; used++) {
        struct dyn_entry dyn = dyn_at(&data, L, big, used);
        if (dyn.tag == DT_NULL)
            break;
        if (dyn.tag == DT_NEEDED)
            n_needed++;
        if (string_tag_name(dyn.tag))
            have_strings = 1;
        for (size_t k = 0; k < sizeof table_tags / sizeof table_tags[0]; k++)
            if (table_tags[k].tag == dyn.tag) {
                t->value[table_tags[k].slot] = dyn.val;
                t->present |= 1u << table_tags[k].slot;
            }
        for (size_t k = 0; k < sizeof value_tags / sizeof value_tags[0]; k++)
            if (value_tags[k].tag == dyn.tag)
                *(uint64_t *)((char *)d + value_tags[k].field) = dyn.val;
    }
    if (!have_strings)
        return 0;

    struct cf_span strtab = { NULL, 0 };
    if (sec) {
        if (cf_elf_linked_strtab(elf, sec, sec->link, &strtab, err) != 0)
            return -1;
    } else if (!(t->present >> CF_DYN_STRTAB & 1) ||
               cf_elf_vaddr_span(elf, t->value[CF_DYN_STRTAB],
                                 t->present >> CF_DYN_STRSZ & 1 ? t->value[CF_DYN_STRSZ] : UINT64_MAX, &strtab) != 0) {
        return cf_elf_fault(elf, err, "the dynamic section names strings but DT_STRTAB (%#llx) maps to no file bytes",
                            (unsigned long long)t->value[CF_DYN_STRTAB]);
    }

    elf->needed = cf_xcalloc(n_needed + 1, sizeof *elf->needed);
    for (size_t i = 0; i < used; i++) {
        struct dyn_entry dyn = dyn_at(&data, L, big, i);
        const char *tag_name = string_tag_name(dyn.tag);
        if (!tag_name)
            continue;
        const char *s = cf_span_string(&strtab, dyn.val);
        if (!s)
            return cf_elf_fault(elf, err, "%s string offset %#llx is outside the dynamic string table (%zu bytes)",
                                tag_name, (unsigned long long)dyn.val, strtab.len);
        switch (dyn.tag) {
        case DT_NEEDED: elf->needed[d->n_needed++] = s; break;
        case DT_SONAME: d->soname = s; break;
        case DT_RPATH: d->rpath = s; break;
        case DT_RUNPATH: d->runpath = s; break;
        default: break;
        }
    }
    d->needed = elf->needed;
    return 0;
}
