/* The loader's per-machine facts as tables: interpreter, $LIB, $PLATFORM and
 * the built-in system directories (glibc's SYSTEM_DIRS, from slibdir/libdir and
 * Debian's multiarch patch). */
#include "ldso_internal.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

/* One way a distribution lays out a machine's libraries. The first layout whose
 * probe file exists under the root wins; the last row for a machine is the
 * fallback. */
struct layout_row {
    unsigned machine;
    int elf_class;
    const char *probe;     /* a file that exists only in this layout; "" in the fallback */
    const char *interp;
    const char *multiarch;
    const char *lib;       /* $LIB */
    const char *platform;  /* $PLATFORM when the CPU is unknown */
    const char *dirs;      /* SYSTEM_DIRS, ':'-separated */
};

static const struct layout_row layouts[] = {
    /* Debian/Ubuntu multiarch (ld.so --help: /lib/<tuple>, /usr/lib/<tuple>, /lib, /usr/lib). */
    { EM_X86_64, 64, "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2",
      "x86_64-linux-gnu", "lib/x86_64-linux-gnu", "x86_64",
      "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib:/usr/lib" },
    /* Fedora/RHEL/SUSE/Arch: slibdir=/lib64, libdir=/usr/lib64. */
    { EM_X86_64, 64, "", "/lib64/ld-linux-x86-64.so.2", "x86_64-linux-gnu", "lib64", "x86_64",
      "/lib64:/usr/lib64" },
    { EM_X86_64, 32, "/lib/x86_64-linux-gnux32/ld-linux-x32.so.2", "/libx32/ld-linux-x32.so.2",
      "x86_64-linux-gnux32", "lib/x86_64-linux-gnux32", "x86_64",
      "/lib/x86_64-linux-gnux32:/usr/lib/x86_64-linux-gnux32:/lib:/usr/lib" },
    { EM_X86_64, 32, "", "/libx32/ld-linux-x32.so.2", "x86_64-linux-gnux32", "libx32", "x86_64",
      "/libx32:/usr/libx32" },
    /* Native Debian i386, then Debian's libc6-i386 multilib on amd64 (/lib32), then plain. */
    { EM_386, 32, "/lib/i386-linux-gnu/ld-linux.so.2", "/lib/ld-linux.so.2", "i386-linux-gnu",
      "lib/i386-linux-gnu", "i686", "/lib/i386-linux-gnu:/usr/lib/i386-linux-gnu:/lib:/usr/lib" },
    { EM_386, 32, "/lib32/ld-linux.so.2", "/lib/ld-linux.so.2", "i386-linux-gnu", "lib32", "i686",
      "/lib32:/usr/lib32:/lib:/usr/lib" },
    { EM_386, 32, "", "/lib/ld-linux.so.2", "i386-linux-gnu", "lib", "i686", "/lib:/usr/lib" },
    { EM_AARCH64, 64, "/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1", "/lib/ld-linux-aarch64.so.1",
      "aarch64-linux-gnu", "lib/aarch64-linux-gnu", "aarch64",
      "/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu:/lib:/usr/lib" },
    { EM_AARCH64, 64, "", "/lib/ld-linux-aarch64.so.1", "aarch64-linux-gnu", "lib64", "aarch64",
      "/lib64:/usr/lib64" },
    { EM_ARM, 32, "/lib/arm-linux-gnueabihf/ld-linux-armhf.so.3", "/lib/ld-linux-armhf.so.3",
      "arm-linux-gnueabihf", "lib/arm-linux-gnueabihf", "v7l",
      "/lib/arm-linux-gnueabihf:/usr/lib/arm-linux-gnueabihf:/lib:/usr/lib" },
    { EM_ARM, 32, "", "/lib/ld-linux-armhf.so.3", "arm-linux-gnueabihf", "lib", "v7l", "/lib:/usr/lib" },
    { EM_PPC64, 64, "/lib/powerpc64le-linux-gnu/ld64.so.2", "/lib64/ld64.so.2", "powerpc64le-linux-gnu",
      "lib/powerpc64le-linux-gnu", "power8",
      "/lib/powerpc64le-linux-gnu:/usr/lib/powerpc64le-linux-gnu:/lib:/usr/lib" },
    { EM_PPC64, 64, "", "/lib64/ld64.so.2", "powerpc64le-linux-gnu", "lib64", "power8", "/lib64:/usr/lib64" },
    { EM_S390, 64, "/lib/s390x-linux-gnu/ld64.so.1", "/lib/ld64.so.1", "s390x-linux-gnu",
      "lib/s390x-linux-gnu", "z196", "/lib/s390x-linux-gnu:/usr/lib/s390x-linux-gnu:/lib:/usr/lib" },
    { EM_S390, 64, "", "/lib/ld64.so.1", "s390x-linux-gnu", "lib64", "z196", "/lib64:/usr/lib64" },
    { EM_RISCV, 64, "/lib/riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1", "/lib/ld-linux-riscv64-lp64d.so.1",
      "riscv64-linux-gnu", "lib/riscv64-linux-gnu", "riscv64",
      "/lib/riscv64-linux-gnu:/usr/lib/riscv64-linux-gnu:/lib:/usr/lib" },
    { EM_RISCV, 64, "", "/lib/ld-linux-riscv64-lp64d.so.1", "riscv64-linux-gnu", "lib64/lp64d", "riscv64",
      "/lib64/lp64d:/usr/lib64/lp64d" },
};

char *cf_ldso_rooted(const char *root, const char *path)
{
    if (!root || !*root || path[0] != '/')
        return cf_strdup(path);
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 1 && root[0] == '/')
        return cf_strdup(path);
    return cf_asprintf("%.*s%s", (int)n, root, path);
}

char *cf_ldso_host_path(const char *root, const char *path)
{
    if (!root || !*root || strcmp(root, "/") == 0)
        return cf_strdup(path);
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (strncmp(path, root, n) != 0 || (path[n] != '/' && path[n] != '\0'))
        return cf_strdup(path);
    return cf_path_in_root(root, path[n] ? path + n : "/");
}

int cf_ldso_platform_for(unsigned machine, int elf_class, const char *root, struct cf_ldso_platform *p,
                         cf_error *err)
{
    memset(p, 0, sizeof *p);
    const struct layout_row *pick = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0] && !pick; i++) {
        const struct layout_row *row = &layouts[i];
        if (row->machine != machine || row->elf_class != elf_class)
            continue;
        if (!row->probe[0]) {
            pick = row;
            break;
        }
        char *rooted = cf_ldso_rooted(root, row->probe);
        char *probe = cf_ldso_host_path(root, rooted);
        if (probe && cf_path_exists(probe))
            pick = row;
        free(probe);
        free(rooted);
    }
    if (!pick)
        return cf_error_set(err, CF_ERR_USAGE,
                            "no glibc loader layout known for ELF machine %u (%s), ELFCLASS%d", machine,
                            cf_elf_machine_name(machine), elf_class);
    p->interp = pick->interp;
    p->multiarch = pick->multiarch;
    p->lib = pick->lib;
    p->platform = pick->platform;
    struct strvec dirs = STRVEC_INIT;
    cf_strvec_split(&dirs, pick->dirs, ":", 0);
    p->system_dirs = dirs.v;
    return 0;
}

void cf_ldso_platform_release(struct cf_ldso_platform *p)
{
    if (p->system_dirs) {
        for (char **d = p->system_dirs; *d; d++)
            free(*d);
        free(p->system_dirs);
    }
    memset(p, 0, sizeof *p);
}
