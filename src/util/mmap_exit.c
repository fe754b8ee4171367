/* Mappings left to the process's exit (cf_mmap_leave_to_exit): unmapping
 * each of a closure's 10-30 files costs a munmap with its page-table walk and
 * TLB flush, work that exit does once for all. The budget is process-wide by
 * nature (it is about the process's end), so it is a global, set once by
 * the CLI and taken with atomics. */
#include "cclforge/fs.h"

#include <stdatomic.h>

/* A mapping larger than this is always unmapped: CUDA libraries of hundreds
 * of MB cost far more to read than to unmap, and their scanned read-only data
 * would stay resident. */
#define LEAVE_MAX_EACH ((size_t)8 << 20)

static _Atomic size_t leave_budget; /* bytes still allowed to stay mapped; 0: none */

void cf_mmap_leave_to_exit(size_t budget)
{
    atomic_store(&leave_budget, budget);
}

int cf_mmap_may_leave(size_t len)
{
    if (len > LEAVE_MAX_EACH)
        return 0;
    size_t left = atomic_load(&leave_budget);
    while (left >= len)
        if (atomic_compare_exchange_weak(&leave_budget, &left, left - len))
            return 1;
    return 0;
}
