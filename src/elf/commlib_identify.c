/* Which NCCL/RCCL an ELF object is or carries, from its read-only data only. */
#include "cclforge/commlib.h"

#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "byte_source.h"
#include "page_advice.h"

/* Allocated read-only sections that never hold the banner: GPU code, module
 * IDs, unwind tables. Skipping them keeps the bytes read small (libnccl's
 * fatbins are 180 MB of its 218 MB). */
static const char *const skipped_sections[] = {
    ".nv_fatbin", "__nv_relfatbin", "__nv_module_id", ".hip_fatbin",
    ".eh_frame",  ".eh_frame_hdr",  ".gcc_except_table", ".interp",
};

static int is_banner_section(const struct cf_elf_section *s)
{
    if (s->type != SHT_PROGBITS || !(s->flags & SHF_ALLOC) ||
        (s->flags & (SHF_WRITE | SHF_EXECINSTR)) || s->size == 0)
        return 0;
    for (size_t i = 0; i < sizeof(skipped_sections) / sizeof(skipped_sections[0]); i++)
        if (strcmp(s->name, skipped_sections[i]) == 0)
            return 0;
    return 1;
}

/* Read-only data is read from the file in windows of this size, so memory
 * stays fixed however large .rodata is (libtorch_cuda.so's is tens of MB). */
enum { SCAN_WINDOW = 256 * 1024, OVERLAP = 256 /* > the longest banner parsed */ };

static int same_version(const struct cf_commlib_banner *a, const struct cf_commlib_banner *b)
{
    return a->lib == b->lib && a->major == b->major && a->minor == b->minor &&
           a->patch == b->patch && strcmp(a->suffix, b->suffix) == 0;
}

static int collect_banner(const struct cf_commlib_banner *b, void *ctx)
{
    struct cf_commlib_identity *id = ctx;
    for (size_t i = 0; i < id->n_banners; i++) {
        if (same_version(&id->banners[i], b)) {
            /* Keep the form that names the toolkit. */
            if (!id->banners[i].toolkit[0] && b->toolkit[0])
                id->banners[i] = *b;
            return 0;
        }
    }
    if (id->n_banners < CF_COMMLIB_MAX_BANNERS)
        id->banners[id->n_banners++] = *b;
    return 0;
}

struct window_ctx {
    struct cf_commlib_identity *id;
    uint64_t limit; /* banners starting here or later belong to the next window */
};

static int collect_in_window(const struct cf_commlib_banner *b, void *ctx)
{
    struct window_ctx *w = ctx;
    return b->offset < w->limit ? collect_banner(b, w->id) : 0;
}

/* Scans one section window by window; the windows overlap so a banner that
 * starts near a window's end is read whole from the next one. */
static int scan_section(struct cf_byte_source *src, const struct cf_elf_section *sec,
                        struct cf_commlib_identity *id, const char *path, cf_error *err)
{
    size_t len = src->len;
    size_t window = src->mem ? len : SCAN_WINDOW;
    size_t step = src->mem ? len : SCAN_WINDOW - OVERLAP;
    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < window ? len - off : window;
        const uint8_t *p = cf_src_get(src, off, n);
        if (!p)
            return cf_src_read_error(src, path, (size_t)sec->offset + off, err);
        int last = off + n >= len;
        struct window_ctx w = { id, last ? UINT64_MAX : sec->offset + off + step };
        cf_banner_scan(p, n, sec->offset + off, collect_in_window, &w);
        if (last)
            break;
    }
    return 0;
}

int cf_commlib_identify(struct cf_elf *elf, struct cf_commlib_identity *id, cf_error *err)
{
    memset(id, 0, sizeof(*id));
    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    const char *name = dyn && dyn->soname ? dyn->soname : cf_elf_path(elf);
    id->library = cf_commlib_from_name(name);
    size_t n = cf_elf_section_count(elf);
    int fd = -2, rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        if (!s || !is_banner_section(s))
            continue;
        const uint8_t *data;
        size_t len;
        if (cf_elf_section_bytes(elf, s, &data, &len, err) < 0) {
            rc = -1;
            break;
        }
        id->sections_scanned++;
        id->bytes_scanned += len;
        struct cf_byte_source src;
        cf_src_init_section(&src, elf, s, data, len, SCAN_WINDOW, 0, &fd);
        /* Mapped bytes: read this section and nothing around it. */
        cf_advise_pages(src.mem, src.mem ? len : 0, CF_PAGES_ALL);
        rc = scan_section(&src, s, id, cf_elf_path(elf), err);
        cf_advise_pages(src.mem, src.mem ? len : 0, CF_PAGES_DEFAULT);
        cf_src_release(&src);
    }
    if (fd >= 0)
        close(fd);
    if (rc != 0)
        return -1;
    if (id->n_banners == 0)
        return 0;
    id->found = 1;
    id->banner = id->banners[0];
    id->distinct_versions = id->n_banners > 1;
    id->embeds_copy = id->library == CF_COMMLIB_NONE;
    return 0;
}
