/* Shared between the loader-emulation sources (not a public header). */
#ifndef CCLFORGE_LDSO_INTERNAL_H
#define CCLFORGE_LDSO_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "cclforge/elf.h"
#include "cclforge/ldso.h"

void cf_ldso_host_cpu(struct cf_ldso_cpu *cpu);

/* path under root (only when path is absolute and root is not "/"). Caller frees. */
char *cf_ldso_rooted(const char *root, const char *path);

/* What the loader learns from a candidate's ELF header (glibc's open_verify). */
struct ldso_verdict {
    enum cf_ldso_reject reject;
    char *detail;   /* malloc'd or NULL */
    dev_t dev;
    ino_t ino;
};

/* Checks one candidate file for a loader of (elf_class, byte order, machine), reading only
 * its ELF header. */
void cf_ldso_verify(const char *path, int elf_class, int big_endian, unsigned machine, struct ldso_verdict *v);

#endif
