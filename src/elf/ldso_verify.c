/* glibc's open_verify (elf/dl-load.c, 2.36) on a candidate path: read the ELF
 * header only and decide whether the loader would use it, skip it and keep
 * searching (wrong class, wrong machine, missing), or stop with an error. */
#include "ldso_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/strbuf.h"

#define LIBC_ABI_MAX 4 /* DEFAULT, UNIQUE, IFUNC, ABSOLUTE (libc-abis) */

static uint16_t get16(const uint8_t *p, int big) { return big ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]); }
static uint32_t get32(const uint8_t *p, int big)
{
    return big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
               : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void fatal(struct ldso_verdict *v, const char *what)
{
    v->reject = CF_LDSO_REJ_FATAL;
    v->detail = cf_strdup(what);
}

void cf_ldso_verify(const char *path, int elf_class, int big_endian, unsigned machine, struct ldso_verdict *v)
{
    memset(v, 0, sizeof *v);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        v->reject = e == ENOENT ? CF_LDSO_REJ_NOT_FOUND : e == EACCES ? CF_LDSO_REJ_NO_ACCESS : CF_LDSO_REJ_OTHER_ERROR;
        if (v->reject == CF_LDSO_REJ_OTHER_ERROR)
            v->detail = cf_strdup(strerror(e));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) == 0) {
        v->dev = st.st_dev;
        v->ino = st.st_ino;
    }
    uint8_t h[64];
    size_t want = elf_class == 64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
    size_t got = 0;
    int read_errno = 0;
    while (got < want) {
        ssize_t n = read(fd, h + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            read_errno = n < 0 ? errno : 0;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (got < want) {
        if (read_errno) {
            struct strbuf sb = STRBUF_INIT;
            cf_sb_addf(&sb, "cannot read file data: %s", strerror(read_errno));
            v->reject = CF_LDSO_REJ_FATAL;
            v->detail = cf_sb_detach(&sb);
        } else {
            fatal(v, "file too short");
        }
        return;
    }
    int want_big = big_endian;
    if (memcmp(h, ELFMAG, SELFMAG) != 0)
        return fatal(v, "invalid ELF header");
    int file_class = h[EI_CLASS] == ELFCLASS64 ? 64 : h[EI_CLASS] == ELFCLASS32 ? 32 : 0;
    if (file_class != elf_class) {
        /* Not fatal: on biarch systems 32- and 64-bit libraries share search paths. */
        struct strbuf sb = STRBUF_INIT;
        cf_sb_addf(&sb, "ELFCLASS%d, need ELFCLASS%d", file_class, elf_class);
        v->reject = CF_LDSO_REJ_WRONG_CLASS;
        v->detail = cf_sb_detach(&sb);
        return;
    }
    /* The emulated loader expects the root's byte order. */
    if (h[EI_DATA] != (big_endian ? ELFDATA2MSB : ELFDATA2LSB))
        return fatal(v, big_endian ? "ELF file data encoding not big-endian" : "ELF file data encoding not little-endian");
    if (h[EI_VERSION] != EV_CURRENT)
        return fatal(v, "ELF file version ident does not match current one");
    unsigned osabi = h[EI_OSABI], abiversion = h[EI_ABIVERSION];
    if (osabi != ELFOSABI_SYSV && osabi != ELFOSABI_GNU)
        return fatal(v, "ELF file OS ABI invalid");
    if (!((osabi == ELFOSABI_GNU && abiversion < LIBC_ABI_MAX) || abiversion == 0))
        return fatal(v, "ELF file ABI version invalid");
    for (size_t i = EI_PAD; i < EI_NIDENT; i++)
        if (h[i] != 0)
            return fatal(v, "nonzero padding in e_ident");
    uint16_t type = get16(h + 16, want_big);
    uint16_t file_machine = get16(h + 18, want_big);
    uint32_t version = get32(h + 20, want_big);
    if (version != EV_CURRENT)
        return fatal(v, "ELF file version does not match current one");
    if (file_machine != machine) {
        struct strbuf sb = STRBUF_INIT;
        cf_sb_addf(&sb, "machine %s, need %s", cf_elf_machine_name(file_machine), cf_elf_machine_name(machine));
        v->reject = CF_LDSO_REJ_WRONG_MACHINE;
        v->detail = cf_sb_detach(&sb);
        return;
    }
    if (type != ET_DYN && type != ET_EXEC)
        return fatal(v, "only ET_DYN and ET_EXEC can be loaded");
    uint16_t phentsize = get16(h + (elf_class == 64 ? 54 : 42), want_big);
    if (phentsize != (elf_class == 64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
        return fatal(v, "ELF file's phentsize not the expected size");
    v->reject = CF_LDSO_REJ_NONE;
}
