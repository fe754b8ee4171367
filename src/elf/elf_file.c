/* Opening an ELF file: validation of the ELF header and the section and program
 * header tables, section names, and bounds-checked access to section bytes.
 *
 * libelf (elfutils) does the byte-order and class conversion. It runs over our
 * own read-only mapping (elf_memory), so nothing is read until touched: a 1 GB
 * library costs its headers plus the sections asked for. libelf quietly treats a
 * truncated section table as "no sections", so the table bounds are checked here
 * first and reported as faults. */
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

const struct cf_elf_section *cf_elf_section_index(const struct cf_elf *elf, size_t index)
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
    const struct cf_elf_section *strtab = cf_elf_section_index(elf, link);
    if (!strtab || link == 0 || strtab->type != SHT_STRTAB)
        return cf_elf_fault(elf, err, "section %s: sh_link %u names no string table section (the file has %zu sections)",
                            user->name, link, elf->n_sections);
    return cf_elf_section_bytes(elf, strtab, &out->data, &out->len, err);
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
    unsigned cls = elf->data[EI_CLASS], order = elf->data[EI_DATA];
    if (cls != ELFCLASS32 && cls != ELFCLASS64)
        return cf_elf_fault(elf, err, "unknown ELF class %u in e_ident (expected 1 for ELF32 or 2 for ELF64)", cls);
    if (order != ELFDATA2LSB && order != ELFDATA2MSB)
        return cf_elf_fault(elf, err, "unknown byte order %u in e_ident (expected 1 little or 2 big endian)", order);
    size_t ehdr_size = cls == ELFCLASS32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
    if (elf->len < ehdr_size)
        return cf_elf_fault(elf, err, "truncated: %zu bytes, shorter than the %zu-byte ELF header", elf->len, ehdr_size);
    return 0;
}

static int load_sections(struct cf_elf *elf, const GElf_Ehdr *eh, cf_error *err)
{
    if (eh->e_shoff == 0)
        return 0; /* no section headers: legal for a stripped object */
    size_t entsize = gelf_fsize(elf->elf, ELF_T_SHDR, 1, EV_CURRENT);
    if (eh->e_shentsize != entsize)
        return cf_elf_fault(elf, err, "e_shentsize is %u, expected %zu for this ELF class", eh->e_shentsize, entsize);
    /* e_shnum == 0 with a table means the count sits in section 0's sh_size. */
    uint64_t first = eh->e_shnum ? eh->e_shnum : 1;
    if (!range_in_file(eh->e_shoff, first * entsize, elf->len))
        return cf_elf_fault(elf, err, "section header table (offset %#llx, %llu entries of %zu bytes) extends past the end of the file (%zu bytes); truncated?",
                            (unsigned long long)eh->e_shoff, (unsigned long long)first, entsize, elf->len);
    size_t n = 0;
    if (elf_getshdrnum(elf->elf, &n) != 0)
        return cf_elf_fault(elf, err, "cannot count section headers: %s", elf_errmsg(-1));
    if (n > CF_ELF_MAX_SECTIONS || !range_in_file(eh->e_shoff, (uint64_t)n * entsize, elf->len))
        return cf_elf_fault(elf, err, "section header table claims %zu entries, more than fit in the file (%zu bytes)", n, elf->len);

    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf->elf, &shstrndx) != 0)
        return cf_elf_fault(elf, err, "cannot find the section name table: %s", elf_errmsg(-1));
    if (shstrndx != SHN_UNDEF && shstrndx >= n)
        return cf_elf_fault(elf, err, "e_shstrndx %zu names no section (the file has %zu)", shstrndx, n);

    elf->sections = cf_xcalloc(n ? n : 1, sizeof *elf->sections);
    elf->n_sections = n;
    for (size_t i = 0; i < n; i++) {
        GElf_Shdr sh;
        Elf_Scn *scn = elf_getscn(elf->elf, i);
        if (!scn || !gelf_getshdr(scn, &sh))
            return cf_elf_fault(elf, err, "cannot read section header %zu: %s", i, elf_errmsg(-1));
        struct cf_elf_section *s = &elf->sections[i];
        s->name = "";
        s->type = sh.sh_type;
        s->flags = sh.sh_flags;
        s->addr = sh.sh_addr;
        s->offset = sh.sh_offset;
        s->size = sh.sh_size;
        s->link = sh.sh_link;
        s->info = sh.sh_info;
        s->entsize = sh.sh_entsize;
        s->addralign = sh.sh_addralign;
    }
    if (shstrndx == SHN_UNDEF)
        return 0;
    /* Names point into the mapping; a name out of bounds stays "". */
    struct cf_span names;
    const struct cf_elf_section *shstr = &elf->sections[shstrndx];
    if (shstr->type != SHT_STRTAB)
        return cf_elf_fault(elf, err, "e_shstrndx %zu is a section of type %u, not a string table", shstrndx, shstr->type);
    if (cf_elf_section_bytes(elf, shstr, &names.data, &names.len, err) != 0)
        return cf_error_prefix(err, "section name table: ");
    for (size_t i = 0; i < n; i++) {
        GElf_Shdr sh;
        if (!gelf_getshdr(elf_getscn(elf->elf, i), &sh))
            continue;
        const char *name = cf_span_string(&names, sh.sh_name);
        elf->sections[i].name = name ? name : "";
    }
    return 0;
}

static int load_segments(struct cf_elf *elf, const GElf_Ehdr *eh, cf_error *err)
{
    if (eh->e_phoff == 0)
        return 0;
    size_t entsize = gelf_fsize(elf->elf, ELF_T_PHDR, 1, EV_CURRENT);
    size_t n = 0;
    if (elf_getphdrnum(elf->elf, &n) != 0)
        return cf_elf_fault(elf, err, "cannot count program headers: %s", elf_errmsg(-1));
    if (n == 0)
        return 0;
    if (eh->e_phentsize != entsize)
        return cf_elf_fault(elf, err, "e_phentsize is %u, expected %zu for this ELF class", eh->e_phentsize, entsize);
    if (n > CF_ELF_MAX_SEGMENTS || !range_in_file(eh->e_phoff, (uint64_t)n * entsize, elf->len))
        return cf_elf_fault(elf, err, "program header table (offset %#llx, %zu entries) extends past the end of the file (%zu bytes); truncated?",
                            (unsigned long long)eh->e_phoff, n, elf->len);
    elf->segments = cf_xcalloc(n, sizeof *elf->segments);
    elf->n_segments = n;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf->elf, (int)i, &ph))
            return cf_elf_fault(elf, err, "cannot read program header %zu: %s", i, elf_errmsg(-1));
        struct cf_elf_segment *s = &elf->segments[i];
        s->type = ph.p_type;
        s->flags = ph.p_flags;
        s->offset = ph.p_offset;
        s->vaddr = ph.p_vaddr;
        s->filesz = ph.p_filesz;
        s->memsz = ph.p_memsz;
    }
    return 0;
}

static int open_image(struct cf_elf *elf, cf_error *err)
{
    if (check_identity(elf, err) != 0)
        return -1;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return cf_error_set(err, CF_ERR_INTERNAL, "libelf is too old for EV_CURRENT: %s", elf_errmsg(-1));
    /* elf_memory takes a non-const pointer, but a read-only image is never
     * written: libelf converts into its own buffers. The mapping is PROT_READ,
     * so a write would fault rather than corrupt the file. */
    elf->elf = elf_memory((char *)(uintptr_t)elf->data, elf->len);
    if (!elf->elf || elf_kind(elf->elf) != ELF_K_ELF)
        return cf_elf_fault(elf, err, "libelf cannot read it: %s", elf_errmsg(-1));
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf->elf, &eh))
        return cf_elf_fault(elf, err, "cannot read the ELF header: %s", elf_errmsg(-1));

    struct cf_elf_header *h = &elf->header;
    h->elf_class = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32;
    h->big_endian = eh.e_ident[EI_DATA] == ELFDATA2MSB;
    h->osabi = eh.e_ident[EI_OSABI];
    h->type = eh.e_type;
    h->machine = eh.e_machine;
    h->entry = eh.e_entry;
    h->file_size = elf->len;

    if (load_sections(elf, &eh, err) != 0 || load_segments(elf, &eh, err) != 0)
        return -1;
    return cf_elf_load_dynamic(elf, err);
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
    if (!cf_mmap_faulted(&elf->map))
        return 0;
    return cf_error_set(err, CF_ERR_IO,
                        "%s: the file was truncated while it was read (shorter than the %zu bytes mapped): "
                        "what was read is not reliable; inspect it again once it is complete",
                        elf->path, elf->map.len);
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
    if (elf->elf)
        elf_end(elf->elf);
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
    return cf_elf_section_index(elf, i);
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
