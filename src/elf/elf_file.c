/* Opening an ELF file: validation of the ELF header and the section and program
 * header tables, section names, and bounds-checked access to section bytes.
 *
 * Every field is read straight from our own read-only mapping through the
 * class's layout (elf_layout.h), in the file's byte order, after its table is
 * checked to lie in the file: nothing is read until touched, so a 1 GB library
 * costs its headers plus the sections asked for, and nothing is copied. */
#include "elf/elf_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

int cf_elf_fault(const struct cf_elf *elf, cf_error *err, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    cf_error_set(err, CF_ERR_FORMAT, "%s: %s", elf->path, cf_sb_str(&sb));
    cf_sb_release(&sb);
    return -1;
}

const char *cf_span_string(const struct cf_span *span, uint64_t offset)
{
    if (!span->data || offset >= span->len)
        return NULL;
    const uint8_t *start = span->data + offset;
    /* A table ending in NUL (every linker writes them so) terminates every
     * string in it: no search per name (~30k symbol names per closure). */
    if (span->data[span->len - 1] != '\0' && !memchr(start, '\0', span->len - (size_t)offset))
        return NULL;
    return (const char *)start;
}

/* 1 when [offset, offset+size) lies inside a file of len bytes (no overflow). */
static int range_in_file(uint64_t offset, uint64_t size, size_t len)
{
    return offset <= len && size <= len - offset;
}

/* The section with this index, or NULL when out of range. */
static const struct cf_elf_section *elf_section_index(const struct cf_elf *elf, size_t index)
{
    return index < elf->n_sections ? &elf->sections[index] : NULL;
}

int cf_elf_section_bytes(const struct cf_elf *elf, const struct cf_elf_section *sec,
                         const uint8_t **data, size_t *len, cf_error *err)
{
    *data = NULL;
    *len = 0;
    if (sec->type == SHT_NOBITS || sec->type == SHT_NULL)
        return 0;
    if (!range_in_file(sec->offset, sec->size, elf->len))
        return cf_elf_fault(elf, err, "section %s (offset %#llx, size %#llx) lies outside the file (%zu bytes); the file is truncated or corrupt",
                            *sec->name ? sec->name : "(unnamed)", (unsigned long long)sec->offset,
                            (unsigned long long)sec->size, elf->len);
    *data = elf->data + sec->offset;
    *len = (size_t)sec->size;
    return 0;
}

int cf_elf_linked_strtab(const struct cf_elf *elf, const struct cf_elf_section *user, uint32_t link,
                         struct cf_span *out, cf_error *err)
{
    const struct cf_elf_section *strtab = elf_section_index(elf, link);
    if (!strtab || link == 0 || strtab->type != SHT_STRTAB)
        return cf_elf_fault(elf, err, "section %s: sh_link %u names no string table section (the file has %zu sections)",
                            user->name, link, elf->n_sections);
    return cf_elf_section_bytes(elf, strtab, &out->data, &out->len, err);
}

int cf_elf_section_entries(const struct cf_elf *elf, const struct cf_elf_section *sec, size_t entsize,
                           struct cf_span *out, size_t *count, cf_error *err)
{
    if (cf_elf_section_bytes(elf, sec, &out->data, &out->len, err) != 0)
        return -1;
    if (out->len % entsize != 0)
        return cf_elf_fault(elf, err, "section %s is %zu bytes, not a whole number of %zu-byte entries",
                            *sec->name ? sec->name : "(unnamed)", out->len, entsize);
    *count = out->len / entsize;
    return 0;
}

static int check_identity(struct cf_elf *elf, cf_error *err)
{
    static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
    if (elf->len == 0)
        return cf_elf_fault(elf, err, "empty file, not an ELF object");
    if (elf->len < 4 || memcmp(elf->data, magic, 4) != 0)
        return cf_elf_fault(elf, err, "not an ELF file (no \\177ELF magic at the start)");
    if (elf->len < EI_NIDENT)
        return cf_elf_fault(elf, err, "truncated: %zu bytes, shorter than the ELF identification", elf->len);
    unsigned cls = elf->data[EI_CLASS], order = elf->data[EI_DATA], version = elf->data[EI_VERSION];
    if (cls != ELFCLASS32 && cls != ELFCLASS64)
        return cf_elf_fault(elf, err, "unknown ELF class %u in e_ident (expected 1 for ELF32 or 2 for ELF64)", cls);
    if (order != ELFDATA2LSB && order != ELFDATA2MSB)
        return cf_elf_fault(elf, err, "unknown byte order %u in e_ident (expected 1 little or 2 big endian)", order);
    /* glibc's loader refuses any other version (open_verify), and so did libelf. */
    if (version != EV_CURRENT)
        return cf_elf_fault(elf, err, "unknown ELF version %u in e_ident (expected 1, EV_CURRENT)", version);
    elf->layout = &cf_elf_layouts[cls == ELFCLASS64];
    if (elf->len < elf->layout->ehdr.size)
        return cf_elf_fault(elf, err, "truncated: %zu bytes, shorter than the %zu-byte ELF header", elf->len,
                            elf->layout->ehdr.size);
    return 0;
}

/* The counts of the ELF header, with the extended numbering of the gABI:
 * e_shnum 0 puts the section count in section 0's sh_size, e_shstrndx
 * SHN_XINDEX the name table's index in its sh_link, e_phnum PN_XNUM the
 * segment count in its sh_info. */
struct table_counts {
    uint64_t shoff, phoff;
    uint64_t shnum, shstrndx, phnum;
    unsigned shentsize, phentsize;
};

static const uint8_t *header_entry(const struct cf_elf *elf, uint64_t table, size_t entsize, uint64_t i)
{
    return elf->data + table + i * entsize;
}

static int read_counts(struct cf_elf *elf, struct table_counts *c, cf_error *err)
{
    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    const uint8_t *eh = elf->data;
    c->shoff = elf_get(eh, L->ehdr.shoff, big);
    c->phoff = elf_get(eh, L->ehdr.phoff, big);
    c->shnum = elf_get(eh, L->ehdr.shnum, big);
    c->shstrndx = elf_get(eh, L->ehdr.shstrndx, big);
    c->phnum = elf_get(eh, L->ehdr.phnum, big);
    c->shentsize = (unsigned)elf_get(eh, L->ehdr.shentsize, big);
    c->phentsize = (unsigned)elf_get(eh, L->ehdr.phentsize, big);
    if (c->shoff == 0) {
        c->shnum = 0; /* no section headers: legal for a stripped object */
        return 0;
    }
    size_t entsize = L->shdr.size;
    if (c->shentsize != entsize)
        return cf_elf_fault(elf, err, "e_shentsize is %u, expected %zu for this ELF class", c->shentsize, entsize);
    uint64_t first = c->shnum ? c->shnum : 1;
    if (!range_in_file(c->shoff, first * entsize, elf->len))
        return cf_elf_fault(elf, err, "section header table (offset %#llx, %llu entries of %zu bytes) extends past the end of the file (%zu bytes); truncated?",
                            (unsigned long long)c->shoff, (unsigned long long)first, entsize, elf->len);
    const uint8_t *zero = header_entry(elf, c->shoff, entsize, 0);
    if (c->shnum == 0)
        c->shnum = elf_get(zero, L->shdr.bytes, big);
    if (c->shstrndx == SHN_XINDEX)
        c->shstrndx = elf_get(zero, L->shdr.link, big);
    if (c->phnum == PN_XNUM && c->shnum > 0)
        c->phnum = elf_get(zero, L->shdr.info, big);
    return 0;
}

static int load_sections(struct cf_elf *elf, const struct table_counts *c, cf_error *err)
{
    if (c->shoff == 0)
        return 0;
    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    size_t entsize = L->shdr.size;
    uint64_t n = c->shnum;
    if (n > CF_ELF_MAX_SECTIONS || !range_in_file(c->shoff, n * entsize, elf->len))
        return cf_elf_fault(elf, err, "section header table claims %llu entries, more than fit in the file (%zu bytes)",
                            (unsigned long long)n, elf->len);
    uint64_t shstrndx = c->shstrndx;
    if (shstrndx != SHN_UNDEF && shstrndx >= n)
        return cf_elf_fault(elf, err, "e_shstrndx %llu names no section (the file has %llu)",
                            (unsigned long long)shstrndx, (unsigned long long)n);

    elf->sections = cf_xcalloc(n ? (size_t)n : 1, sizeof *elf->sections);
    elf->n_sections = (size_t)n;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *sh = header_entry(elf, c->shoff, entsize, i);
        struct cf_elf_section *s = &elf->sections[i];
        s->name = "";
        s->type = (uint32_t)elf_get(sh, L->shdr.type, big);
        s->flags = elf_get(sh, L->shdr.flags, big);
        s->addr = elf_get(sh, L->shdr.addr, big);
        s->offset = elf_get(sh, L->shdr.offset, big);
        s->size = elf_get(sh, L->shdr.bytes, big);
        s->link = (uint32_t)elf_get(sh, L->shdr.link, big);
        s->info = (uint32_t)elf_get(sh, L->shdr.info, big);
        s->entsize = elf_get(sh, L->shdr.entsize, big);
        s->addralign = elf_get(sh, L->shdr.addralign, big);
    }
    if (shstrndx == SHN_UNDEF)
        return 0;
    /* Names point into the mapping; a name out of bounds stays "". */
    struct cf_span names;
    const struct cf_elf_section *shstr = &elf->sections[shstrndx];
    if (shstr->type != SHT_STRTAB)
        return cf_elf_fault(elf, err, "e_shstrndx %llu is a section of type %u, not a string table",
                            (unsigned long long)shstrndx, shstr->type);
    if (cf_elf_section_bytes(elf, shstr, &names.data, &names.len, err) != 0)
        return cf_error_prefix(err, "section name table: ");
    for (size_t i = 0; i < n; i++) {
        const char *name = cf_span_string(&names, elf_get(header_entry(elf, c->shoff, entsize, i), L->shdr.name, big));
        elf->sections[i].name = name ? name : "";
    }
    return 0;
}

static int load_segments(struct cf_elf *elf, const struct table_counts *c, cf_error *err)
{
    if (c->phoff == 0 || c->phnum == 0)
        return 0;
    const struct elf_layout *L = elf->layout;
    int big = elf->header.big_endian;
    size_t entsize = L->phdr.size;
    uint64_t n = c->phnum;
    if (c->phentsize != entsize)
        return cf_elf_fault(elf, err, "e_phentsize is %u, expected %zu for this ELF class", c->phentsize, entsize);
    if (n > CF_ELF_MAX_SEGMENTS || !range_in_file(c->phoff, n * entsize, elf->len))
        return cf_elf_fault(elf, err, "program header table (offset %#llx, %llu entries) extends past the end of the file (%zu bytes); truncated?",
                            (unsigned long long)c->phoff, (unsigned long long)n, elf->len);
    elf->segments = cf_xcalloc((size_t)n, sizeof *elf->segments);
    elf->n_segments = (size_t)n;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *ph = header_entry(elf, c->phoff, entsize, i);
        struct cf_elf_segment *s = &elf->segments[i];
        s->type = (uint32_t)elf_get(ph, L->phdr.type, big);
        s->flags = (uint32_t)elf_get(ph, L->phdr.flags, big);
        s->offset = elf_get(ph, L->phdr.offset, big);
        s->vaddr = elf_get(ph, L->phdr.vaddr, big);
        s->filesz = elf_get(ph, L->phdr.filesz, big);
        s->memsz = elf_get(ph, L->phdr.memsz, big);
    }
    return 0;
}

static int open_image(struct cf_elf *elf, cf_error *err)
{
    if (check_identity(elf, err) != 0)
        return -1;
    const uint8_t *eh = elf->data;
    const struct elf_layout *L = elf->layout;
    struct cf_elf_header *h = &elf->header;
    h->elf_class = eh[EI_CLASS] == ELFCLASS64 ? 64 : 32;
    h->big_endian = eh[EI_DATA] == ELFDATA2MSB;
    h->osabi = eh[EI_OSABI];
    h->type = (unsigned)elf_get(eh, L->ehdr.type, h->big_endian);
    h->machine = (unsigned)elf_get(eh, L->ehdr.machine, h->big_endian);
    h->entry = elf_get(eh, L->ehdr.entry, h->big_endian);
    h->file_size = elf->len;

    struct table_counts counts;
    if (read_counts(elf, &counts, err) != 0 || load_sections(elf, &counts, err) != 0 ||
        load_segments(elf, &counts, err) != 0 || cf_elf_load_dynamic(elf, err) != 0)
        return -1;
    cf_elf_sections_from_dynamic(elf);
    return 0;
}

static int finish_open(struct cf_elf *elf, struct cf_elf **out, cf_error *err)
{
    if (open_image(elf, err) != 0) {
        cf_elf_close(elf);
        return -1;
    }
    *out = elf;
    return 0;
}

int cf_elf_open(const char *path, struct cf_elf **out, cf_error *err)
{
    return cf_elf_open_fd(-1, path, out, err);
}

int cf_elf_open_fd(int fd, const char *path, struct cf_elf **out, cf_error *err)
{
    *out = NULL;
    struct cf_elf *elf = cf_xcalloc(1, sizeof *elf);
    elf->path = cf_strdup(path);
    if ((fd >= 0 ? cf_mmap_fd(fd, path, &elf->map, err) : cf_mmap_file(path, &elf->map, err)) != 0) {
        cf_elf_close(elf);
        return -1;
    }
    elf->data = elf->map.data;
    elf->len = elf->map.len;
    return finish_open(elf, out, err);
}

int cf_elf_check_intact(const struct cf_elf *elf, cf_error *err)
{
    return cf_mmap_check_intact(&elf->map, elf->path,
                                "what was read is not reliable; inspect it again once it is complete", err);
}

int cf_elf_file_id(const struct cf_elf *elf, struct cf_file_id *id)
{
    if (!cf_elf_owns_mapping(elf))
        return -1;
    *id = elf->map.id;
    return 0;
}

int cf_elf_owns_mapping(const struct cf_elf *elf)
{
    return elf->map.data != NULL && elf->data == elf->map.data;
}

int cf_elf_open_memory(const void *data, size_t len, const char *name, struct cf_elf **out, cf_error *err)
{
    *out = NULL;
    struct cf_elf *elf = cf_xcalloc(1, sizeof *elf);
    elf->path = cf_strdup(name ? name : "(memory)");
    elf->data = data;
    elf->len = data ? len : 0;
    return finish_open(elf, out, err);
}

void cf_elf_close(struct cf_elf *elf)
{
    if (!elf)
        return;
    cf_munmap(&elf->map);
    free(elf->sections);
    free(elf->segments);
    free(elf->needed);
    free(elf->verdef_names);
    if (elf->verneeds) {
        for (size_t i = 0; i < elf->n_verneeds; i++) {
            free((void *)elf->verneeds[i].versions);
            free((void *)elf->verneeds[i].weak);
        }
        free(elf->verneeds);
    }
    free(elf->index_name);
    free(elf->index_file);
    free(elf->syms);
    free(elf->relocated);
    free(elf->path);
    free(elf);
}

const char *cf_elf_path(const struct cf_elf *elf) { return elf->path; }
const struct cf_elf_header *cf_elf_get_header(const struct cf_elf *elf) { return &elf->header; }
const struct cf_elf_dynamic *cf_elf_get_dynamic(const struct cf_elf *elf) { return &elf->dynamic; }
size_t cf_elf_section_count(const struct cf_elf *elf) { return elf->n_sections; }
size_t cf_elf_segment_count(const struct cf_elf *elf) { return elf->n_segments; }

const struct cf_elf_section *cf_elf_section_at(const struct cf_elf *elf, size_t i)
{
    return elf_section_index(elf, i);
}

const struct cf_elf_segment *cf_elf_segment_at(const struct cf_elf *elf, size_t i)
{
    return i < elf->n_segments ? &elf->segments[i] : NULL;
}

const struct cf_elf_section *cf_elf_section_by_name(const struct cf_elf *elf, const char *name)
{
    for (size_t i = 0; i < elf->n_sections; i++)
        if (strcmp(elf->sections[i].name, name) == 0)
            return &elf->sections[i];
    return NULL;
}
