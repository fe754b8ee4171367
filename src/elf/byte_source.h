/* Bytes of one file range, either already in memory or read on demand with
 * pread() through a small window. The GPU container walkers read a few
 * headers scattered over hundreds of megabytes; touching them through the
 * file's mapping maps (and counts in RSS) 64 KB per header with the kernel's
 * fault-around, so a 1 GB libtorch_cuda.so would cost hundreds of MB of RSS.
 * A window keeps memory fixed whatever the file size. Internal to src/elf. */
#ifndef CCLFORGE_BYTE_SOURCE_H
#define CCLFORGE_BYTE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"

struct cf_byte_source {
    const uint8_t *mem; /* the range in memory, or NULL to read from fd */
    int fd;
    uint64_t base;      /* file offset of byte 0 of the range (fd mode) */
    size_t len;         /* length of the range */
    uint8_t *win;       /* fd mode: the window */
    size_t win_cap;
    size_t win_off;     /* range offset of win[0] */
    size_t win_len;
    uint64_t bytes_read;/* bytes read with pread (fd mode) */
    int io_error;       /* errno of a failed read, 0 if none */
};

void cf_src_init_memory(struct cf_byte_source *s, const uint8_t *data, size_t len);
/* Reads [base, base+len) of fd through a window of win_cap bytes. */
void cf_src_init_fd(struct cf_byte_source *s, int fd, uint64_t base, size_t len, size_t win_cap);
void cf_src_release(struct cf_byte_source *s);

/* n bytes at range offset off (n <= the window size in fd mode), or NULL when
 * they lie outside the range or cannot be read. Valid until the next call. */
const uint8_t *cf_src_get(struct cf_byte_source *s, size_t off, size_t n);
/* Up to max bytes at off (fewer at the end of the range or window); *got says how many. */
const uint8_t *cf_src_get_some(struct cf_byte_source *s, size_t off, size_t max, size_t *got);

struct cf_elf;
struct cf_elf_section;

/* A source for one section of elf (its mapped bytes are data/len): read from
 * the file through a window of win_cap bytes when elf was opened from a file
 * whose bytes there match the mapping, else the mapped bytes. *fd is shared
 * across calls: start with -2 ("not opened yet"); close it when >= 0.
 * `scattered`: the reads hop over the section (headers), so the file is
 * opened without read-ahead (POSIX_FADV_RANDOM on this descriptor only). */
void cf_src_init_section(struct cf_byte_source *s, const struct cf_elf *elf,
                         const struct cf_elf_section *sec, const uint8_t *data, size_t len,
                         size_t win_cap, int scattered, int *fd);

/* Offset of the first non-zero byte at or after pos (s->len if none, or on a read error). */
size_t cf_src_skip_zeros(struct cf_byte_source *s, size_t pos);
/* Sets err for bytes inside the range that could not be read; returns -1. */
int cf_src_read_error(const struct cf_byte_source *s, const char *name, size_t off, cf_error *err);

#endif
