/* Shared by the fuzz targets: a copy of the input that ends exactly at an
 * unmapped page, so a read one byte past the end faults even inside code that
 * is not instrumented (zlib, zstd, libzip from the system). */
#ifndef CCLFORGE_FUZZ_GUARD_H
#define CCLFORGE_FUZZ_GUARD_H

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct fuzz_guarded {
    uint8_t *map;
    size_t map_len;
    const uint8_t *data; /* the copy; data + size is the guard page */
};

static inline int fuzz_guard_copy(const uint8_t *data, size_t size, struct fuzz_guarded *g)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t body = (size + page - 1) / page * page;
    g->map_len = body + page;
    void *m = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    g->map = m;
    mprotect(g->map + body, page, PROT_NONE);
    uint8_t *start = g->map + body - size;
    if (size)
        memcpy(start, data, size);
    /* Read-only like a real file mapping: a write by the parser faults too. */
    mprotect(g->map, body, PROT_READ);
    g->data = start;
    return 0;
}

static inline void fuzz_guard_release(struct fuzz_guarded *g)
{
    munmap(g->map, g->map_len);
}

/* Defines the libFuzzer entry point: `one(data, size)` runs over a guarded copy
 * of the input. */
#define FUZZ_GUARDED_TARGET(one)                                        \
    int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)       \
    {                                                                   \
        struct fuzz_guarded g;                                          \
        if (fuzz_guard_copy(input, size, &g) != 0)                      \
            return 0;                                                   \
        one(g.data, size);                                              \
        fuzz_guard_release(&g);                                         \
        return 0;                                                       \
    }

#endif
