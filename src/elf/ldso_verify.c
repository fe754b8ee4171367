/* glibc's open_verify (elf/dl-load.c, 2.36) on a candidate path: read the ELF
 * header and program headers and decide whether the loader would use it, skip it and keep
 * searching (wrong class, wrong machine, missing), or stop with an error. */
#include "ldso_internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "elf/ord_read.h"

#define LIBC_ABI_MAX 4 /* DEFAULT, UNIQUE, IFUNC, ABSOLUTE (libc-abis) */

static void fatal(struct ldso_verdict *v, const char *what)
{
    v->reject = CF_LDSO_REJ_FATAL;
    v->detail = cf_strdup(what);
}

/* open_verify's checks of the ELF header h (at least an Ehdr's worth). */
static void check_header(const uint8_t *h, int elf_class, int want_big, unsigned machine, struct ldso_verdict *v)
{
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
    if (h[EI_DATA] != (want_big ? ELFDATA2MSB : ELFDATA2LSB))
        return fatal(v, want_big ? "ELF file data encoding not big-endian" : "ELF file data encoding not little-endian");
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
    uint16_t type = ord16(h + 16, want_big);
    uint16_t file_machine = ord16(h + 18, want_big);
    uint32_t version = ord32(h + 20, want_big);
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
    uint16_t phentsize = ord16(h + (elf_class == 64 ? 54 : 42), want_big);
    if (phentsize != (elf_class == 64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
        return fatal(v, "ELF file's phentsize not the expected size");
    v->reject = CF_LDSO_REJ_NONE;
}


/* What open_verify and _dl_map_object_from_fd need from the rest of the file:
 * the program header table must be readable ("cannot read file data"), and
 * every PT_LOAD must lie inside the file, or mapping it and touching its
 * bytes dies of SIGBUS. A truncated library is a load error, never an object. */
static void check_segments(int fd, uint64_t file_size, const uint8_t *h, int elf_class, int big,
                           struct ldso_verdict *v)
{
    int wide = elf_class == 64;
    uint64_t phoff = wide ? ord64(h + 32, big) : ord32(h + 28, big);
    uint16_t phnum = ord16(h + (wide ? 56 : 44), big);
    size_t entsize = wide ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    size_t maplength = (size_t)phnum * entsize;
    if (phoff > file_size || maplength > file_size - phoff)
        return fatal(v, "cannot read file data");
    uint8_t *ph = cf_xmalloc(maplength ? maplength : 1);
    if (pread(fd, ph, maplength, (off_t)phoff) != (ssize_t)maplength) {
        free(ph);
        return fatal(v, "cannot read file data");
    }
    for (uint16_t i = 0; i < phnum; i++) {
        const uint8_t *p = ph + (size_t)i * entsize;
        if (ord32(p, big) != PT_LOAD)
            continue;
        uint64_t off = wide ? ord64(p + 8, big) : ord32(p + 4, big);
        uint64_t filesz = wide ? ord64(p + 32, big) : ord32(p + 16, big);
        if (off > file_size || filesz > file_size - off) {
            v->reject = CF_LDSO_REJ_FATAL;
            v->detail = cf_asprintf("file too short: segment %u (offset %#llx, %llu bytes) ends past the end of the "
                                    "file (%llu bytes); the loader would die of SIGBUS mapping it",
                                    (unsigned)i, (unsigned long long)off, (unsigned long long)filesz,
                                    (unsigned long long)file_size);
            break;
        }
    }
    free(ph);
}

void cf_ldso_verify(const char *path, int elf_class, int big_endian, unsigned machine, int keep_fd,
                    struct ldso_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->fd = -1;
    /* Never open what is not a regular file: glibc's loader would block on a
     * FIFO, and opening a device may act on it. What glibc would then do
     * decides the verdict: a directory or device fails its read (fatal), a
     * socket fails its open with ENXIO (the search list is abandoned). */
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        v->reject = e == ENOENT || e == ENOTDIR ? CF_LDSO_REJ_NOT_FOUND : e == EACCES ? CF_LDSO_REJ_NO_ACCESS : CF_LDSO_REJ_OTHER_ERROR;
        if (v->reject == CF_LDSO_REJ_OTHER_ERROR)
            v->detail = cf_strdup(strerror(e));
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        v->dev = st.st_dev;
        v->ino = st.st_ino;
        if (S_ISSOCK(st.st_mode)) {
            v->reject = CF_LDSO_REJ_OTHER_ERROR;
            v->detail = cf_asprintf("%s (a socket: open fails with ENXIO)", strerror(ENXIO));
        } else if (S_ISFIFO(st.st_mode)) {
            v->reject = CF_LDSO_REJ_FATAL;
            v->detail = cf_strdup("a FIFO (named pipe), not a library: the loader would block opening it (not opened)");
        } else if (S_ISDIR(st.st_mode)) {
            v->reject = CF_LDSO_REJ_FATAL;
            v->detail = cf_asprintf("cannot read file data: %s", strerror(EISDIR));
        } else {
            v->reject = CF_LDSO_REJ_FATAL;
            v->detail = cf_asprintf("%s, not a library (not opened)", cf_file_kind_name(st.st_mode));
        }
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        v->reject = e == ENOENT ? CF_LDSO_REJ_NOT_FOUND : e == EACCES ? CF_LDSO_REJ_NO_ACCESS : CF_LDSO_REJ_OTHER_ERROR;
        if (v->reject == CF_LDSO_REJ_OTHER_ERROR)
            v->detail = cf_strdup(strerror(e));
        return;
    }
    if (fstat(fd, &st) == 0) {
        v->dev = st.st_dev;
        v->ino = st.st_ino;
    }
    if (!S_ISREG(st.st_mode)) { /* swapped since the stat */
        close(fd);
        v->reject = CF_LDSO_REJ_FATAL;
        v->detail = cf_asprintf("%s, not a library", cf_file_kind_name(st.st_mode));
        return;
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
    if (got < want) {
        v->reject = CF_LDSO_REJ_FATAL;
        v->detail = read_errno ? cf_asprintf("cannot read file data: %s", strerror(read_errno)) : cf_strdup("file too short");
    } else {
        check_header(h, elf_class, big_endian, machine, v);
        if (v->reject == CF_LDSO_REJ_NONE)
            check_segments(fd, (uint64_t)st.st_size, h, elf_class, big_endian, v);
    }
    if (keep_fd && v->reject == CF_LDSO_REJ_NONE)
        v->fd = fd; /* the loader maps what it verified: so does the caller */
    else
        close(fd);
}
