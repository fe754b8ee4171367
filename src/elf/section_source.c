/* Choosing how to read a section: pread through a window (memory fixed,
 * nothing mapped) when the file is there, the mapped bytes otherwise. */
#include "byte_source.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"

enum { CHECK_BYTES = 16 };

static int open_same_file(const struct cf_elf *elf, int scattered)
{
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    int fd = cf_open_regular(cf_elf_path(elf), NULL);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != h->file_size) {
        close(fd);
        return -1;
    }
    if (scattered)
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    return fd;
}

void cf_src_init_section(struct cf_byte_source *s, const struct cf_elf *elf,
                         const struct cf_elf_section *sec, const uint8_t *data, size_t len,
                         size_t win_cap, int scattered, int *fd)
{
    if (*fd == -2)
        *fd = open_same_file(elf, scattered);
    if (*fd >= 0 && len > 0) {
        /* The path may name another file than the one mapped (replaced since,
         * or an in-memory image labelled with a path): compare a few bytes. */
        uint8_t head[CHECK_BYTES];
        size_t n = len < CHECK_BYTES ? len : CHECK_BYTES;
        if (pread(*fd, head, n, (off_t)sec->offset) == (ssize_t)n && memcmp(head, data, n) == 0) {
            cf_src_init_fd(s, *fd, sec->offset, len, win_cap);
            return;
        }
    }
    cf_src_init_memory(s, data, len);
}
