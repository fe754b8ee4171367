/* Zip structure (APPNOTE.TXT 6.3: 4.3.6 local header, 4.3.12 central
 * directory header, 4.3.14-16 ZIP64 end records, 4.5.3 ZIP64 extra field),
 * every read bounds-checked against the file. */
#include "pkg/zip_scan.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pkg/name_index.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_EOCD64_LOCATOR 0x07064b50u
#define EOCD_LEN 22
#define CENTRAL_LEN 46
#define LOCAL_LEN 30
#define WINDOW_CAP (256 * 1024) /* > 46 + 3 * 65535: any header with its name, extra and comment */
#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DATA_DESCRIPTOR 0x0008u
#define OS_UNIX 3

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* A window of the file: the bytes [off, off+len) in buf, refilled on demand. */
struct window {
    cf_zip_read_fn read;
    void *ctx;
    uint64_t file_size;
    uint8_t *buf;
    uint64_t off;
    size_t len;
};

/* n bytes at file offset off (n <= WINDOW_CAP), or NULL when they lie outside the file or cannot be read. */
static const uint8_t *win_get(struct window *w, uint64_t off, size_t n)
{
    if (n > WINDOW_CAP || off > w->file_size || n > w->file_size - off)
        return NULL;
    if (w->buf && off >= w->off && off - w->off + n <= w->len)
        return w->buf + (off - w->off);
    if (!w->buf)
        w->buf = cf_xmalloc(WINDOW_CAP);
    uint64_t left = w->file_size - off;
    size_t want = left < WINDOW_CAP ? (size_t)left : WINDOW_CAP;
    if (w->read(w->ctx, off, w->buf, want) < 0) {
        w->len = 0;
        return NULL;
    }
    w->off = off;
    w->len = want;
    return w->buf;
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (!len || len > n || (len == 2 && s[0] < 0xc2))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

/* Member names are chosen by the archive's author: control bytes and bytes
 * that are not UTF-8 are shown escaped, never raw (a terminal escape, a
 * JSON document that no longer parses), and a huge name is cut. */
void cf_zip_name_display(struct strbuf *out, const char *name, size_t len)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t shown = len > 240 ? 240 : len;
    for (size_t i = 0; i < shown;) {
        size_t n = utf8_len(s + i, shown - i);
        if (!n || s[i] < 0x20 || s[i] == 0x7f) {
            cf_sb_addf(out, "\\x%02x", s[i]);
            i++;
        } else {
            cf_sb_add(out, s + i, n);
            i += n;
        }
    }
    if (shown < len)
        cf_sb_addf(out, "...(%zu bytes)", len);
}

static void add_fault(struct cf_zip_scan *s, const struct cf_zip_limits *lim, const struct cf_zip_entry *e,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add_fault(struct cf_zip_scan *s, const struct cf_zip_limits *lim, const struct cf_zip_entry *e,
                      const char *fmt, ...)
{
    s->n_faults++;
    if (s->faults.n >= lim->max_faults)
        return;
    struct strbuf sb = STRBUF_INIT;
    if (e) {
        cf_sb_addc(&sb, '\'');
        cf_zip_name_display(&sb, e->name, e->name_len);
        cf_sb_adds(&sb, "': ");
    }
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    cf_strvec_push_nodup(&s->faults, cf_sb_detach(&sb));
}

struct end_record {
    uint64_t n_entries, cd_size, cd_offset;
    uint64_t end_pos; /* where the (ZIP64) end record starts: the directory must end there */
};

/* The end of central directory record: the last signature whose comment ends
 * the file. Bytes after the comment are refused: a reader that takes the last
 * signature anywhere in them could find another archive there. */
static int find_end(struct window *w, struct end_record *end, cf_error *err)
{
    uint64_t size = w->file_size;
    if (size < EOCD_LEN)
        return cf_error_set(err, CF_ERR_FORMAT, "%llu bytes: too short to be a zip archive", (unsigned long long)size);
    uint64_t lowest = size > EOCD_LEN + 65535 ? size - EOCD_LEN - 65535 : 0;
    const uint8_t *tail = win_get(w, lowest, (size_t)(size - lowest));
    if (!tail)
        return cf_error_set(err, CF_ERR_IO, "cannot read the end of the archive");
    uint64_t appended = 0;
    for (uint64_t pos = size - EOCD_LEN + 1; pos-- > lowest;) {
        const uint8_t *p = tail + (pos - lowest);
        if (le32(p) != SIG_EOCD || pos + EOCD_LEN + le16(p + 20) > size)
            continue;
        if (pos + EOCD_LEN + le16(p + 20) < size) {
            if (!appended)
                appended = size - (pos + EOCD_LEN + le16(p + 20));
            continue;
        }
        if (le16(p + 4) != 0 || le16(p + 6) != 0)
            return cf_error_set(err, CF_ERR_FORMAT, "a multi-disk (split) zip archive: not a wheel");
        end->n_entries = le16(p + 10);
        end->cd_size = le32(p + 12);
        end->cd_offset = le32(p + 16);
        end->end_pos = pos;
        /* ZIP64: a locator just before the end record points at the ZIP64 end record */
        const uint8_t *loc = pos >= 20 ? win_get(w, pos - 20, 20) : NULL;
        if (loc && le32(loc) == SIG_EOCD64_LOCATOR) {
            uint64_t rec_off = le64(loc + 8);
            const uint8_t *r = win_get(w, rec_off, 56);
            if (!r || le32(r) != SIG_EOCD64 || rec_off + 56 > pos - 20)
                return cf_error_set(err, CF_ERR_FORMAT, "the ZIP64 end record the locator points at is missing or damaged");
            end->n_entries = le64(r + 32);
            end->cd_size = le64(r + 40);
            end->cd_offset = le64(r + 48);
            end->end_pos = rec_off;
        }
        return 0;
    }
    if (appended)
        return cf_error_set(err, CF_ERR_FORMAT, "%llu bytes after the end of central directory record: data appended to the archive",
                            (unsigned long long)appended);
    return cf_error_set(err, CF_ERR_FORMAT, "no end of central directory record: not a zip archive, or truncated");
}

/* Values the 32-bit fields mark with 0xFFFFFFFF come from the ZIP64 extra field, in this order. */
static int apply_zip64(const uint8_t *extra, size_t len, uint64_t *usize, uint64_t *csize, uint64_t *offset,
                       int want_u, int want_c, int want_o)
{
    for (size_t p = 0; p + 4 <= len;) {
        uint16_t id = le16(extra + p), sz = le16(extra + p + 2);
        if (p + 4 + sz > len)
            return -1;
        if (id == 0x0001) {
            const uint8_t *f = extra + p + 4;
            size_t need = 8u * (size_t)(want_u + want_c + want_o);
            if (sz < need)
                return -1;
            if (want_u)
                *usize = le64(f), f += 8;
            if (want_c)
                *csize = le64(f), f += 8;
            if (want_o)
                *offset = le64(f);
            return 0;
        }
        p += 4 + sz;
    }
    return (want_u || want_c || want_o) ? -1 : 0;
}

static int read_central(struct window *w, struct cf_zip_scan *s, const struct cf_zip_limits *lim,
                        const struct end_record *end, cf_error *err)
{
    uint64_t pos = end->cd_offset, stop = end->cd_offset + end->cd_size;
    size_t cap = 0;
    while (pos < stop) {
        const uint8_t *h = win_get(w, pos, CENTRAL_LEN);
        if (!h || le32(h) != SIG_CENTRAL)
            return cf_error_set(err, CF_ERR_FORMAT, "central directory entry %zu at offset %llu is damaged", s->n + 1,
                                (unsigned long long)pos);
        size_t nl = le16(h + 28), xl = le16(h + 30), cl = le16(h + 32);
        if (pos + CENTRAL_LEN + nl + xl + cl > stop)
            return cf_error_set(err, CF_ERR_FORMAT, "central directory entry %zu runs past the directory", s->n + 1);
        if (s->n == lim->max_entries)
            return cf_error_set(err, CF_ERR_FORMAT, "more than %zu members: refusing to read further", lim->max_entries);
        h = win_get(w, pos, CENTRAL_LEN + nl + xl);
        if (!h)
            return cf_error_set(err, CF_ERR_IO, "cannot read central directory entry %zu", s->n + 1);
        if (s->n == cap) {
            cap = cap ? cap * 2 : 256;
            s->entries = cf_xrealloc(s->entries, cap * sizeof *s->entries);
        }
        struct cf_zip_entry *e = &s->entries[s->n++];
        memset(e, 0, sizeof *e);
        e->name = cf_xmalloc(nl + 1); /* every byte, a NUL included */
        memcpy(e->name, h + CENTRAL_LEN, nl);
        e->name[nl] = '\0';
        e->name_len = nl;
        e->made_by_os = h[5];
        e->flags = le16(h + 8);
        e->method = le16(h + 10);
        e->crc = le32(h + 16);
        e->csize = le32(h + 20);
        e->usize = le32(h + 24);
        e->external_attr = le32(h + 38);
        e->local_offset = le32(h + 42);
        if (apply_zip64(h + CENTRAL_LEN + nl, xl, &e->usize, &e->csize, &e->local_offset, e->usize == 0xFFFFFFFFu,
                        e->csize == 0xFFFFFFFFu, e->local_offset == 0xFFFFFFFFu) < 0)
            add_fault(s, lim, e, "damaged ZIP64 extra field");
        e->is_dir = nl > 0 && e->name[nl - 1] == '/';
        e->is_symlink = e->made_by_os == OS_UNIX && S_ISLNK((e->external_attr >> 16) & 0170000);
        pos += CENTRAL_LEN + nl + xl + cl;
    }
    if (s->n != end->n_entries)
        add_fault(s, lim, NULL, "the end record says %llu members, the central directory holds %zu",
                  (unsigned long long)end->n_entries, s->n);
    return 0;
}

/* The local header must say what the central directory says: a reader that
 * walks local headers (a streaming unzip) would otherwise see another file. */
static void check_local(struct window *w, struct cf_zip_scan *s, const struct cf_zip_limits *lim,
                        struct cf_zip_entry *e, uint64_t cd_offset)
{
    const uint8_t *h = win_get(w, e->local_offset, LOCAL_LEN);
    if (!h || le32(h) != SIG_LOCAL || e->local_offset + LOCAL_LEN > cd_offset) {
        add_fault(s, lim, e, "no local header at offset %llu", (unsigned long long)e->local_offset);
        return;
    }
    size_t nl = le16(h + 26), xl = le16(h + 28);
    uint16_t flags = le16(h + 6), method = le16(h + 8);
    uint32_t crc = le32(h + 14);
    uint64_t csize = le32(h + 18), usize = le32(h + 22), unused = 0;
    e->data_offset = e->local_offset + LOCAL_LEN + nl + xl;
    h = win_get(w, e->local_offset, LOCAL_LEN + nl + xl);
    if (!h) {
        add_fault(s, lim, e, "the local header runs past the end of the file");
        return;
    }
    if (nl != e->name_len || memcmp(h + LOCAL_LEN, e->name, nl) != 0) {
        struct strbuf local = STRBUF_INIT;
        cf_zip_name_display(&local, (const char *)h + LOCAL_LEN, nl);
        add_fault(s, lim, e, "the local header names it '%s': local and central headers disagree", local.buf ? local.buf : "");
        cf_sb_release(&local);
        return;
    }
    if (method != e->method)
        add_fault(s, lim, e, "compression method %u in the local header, %u in the central directory", method, e->method);
    if ((flags & FLAG_DATA_DESCRIPTOR) != (e->flags & FLAG_DATA_DESCRIPTOR))
        add_fault(s, lim, e, "the local and central headers disagree on the data descriptor flag");
    else if (!(flags & FLAG_DATA_DESCRIPTOR)) {
        if (apply_zip64(h + LOCAL_LEN + nl, xl, &usize, &csize, &unused, usize == 0xFFFFFFFFu, csize == 0xFFFFFFFFu, 0) < 0)
            add_fault(s, lim, e, "damaged ZIP64 extra field in the local header");
        else if (crc != e->crc || csize != e->csize || usize != e->usize)
            add_fault(s, lim, e,
                      "the local header says crc %08x, %llu bytes compressed, %llu uncompressed; the central "
                      "directory says %08x, %llu, %llu",
                      crc, (unsigned long long)csize, (unsigned long long)usize, e->crc,
                      (unsigned long long)e->csize, (unsigned long long)e->usize);
    }
}

struct placed {
    uint64_t offset;
    size_t index;
};

static int by_offset(const void *a, const void *b)
{
    const struct placed *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Each member's bytes (local header through data) lie before the directory and
 * apart from every other member's: members sharing bytes are how a
 * kilobyte-sized archive declares gigabytes (the overlapping-files bomb). */
static void check_layout(struct cf_zip_scan *s, const struct cf_zip_limits *lim, uint64_t cd_offset)
{
    struct placed *order = cf_xmalloc((s->n ? s->n : 1) * sizeof *order);
    for (size_t i = 0; i < s->n; i++)
        order[i] = (struct placed){ s->entries[i].local_offset, i };
    qsort(order, s->n, sizeof *order, by_offset);
    for (size_t k = 0; k < s->n; k++) {
        struct cf_zip_entry *e = &s->entries[order[k].index];
        if (!e->data_offset)
            continue; /* its local header was already reported */
        uint64_t end = e->data_offset + e->csize;
        if (end < e->data_offset || end > cd_offset) {
            add_fault(s, lim, e, "its %llu bytes of data run past the start of the central directory",
                      (unsigned long long)e->csize);
            continue;
        }
        if (k + 1 < s->n && end > order[k + 1].offset) {
            const struct cf_zip_entry *next = &s->entries[order[k + 1].index];
            struct strbuf other = STRBUF_INIT;
            cf_zip_name_display(&other, next->name, next->name_len);
            add_fault(s, lim, e, "its data overlaps member '%s' (offset %llu): members sharing bytes are a zip bomb's "
                                 "trick",
                      other.buf ? other.buf : "", (unsigned long long)next->local_offset);
            cf_sb_release(&other);
        }
    }
    free(order);
}

static void check_entries(struct cf_zip_scan *s, const struct cf_zip_limits *lim)
{
    struct cf_name_index names = CF_NAME_INDEX_INIT;
    for (size_t i = 0; i < s->n; i++) {
        struct cf_zip_entry *e = &s->entries[i];
        size_t first;
        if (!cf_name_index_add(&names, e->name, e->name_len, i, &first))
            add_fault(s, lim, e, "duplicate name (members %zu and %zu): unpackers keep one or the other, and RECORD "
                                 "vouches for one",
                      first + 1, i + 1);
        if (memchr(e->name, '\0', e->name_len))
            add_fault(s, lim, e, "NUL byte in the name");
        if (e->flags & FLAG_ENCRYPTED)
            add_fault(s, lim, e, "encrypted: pip cannot install it");
        if (e->method != 0 && e->method != 8 && e->method != 12 && e->method != 14)
            add_fault(s, lim, e, "compression method %u: pip reads only stored, deflate, bzip2 and lzma", e->method);
        if (e->method == 0 && e->csize != e->usize)
            add_fault(s, lim, e, "stored uncompressed, yet %llu bytes in the archive and %llu declared",
                      (unsigned long long)e->csize, (unsigned long long)e->usize);
        uint64_t t = s->total_usize + e->usize;
        s->total_usize = t < s->total_usize ? UINT64_MAX : t;
    }
    cf_name_index_release(&names);
    if (s->total_usize > lim->max_total) {
        s->over_cap = 1;
        add_fault(s, lim, NULL, "%llu bytes uncompressed in all, over the limit of %llu (--max-size)",
                  (unsigned long long)s->total_usize, (unsigned long long)lim->max_total);
    }
}

int cf_zip_scan(cf_zip_read_fn read, void *ctx, uint64_t file_size, const struct cf_zip_limits *lim,
                struct cf_zip_scan *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    struct window w = { read, ctx, file_size, NULL, 0, 0 };
    struct window lw = w; /* local headers: scattered reads, their own window */
    struct end_record end = { 0, 0, 0, 0 };
    int rc = find_end(&w, &end, err);
    if (rc == 0 && (end.cd_offset > end.end_pos || end.cd_size != end.end_pos - end.cd_offset))
        rc = cf_error_set(err, CF_ERR_FORMAT,
                          "the central directory (offset %llu, %llu bytes) does not end where the end record starts "
                          "(%llu): data prepended, appended or missing",
                          (unsigned long long)end.cd_offset, (unsigned long long)end.cd_size,
                          (unsigned long long)end.end_pos);
    if (rc == 0)
        rc = read_central(&w, out, lim, &end, err);
    if (rc == 0) {
        check_entries(out, lim);
        for (size_t i = 0; i < out->n; i++)
            check_local(&lw, out, lim, &out->entries[i], end.cd_offset);
        check_layout(out, lim, end.cd_offset);
        if (out->n_faults > out->faults.n)
            cf_strvec_pushf(&out->faults, "... and %zu more faults", out->n_faults - out->faults.n);
    }
    free(w.buf);
    free(lw.buf);
    if (rc < 0)
        cf_zip_scan_release(out);
    return rc;
}

void cf_zip_scan_release(struct cf_zip_scan *scan)
{
    for (size_t i = 0; i < scan->n; i++)
        free(scan->entries[i].name);
    free(scan->entries);
    cf_strvec_clear(&scan->faults);
    memset(scan, 0, sizeof *scan);
}
