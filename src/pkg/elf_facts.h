/* The few facts about an ELF file that packaging needs (NEEDED, RPATH/RUNPATH,
 * SONAME, the highest GLIBC_ version required, exported symbols), read with
 * the project ELF reader (cclforge/elf.h) without loading or running the file.
 * Internal to src/pkg and src/bridge. */
#ifndef CCLFORGE_PKG_ELF_FACTS_H
#define CCLFORGE_PKG_ELF_FACTS_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

struct elf_facts {
    int is_elf;
    unsigned machine;        /* EM_* */
    unsigned type;           /* ET_DYN, ET_EXEC, ... */
    int is_64;
    int big_endian;
    char *soname;
    struct strvec needed;
    struct strvec rpath;     /* DT_RPATH then DT_RUNPATH entries, split on ':', empty ones kept */
    int has_runpath;
    int glibc_max;           /* 2*1000+X of the highest GLIBC_2.X in verneed, 0 none */
    struct strvec versions;  /* every version needed (verneed), "GLIBCXX_3.4.21", but those of the
                                dynamic loader itself (ld-linux*, ld64.so.*), as auditwheel counts them */
    struct strvec pyinit;    /* exported PyInit_* symbols (a Python extension module's init) */
};

/* 1 when the bytes start with the ELF magic. */
int cf_elf_facts_is_elf(const void *data, size_t len);
/* Reads facts from a buffer (name labels errors). Not-ELF is not an error: is_elf = 0. */
int cf_elf_facts_read_memory(const void *data, size_t len, const char *name, struct elf_facts *f, cf_error *err);
int cf_elf_facts_read_file(const char *path, struct elf_facts *f, cf_error *err);
void cf_elf_facts_release(struct elf_facts *f);
/* 1 when a defined, exported (global/weak, default/protected) dynamic symbol's
 * name contains `needle`; 0 when none does; -1 on a read error. */
int cf_elf_file_defines_symbol(const char *path, const char *needle, int exact, cf_error *err);
/* 1 when an RPATH/RUNPATH entry starts at $ORIGIN as the loader expands it
 * (cclforge/dst.h): "$ORIGIN", "${ORIGIN}/../lib"; not "$ORIGINAL", "lib/$ORIGIN". */
int cf_elf_rpath_is_origin_relative(const char *entry);
/* "GLIBC_2.28" -> 2028; 0 for anything else. */
int cf_elf_glibc_version_code(const char *version_name);
/* "x86_64", "aarch64", "ppc64le", ... for wheel platform tags; NULL when unknown. */
const char *cf_elf_machine_wheel_arch(unsigned machine, int big_endian);
/* The undefined dynamic symbols of path that need `version` (up to max, joined by ", ") into out. */
int cf_elf_symbols_needing(const char *path, const char *version, size_t max, struct strbuf *out, cf_error *err);
/* 1 when soname is a system library a manylinux wheel may need without
 * bundling it (the newest policy's whitelist, src/pkg/manylinux_policy.h). */
int cf_elf_is_manylinux_system_lib(const char *soname);
/* 1 for the GPU driver libraries that must never be bundled (libcuda.so.1, ...). */
int cf_elf_is_gpu_driver_lib(const char *soname);

#endif
