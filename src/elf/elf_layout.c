/* The ELF32 and ELF64 field tables of elf_layout.h, from <elf.h>'s structs. */
#include "elf/elf_layout.h"

#include <elf.h>

#define FIELD(type, member) { offsetof(type, member), sizeof(((type *)0)->member) }

#define LAYOUT(W)                                                                                              \
    {                                                                                                          \
        .ehdr = { sizeof(Elf##W##_Ehdr), FIELD(Elf##W##_Ehdr, e_type), FIELD(Elf##W##_Ehdr, e_machine),        \
                  FIELD(Elf##W##_Ehdr, e_entry), FIELD(Elf##W##_Ehdr, e_phoff), FIELD(Elf##W##_Ehdr, e_shoff), \
                  FIELD(Elf##W##_Ehdr, e_phentsize), FIELD(Elf##W##_Ehdr, e_phnum),                            \
                  FIELD(Elf##W##_Ehdr, e_shentsize), FIELD(Elf##W##_Ehdr, e_shnum),                            \
                  FIELD(Elf##W##_Ehdr, e_shstrndx) },                                                          \
        .shdr = { sizeof(Elf##W##_Shdr), FIELD(Elf##W##_Shdr, sh_name), FIELD(Elf##W##_Shdr, sh_type),         \
                  FIELD(Elf##W##_Shdr, sh_flags), FIELD(Elf##W##_Shdr, sh_addr),                               \
                  FIELD(Elf##W##_Shdr, sh_offset), FIELD(Elf##W##_Shdr, sh_size),                              \
                  FIELD(Elf##W##_Shdr, sh_link), FIELD(Elf##W##_Shdr, sh_info),                                \
                  FIELD(Elf##W##_Shdr, sh_addralign), FIELD(Elf##W##_Shdr, sh_entsize) },                      \
        .phdr = { sizeof(Elf##W##_Phdr), FIELD(Elf##W##_Phdr, p_type), FIELD(Elf##W##_Phdr, p_flags),          \
                  FIELD(Elf##W##_Phdr, p_offset), FIELD(Elf##W##_Phdr, p_vaddr),                               \
                  FIELD(Elf##W##_Phdr, p_filesz), FIELD(Elf##W##_Phdr, p_memsz) },                             \
        .dyn = { sizeof(Elf##W##_Dyn), FIELD(Elf##W##_Dyn, d_tag), FIELD(Elf##W##_Dyn, d_un.d_val) },          \
        .sym = { sizeof(Elf##W##_Sym), FIELD(Elf##W##_Sym, st_name), FIELD(Elf##W##_Sym, st_info),             \
                 FIELD(Elf##W##_Sym, st_other), FIELD(Elf##W##_Sym, st_shndx),                                 \
                 FIELD(Elf##W##_Sym, st_value), FIELD(Elf##W##_Sym, st_size) },                                \
        .verdef = { sizeof(Elf##W##_Verdef), FIELD(Elf##W##_Verdef, vd_flags), FIELD(Elf##W##_Verdef, vd_ndx),  \
                    FIELD(Elf##W##_Verdef, vd_cnt), FIELD(Elf##W##_Verdef, vd_aux),                             \
                    FIELD(Elf##W##_Verdef, vd_next) },                                                          \
        .verdaux = { sizeof(Elf##W##_Verdaux), FIELD(Elf##W##_Verdaux, vda_name) },                             \
        .verneed = { sizeof(Elf##W##_Verneed), FIELD(Elf##W##_Verneed, vn_cnt), FIELD(Elf##W##_Verneed, vn_file), \
                     FIELD(Elf##W##_Verneed, vn_aux), FIELD(Elf##W##_Verneed, vn_next) },                       \
        .vernaux = { sizeof(Elf##W##_Vernaux), FIELD(Elf##W##_Vernaux, vna_flags),                              \
                     FIELD(Elf##W##_Vernaux, vna_other), FIELD(Elf##W##_Vernaux, vna_name),                     \
                     FIELD(Elf##W##_Vernaux, vna_next) },                                                       \
    }

const struct elf_layout cf_elf_layouts[2] = { LAYOUT(32), LAYOUT(64) };
