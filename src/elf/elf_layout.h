/* Where each field of the ELF structures the reader uses sits in an ELF32 and
 * an ELF64 file, so that headers, dynamic entries and symbols are read straight
 * from the mapping in the file's own byte order, as glibc's loader reads them,
 * with no per-class code paths. The offsets and widths are taken from
 * <elf.h>'s structs (offsetof, sizeof), not typed in. */
#ifndef CCLFORGE_ELF_LAYOUT_H
#define CCLFORGE_ELF_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "elf/ord_read.h"

struct elf_field {
    uint8_t at;    /* byte offset inside the entry */
    uint8_t bytes; /* 1, 2, 4 or 8 */
};

struct elf_layout {
    struct {
        size_t size;
        struct elf_field type, machine, entry, phoff, shoff, phentsize, phnum, shentsize, shnum, shstrndx;
    } ehdr;
    struct {
        size_t size;
        struct elf_field name, type, flags, addr, offset, bytes, link, info, addralign, entsize;
    } shdr;
    struct {
        size_t size;
        struct elf_field type, flags, offset, vaddr, filesz, memsz;
    } phdr;
    struct {
        size_t size;
        struct elf_field tag, val;
    } dyn;
    struct {
        size_t size;
        struct elf_field name, info, other, shndx, value, bytes;
    } sym;
    /* GNU symbol versioning: the same in both classes, kept here so that
     * every structure is read one way. */
    struct {
        size_t size;
        struct elf_field flags, ndx, cnt, aux, next;
    } verdef;
    struct {
        size_t size;
        struct elf_field name;
    } verdaux;
    struct {
        size_t size;
        struct elf_field cnt, file, aux, next;
    } verneed;
    struct {
        size_t size;
        struct elf_field flags, other, name, next;
    } vernaux;
};

/* [0] ELF32, [1] ELF64. */
extern const struct elf_layout cf_elf_layouts[2];

/* The field of one entry (bounds checked by the caller). */
static inline __attribute__((always_inline)) uint64_t elf_get(const uint8_t *entry, struct elf_field f, int big)
{
    return ord_u(entry + f.at, f.bytes, big);
}

#endif
