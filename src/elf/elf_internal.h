/* The opened-file state shared by the ELF reader's source files (not public). */
#ifndef CCLFORGE_ELF_INTERNAL_H
#define CCLFORGE_ELF_INTERNAL_H

#include <elf.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "elf/elf_layout.h"

/* Upper bounds that keep a hostile header from asking for absurd work. Real
 * files stay far below them (libtorch_cuda.so: ~40 sections, ~60k symbols). */
#define CF_ELF_MAX_SECTIONS 65536u
#define CF_ELF_MAX_SEGMENTS 65536u
#define CF_ELF_MAX_DYN_ENTRIES (1u << 20)
#define CF_ELF_MAX_SYMBOLS (1u << 22)

/* A run of bytes inside the file: a string table or a section's contents. */
struct cf_span {
    const uint8_t *data;
    size_t len;
};

/* The dynamic tags that locate the loader's tables (address, size or count
 * each), kept as the last entry of each tag gives them, as glibc's
 * elf_get_dynamic_info keeps them; elf_dynamic_view.c reads an object
 * without section headers through them. */
enum cf_dyn_slot {
    CF_DYN_STRTAB, CF_DYN_STRSZ, CF_DYN_SYMTAB, CF_DYN_HASH, CF_DYN_GNU_HASH, CF_DYN_VERSYM,
    CF_DYN_VERNEED, CF_DYN_VERNEEDNUM, CF_DYN_VERDEF, CF_DYN_VERDEFNUM,
    CF_DYN_RELA, CF_DYN_RELASZ, CF_DYN_RELACOUNT, CF_DYN_REL, CF_DYN_RELSZ, CF_DYN_RELCOUNT,
    CF_DYN_JMPREL, CF_DYN_PLTRELSZ, CF_DYN_PLTREL,
    CF_DYN_SLOTS
};
struct cf_dyn_tables {
    uint64_t value[CF_DYN_SLOTS];
    uint32_t present; /* bit (1u << slot) per tag seen */
};

struct cf_elf {
    char *path;               /* label for errors: the path or the memory name */
    struct cf_mmap map;       /* owned mapping (cf_elf_open) or empty (open_memory) */
    const uint8_t *data;      /* the whole file */
    size_t len;
    const struct elf_layout *layout; /* field positions for this class */

    struct cf_elf_header header;
    struct cf_elf_section *sections;
    size_t n_sections;
    struct cf_elf_segment *segments;
    size_t n_segments;

    struct cf_elf_dynamic dynamic;
    const char **needed;      /* storage behind dynamic.needed */
    struct cf_dyn_tables dyn_tables;

    /* Loaded lazily by cf_elf_dynsyms / cf_elf_verdefs / cf_elf_verneeds. */
    int versions_loaded;
    const char **verdef_names;  /* excluding the base entry */
    size_t n_verdefs;
    struct cf_elf_verneed *verneeds;
    size_t n_verneeds;
    /* Version index (vd_ndx / vna_other) to name and file, for symbols. */
    const char **index_name;
    const char **index_file;
    size_t n_index;

    int syms_loaded;
    struct cf_elf_symbol *syms;
    size_t n_syms;

    int relocs_loaded;        /* 1 done, -1 failed (elf_relocs.c) */
    uint8_t *relocated;       /* per .dynsym index: a dynamic relocation names it */
    size_t n_relocated;
};

/* Sets err to "<file>: <fault>" and returns -1. */
int cf_elf_fault(const struct cf_elf *elf, cf_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The bytes of a string table section named by another section's sh_link; errors
 * name `user` (the section whose link it is) when the link is bad. */
int cf_elf_linked_strtab(const struct cf_elf *elf, const struct cf_elf_section *user, uint32_t link,
                         struct cf_span *out, cf_error *err);
/* A NUL-terminated string at offset inside span, or NULL when out of bounds. */
const char *cf_span_string(const struct cf_span *span, uint64_t offset);

/* 1 when elf's bytes are its own read-only mapping of a file (cf_elf_open),
 * 0 for a caller's memory image (cf_elf_open_memory). */
int cf_elf_owns_mapping(const struct cf_elf *elf);

/* A section's bytes as whole entries of entsize bytes: a size that is not a
 * multiple of entsize is a fault naming the section. */
int cf_elf_section_entries(const struct cf_elf *elf, const struct cf_elf_section *sec, size_t entsize,
                           struct cf_span *out, size_t *count, cf_error *err);

/* Reads the dynamic section and PT_INTERP into elf->dynamic (called by open). */
int cf_elf_load_dynamic(struct cf_elf *elf, cf_error *err);

/* The file bytes backing virtual address addr, through the PT_LOAD
 * segments: up to max_len of them, to the end of the segment's file bytes.
 * -1 when no segment's file bytes hold addr. */
int cf_elf_vaddr_span(const struct cf_elf *elf, uint64_t addr, uint64_t max_len, struct cf_span *out);

/* For an object without section headers: the sections the loader's tables
 * would have, made from the dynamic tags (elf_dynamic_view.c). Tables whose
 * address maps to no file bytes are left out; never fails. */
void cf_elf_sections_from_dynamic(struct cf_elf *elf);

/* The relocation tables glibc processes, whatever the section headers say:
 * DT_RELA, DT_REL and DT_JMPREL (of DT_PLTREL's kind), each as a section
 * over its file bytes (sh_link 0), and how many RELATIVE relocations lead
 * it (DT_RELACOUNT, DT_RELCOUNT; 0 for DT_JMPREL). -1 when table i is
 * absent or maps to no file bytes. */
enum { CF_ELF_DYN_RELOC_TABLES = 3 };
int cf_elf_dynamic_reloc_table(const struct cf_elf *elf, size_t i, struct cf_elf_section *out,
                               uint64_t *leading_relative);

#endif
