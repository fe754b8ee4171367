/* Read-ahead advice for ranges of a mapped file. An inspector reads a few
 * headers scattered over hundreds of megabytes; the kernel's default
 * read-around on a page fault (read_ahead_kb, 8 MB on some VMs) would pull in
 * megabytes per header. Internal to src/elf. */
#ifndef CCLFORGE_PAGE_ADVICE_H
#define CCLFORGE_PAGE_ADVICE_H

#include <stddef.h>

enum cf_page_access {
    CF_PAGES_SCATTERED, /* a few bytes here and there: no read-around */
    CF_PAGES_ALL,       /* every byte, soon: read exactly this range ahead */
    CF_PAGES_SEQUENTIAL,/* every byte, in order, a window at a time: aggressive read-ahead */
    CF_PAGES_DEFAULT,   /* back to the kernel's default */
    CF_PAGES_DROP       /* unmap the whole pages inside this range (RSS back down; the page cache keeps
                         * them). ONLY on a read-only file mapping: it would zero anonymous
                         * memory. Re-reading the range maps the same bytes again. */
};

/* Advises the kernel about [data, data+len). A hint only: failures (memory
 * that is not a file mapping, old kernels) are ignored. */
void cf_advise_pages(const void *data, size_t len, enum cf_page_access access);

#endif
