#include "page_advice.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void cf_advise_pages(const void *data, size_t len, enum cf_page_access access)
{
    if (!data || len == 0)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)data & ~(page - 1);
    uintptr_t end = ((uintptr_t)data + len + page - 1) & ~(page - 1);
    void *p = (void *)start;
    size_t n = end - start;
    switch (access) {
    case CF_PAGES_SCATTERED:
        (void)madvise(p, n, MADV_RANDOM);
        break;
    case CF_PAGES_ALL:
        (void)madvise(p, n, MADV_RANDOM);
        (void)madvise(p, n, MADV_WILLNEED);
        break;
    case CF_PAGES_SEQUENTIAL:
        (void)madvise(p, n, MADV_SEQUENTIAL);
        break;
    case CF_PAGES_DEFAULT:
        (void)madvise(p, n, MADV_NORMAL);
        break;
    case CF_PAGES_DROP: { /* whole pages inside the range only */
        uintptr_t inner = ((uintptr_t)data + page - 1) & ~(page - 1);
        uintptr_t inner_end = ((uintptr_t)data + len) & ~(page - 1);
        if (inner_end > inner)
            (void)madvise((void *)inner, inner_end - inner, MADV_DONTNEED);
        break;
    }
    }
}
