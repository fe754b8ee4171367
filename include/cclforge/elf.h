/* Reading one ELF file without executing or loading it: header, sections, the
 * dynamic section, dynamic symbols and symbol versions. Every read of file bytes
 * is bounds-checked; malformed input yields an error naming the file and fault. */
#ifndef CCLFORGE_ELF_H
#define CCLFORGE_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_elf; /* an opened file (read-only mapping); opaque */

struct cf_elf_header {
    int elf_class;      /* 32 or 64 */
    int big_endian;     /* 0 little, 1 big */
    unsigned osabi;
    unsigned type;      /* ET_EXEC, ET_DYN, ... */
    unsigned machine;   /* EM_X86_64, ... */
    uint64_t entry;
    size_t file_size;
};

struct cf_elf_section {
    const char *name;   /* "" when unnamed or the name is out of bounds */
    uint32_t type;      /* SHT_* */
    uint64_t flags;     /* SHF_* */
    uint64_t addr;
    uint64_t offset;    /* file offset */
    uint64_t size;
    uint32_t link;      /* sh_link */
    uint32_t info;      /* sh_info */
    uint64_t entsize;   /* sh_entsize */
    uint64_t addralign; /* sh_addralign */
};

/* One program header (segment). */
struct cf_elf_segment {
    uint32_t type;      /* PT_* */
    uint32_t flags;     /* PF_* */
    uint64_t offset;    /* file offset */
    uint64_t vaddr;
    uint64_t filesz;
    uint64_t memsz;
};

struct cf_elf_dynamic {
    const char *soname;          /* NULL if absent */
    const char *const *needed;   /* n_needed entries, in file order */
    size_t n_needed;
    const char *rpath;           /* DT_RPATH, NULL if absent */
    const char *runpath;         /* DT_RUNPATH, NULL if absent */
    uint64_t flags;              /* DT_FLAGS */
    uint64_t flags_1;            /* DT_FLAGS_1 (DF_1_NODEFLIB, ...) */
    int has_dynamic;             /* 0 for static executables and non-dynamic objects */
    const char *interp;          /* PT_INTERP path, NULL if absent */
};

enum cf_sym_bind { CF_BIND_LOCAL, CF_BIND_GLOBAL, CF_BIND_WEAK, CF_BIND_GNU_UNIQUE, CF_BIND_OTHER };

struct cf_elf_symbol {
    const char *name;
    int defined;              /* st_shndx != SHN_UNDEF */
    enum cf_sym_bind bind;
    unsigned type;            /* STT_* */
    unsigned visibility;      /* STV_* */
    const char *version;      /* from .gnu.version + verdef/verneed; NULL when unversioned */
    const char *version_file; /* for an undefined symbol: the verneed file (e.g. "libc.so.6") */
    int version_hidden;       /* defined with '@' rather than '@@' */
    uint64_t value;           /* st_value: the address for a defined symbol */
    uint64_t size;            /* st_size */
};

struct cf_elf_verneed {
    const char *file;             /* e.g. "libc.so.6" */
    const char *const *versions;  /* e.g. "GLIBC_2.34" */
    const int *weak;              /* VER_FLG_WEAK per version */
    size_t n_versions;
};

/* Opens and validates path. The mapping stays valid until cf_elf_close. */
int cf_elf_open(const char *path, struct cf_elf **out, cf_error *err);
/* Same over a descriptor open on path (taken over: closed once mapped, or on
 * failure); fd < 0 opens path. */
int cf_elf_open_fd(int fd, const char *path, struct cf_elf **out, cf_error *err);
/* Same, over a caller-owned buffer (fuzzing, embedded images). `name` labels errors. */
int cf_elf_open_memory(const void *data, size_t len, const char *name, struct cf_elf **out, cf_error *err);
void cf_elf_close(struct cf_elf *elf);
/* 0 while the mapped file is as it was opened; -1 with err ("<path>: the file
 * was truncated while it was read ...") once a read found pages gone. The
 * reads themselves never fault (cf_mmap); check this after using the bytes. */
int cf_elf_check_intact(const struct cf_elf *elf, cf_error *err);

const char *cf_elf_path(const struct cf_elf *elf);
/* The opened file's identity (device, inode, size, mtime and ctime in ns)
 * from the fstat of its open: what a cache of per-file results keys on.
 * -1 for a memory image. */
int cf_elf_file_id(const struct cf_elf *elf, struct cf_file_id *id);
const struct cf_elf_header *cf_elf_get_header(const struct cf_elf *elf);
const struct cf_elf_dynamic *cf_elf_get_dynamic(const struct cf_elf *elf);

size_t cf_elf_section_count(const struct cf_elf *elf);
const struct cf_elf_section *cf_elf_section_at(const struct cf_elf *elf, size_t i);
const struct cf_elf_section *cf_elf_section_by_name(const struct cf_elf *elf, const char *name);
size_t cf_elf_segment_count(const struct cf_elf *elf);
const struct cf_elf_segment *cf_elf_segment_at(const struct cf_elf *elf, size_t i);

/* The bytes of a section, bounds-checked against the file; SHT_NOBITS gives len 0.
 * Returns -1 with err set if the section lies outside the file. */
int cf_elf_section_bytes(const struct cf_elf *elf, const struct cf_elf_section *sec,
                         const uint8_t **data, size_t *len, cf_error *err);

/* Dynamic symbols (.dynsym) with versions resolved. Loaded lazily on first call. */
int cf_elf_dynsyms(struct cf_elf *elf, const struct cf_elf_symbol **syms, size_t *n, cf_error *err);
/* Which dynamic symbols the object's dynamic relocations name: glibc looks
 * a symbol up only while processing a relocation that refers to it, so an
 * undefined symbol no relocation names is never looked up and never
 * "undefined" (ldd -r). The relocations are those the dynamic tags locate
 * (DT_RELA, DT_REL, DT_JMPREL), as the loader finds them. *marks[i] is 1
 * for .dynsym index i (0 is the null symbol; cf_elf_dynsyms' entry k is
 * index k + 1); *n is 0 without a dynamic symbol table. */
int cf_elf_relocated_symbols(struct cf_elf *elf, const uint8_t **marks, size_t *n, cf_error *err);
/* Version definitions this object provides (verdef names, excluding the base/file entry). */
int cf_elf_verdefs(struct cf_elf *elf, const char *const **names, size_t *n, cf_error *err);
/* Version requirements (verneed). */
int cf_elf_verneeds(struct cf_elf *elf, const struct cf_elf_verneed **needs, size_t *n, cf_error *err);

/* Names for display: "x86-64", "AArch64", ...; "ELF64 LSB". */
const char *cf_elf_machine_name(unsigned machine);
const char *cf_elf_kind_name(const struct cf_elf_header *header);

#ifdef __cplusplus
}
#endif
#endif
