/* Shared between the loader-emulation sources (not a public header). */
#ifndef CCLFORGE_LDSO_INTERNAL_H
#define CCLFORGE_LDSO_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "cclforge/elf.h"
#include "cclforge/ldso.h"
#include "cclforge/strbuf.h"

/* One release's loader inputs derived from one CPU (ldso_hwcaps.c). */
struct ldso_view {
    const char *platform;    /* $PLATFORM and the platform subdirectory; NULL: none */
    struct strvec hwcaps;    /* glibc-hwcaps names, best first */
    struct strvec legacy;    /* legacy names in _dl_important_hwcaps order; empty from 2.37 */
    uint64_t hwcap;          /* dl_hwcap & hwcap_mask, as ld.so.cache entries spell it */
    uint64_t platform_mask;  /* _DL_HWCAP_PLATFORM */
    uint64_t platform_bit;   /* the platform's bit, ~0 when it has none */
    unsigned isa_1;          /* cpu_features->isa_1 (computed before tunables) */
};
/* kernel_platform: the AT_PLATFORM the kernel passes ("x86_64", "i686"). */
void cf_ldso_view_build(struct cf_glibc g, const struct cf_cpu_facts *cpu_before_tunables,
                        const struct cf_cpu_facts *cpu, unsigned machine, int elf_class,
                        const char *kernel_platform, struct ldso_view *v);
void cf_ldso_view_release(struct ldso_view *v);

/* path under root (only when path is absolute and root is not "/"). Caller frees. */
char *cf_ldso_rooted(const char *root, const char *path);
/* The host file behind a path under root (one cf_ldso_rooted made, or one
 * derived from $ORIGIN of a file there): symlinks resolved inside the root,
 * as the loader in a chroot would see them. Other paths, or no root: a copy.
 * NULL for a symlink loop. Caller frees. */
char *cf_ldso_host_path(const char *root, const char *path);

/* What the loader learns from a candidate's ELF header (glibc's open_verify). */
struct ldso_verdict {
    enum cf_ldso_reject reject;
    char *detail;   /* malloc'd or NULL */
    dev_t dev;
    ino_t ino;
    int fd;         /* with keep_fd and reject NONE: the file, still open (the caller closes it); else -1 */
};

/* Checks one candidate file for a loader of (elf_class, byte order, machine), reading only
 * its ELF header. */
void cf_ldso_verify(const char *path, int elf_class, int big_endian, unsigned machine, int keep_fd,
                    struct ldso_verdict *v);

#endif
