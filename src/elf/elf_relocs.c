/* The symbols the dynamic relocations name. glibc's relocation loop
 * (elf/do-rel.h, elf_machine_rela) resolves r_sym through the global scope
 * for every relocation whose r_sym is not 0 (RELATIVE, IRELATIVE and NONE
 * carry 0); a dynamic symbol no relocation names is never looked up. The
 * tables are the ones the loader processes, found by the dynamic tags
 * (DT_RELA, DT_REL, DT_JMPREL), not by section headers, which it never
 * reads: an object with none has no lookups at all. They are read through
 * a pread window: a 1 GB library's relocations
 * (libtorch_cpu.so: 8.5 MB) cost no mapped memory. The DT_RELACOUNT
 * RELATIVE relocations that lead the table (-z combreloc sorts them first;
 * glibc relocates them without a lookup) are not read at all: 9 MB of
 * libcublasLt's 9.0 MB .rela.dyn. */
#include "elf/elf_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "byte_source.h"
#include "elf/ord_read.h"

enum { RELOC_WINDOW = 64 * 1024, MAPPED_MAX = 1024 * 1024 };

/* One REL or RELA table: marks every r_sym after its `lead` leading RELATIVE relocations. */
static int mark_section(const struct cf_elf *elf, const struct cf_elf_section *sec, uint64_t lead, uint8_t *marks,
                        size_t n_marks, int *fd, cf_error *err)
{
    int wide = elf->header.elf_class == 64, big = elf->header.big_endian;
    int rela = sec->type == SHT_RELA;
    size_t entsize = rela ? (wide ? 24 : 12) : (wide ? 16 : 8);
    const uint8_t *data;
    size_t len;
    if (cf_elf_section_bytes(elf, sec, &data, &len, err) != 0)
        return -1;
    /* The leading RELATIVE relocations name no symbol. */
    uint64_t start = lead < len / entsize ? lead * entsize : len - len % entsize;
    /* Small tables from the mapping (no second open); large ones through the window. */
    struct cf_byte_source src;
    if (len - start <= MAPPED_MAX)
        cf_src_init_memory(&src, data, len);
    else
        cf_src_init_section(&src, elf, sec, data, len, RELOC_WINDOW, 0, fd);
    int rc = 0;
    size_t per_window = (src.mem ? len : RELOC_WINDOW) / entsize;
    for (size_t off = (size_t)start; per_window && off + entsize <= len;) {
        size_t want = (len - off) / entsize < per_window ? (len - off) / entsize : per_window;
        const uint8_t *p = cf_src_get(&src, off, want * entsize);
        if (!p) {
            rc = cf_src_read_error(&src, elf->path, (size_t)sec->offset + off, err);
            break;
        }
        if (wide && !big) {
            /* r_sym is the high half of r_info: one 32-bit load per entry */
            for (size_t i = 0; i < want; i++) {
                const uint8_t *q = p + i * entsize + 12;
                uint32_t sym = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
                if (sym && sym < n_marks)
                    marks[sym] = 1;
            }
        } else {
            for (size_t i = 0; i < want; i++) {
                uint64_t info = ord_u(p + i * entsize + (wide ? 8 : 4), wide ? 8 : 4, big);
                uint64_t sym = wide ? info >> 32 : info >> 8;
                if (sym && sym < n_marks)
                    marks[sym] = 1;
            }
        }
        off += want * entsize;
    }
    cf_src_release(&src);
    return rc;
}

int cf_elf_relocated_symbols(struct cf_elf *elf, const uint8_t **marks, size_t *n, cf_error *err)
{
    *marks = NULL;
    *n = 0;
    if (elf->relocs_loaded < 0)
        return cf_elf_fault(elf, err, "the dynamic relocations are unreadable (see the first error)");
    if (!elf->relocs_loaded) {
        elf->relocs_loaded = -1;
        const struct cf_elf_section *dynsym = NULL;
        for (size_t i = 0; i < elf->n_sections && !dynsym; i++)
            if (elf->sections[i].type == SHT_DYNSYM)
                dynsym = &elf->sections[i];
        if (dynsym) {
            size_t symsize = elf->header.elf_class == 64 ? 24 : 16;
            /* Sized by the bytes .dynsym has in the file, never by sh_size alone. */
            const uint8_t *syms;
            size_t syms_len;
            if (cf_elf_section_bytes(elf, dynsym, &syms, &syms_len, err) != 0)
                return -1;
            elf->n_relocated = syms_len / symsize;
            elf->relocated = cf_xcalloc(elf->n_relocated ? elf->n_relocated : 1, 1);
            int fd = -2;
            for (size_t i = 0; i < CF_ELF_DYN_RELOC_TABLES; i++) {
                struct cf_elf_section table;
                uint64_t lead;
                if (cf_elf_dynamic_reloc_table(elf, i, &table, &lead) != 0)
                    continue;
                if (mark_section(elf, &table, lead, elf->relocated, elf->n_relocated, &fd, err) != 0) {
                    if (fd >= 0)
                        close(fd);
                    return -1;
                }
            }
            if (fd >= 0)
                close(fd);
        }
        elf->relocs_loaded = 1;
    }
    *marks = elf->relocated;
    *n = elf->n_relocated;
    return 0;
}
