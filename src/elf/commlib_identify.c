/* Which NCCL/RCCL an ELF object is or carries, from its read-only data only. */
#include "cclforge/commlib.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/elf.h"
#include "elf/elf_internal.h"
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

/* Read-only data is scanned in windows of this size straight from the file's
 * mapping: each window's pages are unmapped once passed, so RSS
 * stays fixed however large .rodata is (libcublasLt.so's is 168 MB) and no
 * byte is copied (pread windows spent more time copying than searching). */
enum { SCAN_WINDOW = 1024 * 1024, OVERLAP = 256 /* > the longest banner parsed */ };

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

/* One pass over the bytes finds both things the scan cares about: a banner's
 * "CCL version " (its 'v' with the 'n' six bytes on) and a fatbin container's
 * magic (0x50 with 0xBA three bytes on), 16 positions at a time with GCC/clang
 * vector extensions (SSE2 on x86-64, NEON on arm64, plain code elsewhere). */
typedef uint8_t bytes16 __attribute__((vector_size(16)));
enum { LANES = 16, BANNER_V = 4 /* 'v' in "CCL version " */, BANNER_N = 10, FATBIN_BA = 3,
       LOOKAHEAD = 11 /* the farthest byte a test reads past its lane */ };
enum candidate { CANDIDATE_NONE, CANDIDATE_BANNER, CANDIDATE_FATBIN };

static bytes16 load16(const uint8_t *p)
{
    bytes16 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static enum candidate candidate_at(const uint8_t *p, size_t len, size_t i)
{
    size_t room = len - i;
    if (p[i] == 'v' && room > BANNER_N - BANNER_V && p[i + BANNER_N - BANNER_V] == 'n')
        return CANDIDATE_BANNER;
    if (p[i] == 0x50 && room > FATBIN_BA && p[i + FATBIN_BA] == 0xBA)
        return CANDIDATE_FATBIN;
    return CANDIDATE_NONE;
}

/* Nonzero lanes where p[k] may start a candidate, for 16 positions. */
static bytes16 hits16(const uint8_t *p)
{
    bytes16 a = load16(p);
    bytes16 n = load16(p + BANNER_N - BANNER_V);
    bytes16 ba = load16(p + FATBIN_BA);
    return (bytes16)(((a == 'v') & (n == 'n')) | ((a == 0x50) & (ba == 0xBA)));
}

/* The first position >= i that may start a banner test or a fatbin; len if none.
 * 64 positions a step, one test per step (candidates are rare). */
static size_t next_candidate(const uint8_t *p, size_t len, size_t i, enum candidate *kind)
{
    enum { STEP = 4 * LANES };
    for (; len >= LOOKAHEAD + STEP && i <= len - LOOKAHEAD - STEP; i += STEP) {
        bytes16 hit = hits16(p + i) | hits16(p + i + LANES) | hits16(p + i + 2 * LANES) |
                      hits16(p + i + 3 * LANES);
        uint64_t half[2];
        memcpy(half, &hit, sizeof half);
        if (!(half[0] | half[1]))
            continue;
        for (size_t k = i; k < i + STEP; k++)
            if ((*kind = candidate_at(p, len, k)) != CANDIDATE_NONE)
                return k;
    }
    for (; i < len; i++)
        if ((*kind = candidate_at(p, len, i)) != CANDIDATE_NONE)
            return i;
    *kind = CANDIDATE_NONE;
    return len;
}

/* Bytes a fatbin container at p covers (header and entries), or 0 when the
 * bytes are not a plausible container: version 1, a 16-byte header, a first
 * entry header of a known kind and sane size, all inside the section. */
static uint64_t fatbin_extent(const uint8_t *p, size_t avail, uint64_t section_left)
{
    enum { CONTAINER = 16, ENTRY_MIN = 64, ENTRY_MAX = 4096 };
    if (avail < CONTAINER + ENTRY_MIN)
        return 0;
    unsigned version = (unsigned)p[4] | (unsigned)p[5] << 8;
    unsigned hsize = (unsigned)p[6] | (unsigned)p[7] << 8;
    uint64_t fat_size = 0, payload = 0;
    for (int b = 7; b >= 0; b--) {
        fat_size = fat_size << 8 | p[8 + b];
        payload = payload << 8 | p[CONTAINER + 8 + b];
    }
    const uint8_t *e = p + CONTAINER;
    unsigned kind = (unsigned)e[0] | (unsigned)e[1] << 8;
    uint32_t ehsize = (uint32_t)e[4] | (uint32_t)e[5] << 8 | (uint32_t)e[6] << 16 | (uint32_t)e[7] << 24;
    if (version != 1 || hsize != CONTAINER || fat_size > section_left - CONTAINER || fat_size < ENTRY_MIN)
        return 0;
    if ((kind != 1 && kind != 2 && kind != 8) || ehsize < ENTRY_MIN || ehsize > ENTRY_MAX ||
        ehsize > fat_size || payload > fat_size - ehsize)
        return 0;
    return CONTAINER + fat_size;
}

/* Scans one section window by window. The windows overlap so a banner that
 * starts near a window's end is read whole from the next one; banners (and
 * containers) starting in the overlap belong to the next window. Fatbin
 * containers (GPU code, e.g. cuBLAS's 110 MB .cask_resource or the fatbins
 * libcusparse keeps in .rodata) are skipped: host strings are not in them. */
static void add_site(struct cf_fatbin_sites *sites, size_t section, uint64_t offset, uint64_t size)
{
    if (!sites)
        return;
    if (sites->n == sites->cap) {
        sites->cap = sites->cap ? sites->cap * 2 : 16;
        sites->v = cf_xrealloc(sites->v, sites->cap * sizeof *sites->v);
    }
    sites->v[sites->n++] = (struct cf_fatbin_site){ (uint32_t)section, offset, size };
}

void cf_fatbin_sites_release(struct cf_fatbin_sites *sites)
{
    free(sites->v);
    memset(sites, 0, sizeof *sites);
}

static int scan_section(struct cf_byte_source *src, int windowed, const struct cf_elf_section *sec, size_t index,
                        struct cf_commlib_identity *id, struct cf_fatbin_sites *sites, const char *path,
                        cf_error *err)
{
    static const char needle[] = "CCL version ";
    const size_t nlen = sizeof(needle) - 1;
    size_t len = src->len;
    size_t window = windowed ? SCAN_WINDOW : len;
    size_t pos = 0, dropped = 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    while (pos < len) {
        size_t n = len - pos < window ? len - pos : window;
        const uint8_t *p = cf_src_get(src, pos, n);
        if (!p)
            return cf_src_read_error(src, path, (size_t)sec->offset + pos, err);
        if (windowed) {
            /* Unmap the whole pages behind this window before touching it: the
             * kernel maps 64 KB (or a whole large folio) around a faulting byte,
             * so pages dropped after a fault next to them would come back and
             * pile up, window after window. (Mapping each window up front with
             * MADV_POPULATE_READ was measured slower than faulting it in.) */
            size_t misaligned = (size_t)((uintptr_t)p % page);
            size_t behind = pos >= misaligned ? pos - misaligned : 0; /* a page start */
            if (behind > dropped) {
                cf_advise_pages(src->mem + dropped, behind - dropped, CF_PAGES_DROP);
                dropped = behind;
            }
        }
        int last = pos + n >= len;
        size_t owned = last ? n : n - OVERLAP; /* starts in [0, owned) are this window's */
        size_t next = owned;
        enum candidate kind;
        for (size_t i = next_candidate(p, n, 0, &kind); i < n; i = next_candidate(p, n, i + 1, &kind)) {
            if (kind == CANDIDATE_BANNER) {
                size_t at = i - BANNER_V - 1; /* the 'N' or 'R' */
                if (i < BANNER_V + 1 || at >= owned || n - (i - BANNER_V) < nlen ||
                    memcmp(p + i - BANNER_V, needle, nlen) != 0)
                    continue;
                struct cf_commlib_banner b;
                if (cf_banner_parse((const char *)p + at, n - at, &b) == 0) {
                    b.offset = sec->offset + pos + at;
                    collect_banner(&b, id);
                }
                continue;
            }
            if (i >= owned)
                break;
            uint64_t skip = fatbin_extent(p + i, n - i, len - pos - i);
            if (!skip)
                continue;
            id->fatbins_skipped++;
            id->bytes_skipped += skip;
            add_site(sites, index, pos + i, skip);
            if (i + skip < owned) {
                i += (size_t)skip - 1;
                continue;
            }
            next = i + (size_t)skip;
            break;
        }
        if (last && next >= n)
            break;
        pos += next;
    }
    if (windowed)
        cf_advise_pages(src->mem + dropped, len - dropped, CF_PAGES_DROP);
    return 0;
}

int cf_commlib_identify(struct cf_elf *elf, struct cf_commlib_identity *id, cf_error *err)
{
    return cf_commlib_scan(elf, id, NULL, err);
}

int cf_commlib_scan(struct cf_elf *elf, struct cf_commlib_identity *id, struct cf_fatbin_sites *sites, cf_error *err)
{
    memset(id, 0, sizeof(*id));
    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    const char *name = dyn && dyn->soname ? dyn->soname : cf_elf_path(elf);
    cf_commlib_identity_name(id, name);
    size_t n = cf_elf_section_count(elf);
    int rc = 0;
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
        uint64_t skipped_before = id->bytes_skipped;
        struct cf_byte_source src;
        cf_src_init_memory(&src, data, len);
        /* Our own file mapping: windows mapped and dropped in turn. A caller's
         * memory image: scanned as it is (dropping its pages would zero them). */
        int windowed = cf_elf_owns_mapping(elf);
        cf_advise_pages(data, len, windowed ? CF_PAGES_SEQUENTIAL : CF_PAGES_ALL);
        rc = scan_section(&src, windowed, s, i, id, sites, cf_elf_path(elf), err);
        id->bytes_scanned += len - (id->bytes_skipped - skipped_before);
        cf_advise_pages(data, len, CF_PAGES_DEFAULT);
        cf_src_release(&src);
    }
    if (rc != 0)
        return -1;
    if (id->n_banners == 0)
        return 0;
    id->found = 1;
    id->banner = id->banners[0];
    id->distinct_versions = id->n_banners > 1;
    cf_commlib_identity_name(id, name);
    return 0;
}

void cf_commlib_identity_name(struct cf_commlib_identity *id, const char *soname_or_path)
{
    id->library = cf_commlib_from_name(soname_or_path);
    id->embeds_copy = id->found && id->library == CF_COMMLIB_NONE;
}
