/* One member streamed once: hashed in RECORD's algorithm as it is
 * decompressed, its size and CRC-32 checked (zip_read.c), the ELF members
 * copied into the installed layout for the native checks (the ELF reader and
 * the loader emulation read files: a library like libtorch_cuda.so, 520 MB,
 * cannot be held in bounded memory, and its facts lie at both ends of it),
 * the metadata files kept in memory. Touches only member i's own fields, so
 * workers may stream different members at once (wheel_stream_pool.c); its
 * problems go to the shared log under member i's number. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "pkg/wheel_digest.h"
#include "pkg/wheel_verify_internal.h"

#define MAX_METADATA ((size_t)16 << 20) /* WHEEL, METADATA, the marker */
#define LIBRARY_HEAD 4096             /* what is placed of a non-ELF file named like a library */

static int looks_like_library(const char *name)
{
    const char *base = strrchr(name, '/');
    return strstr(base ? base + 1 : name, ".so") != NULL;
}

/* Where a member's bytes go besides the digest. */
struct sink {
    int fd;              /* its layout copy, -1 none */
    uint64_t fd_cap;     /* bytes the copy may take */
    struct strbuf *keep; /* a metadata file kept in memory, or NULL */
};

/* The first bytes decide: an ELF member is copied whole into the layout, a
 * non-ELF one named like a library gets its head there, others nothing. */
static void open_sink(struct verify_ctx *c, size_t i, const unsigned char *head, size_t n, struct sink *s,
                      struct cf_wheel_problem_log *log, unsigned *seq)
{
    struct vmember *m = &c->m[i];
    m->is_elf = cf_elf_facts_is_elf(head, n);
    if (!m->installable || m->z->is_symlink || (!m->is_elf && !looks_like_library(m->z->name)))
        return;
    cf_error err = CF_ERROR_INIT;
    char *installed = cf_wheel_installed_path(c->stem, m->z->name);
    s->fd = installed ? cf_wheel_layout_open(c, i, installed, &err) : -1;
    s->fd_cap = m->is_elf ? UINT64_MAX : LIBRARY_HEAD;
    if (installed && s->fd < 0) {
        cf_wheel_member_problem(log, i, seq, "%s", cf_error_message(&err));
        cf_error_clear(&err);
    }
    free(installed);
}

/* Compares the digest of member m's bytes with its RECORD entry's, keeping it only when they differ. */
static void settle_digest(struct verify_ctx *c, struct vmember *m, struct cf_digest *d, int have_algo)
{
    struct strbuf b64 = STRBUF_INIT;
    cf_digest_final_b64(d, &b64);
    const struct cf_record_entry *e = m->record_line >= 0 ? &c->rec.entries[m->record_line] : NULL;
    if (have_algo && e && e->digest && strcmp(e->digest, b64.buf))
        m->bad_digest = cf_sb_detach(&b64);
    cf_sb_release(&b64);
}

void cf_wheel_stream_member(struct verify_ctx *c, size_t i, unsigned char *buf, struct cf_wheel_problem_log *log)
{
    unsigned seq = 0; /* the order of member i's own problems */
    struct vmember *m = &c->m[i];
    if (m->z->is_dir) {
        m->data = DATA_OK;
        if (m->z->usize)
            cf_wheel_member_problem(log, i, &seq, "'%s': a directory entry holding %llu bytes of data", m->shown,
                             (unsigned long long)m->z->usize);
        return;
    }
    enum cf_digest_algo algo = CF_DIGEST_SHA256;
    int have_algo = m->record_line >= 0 && c->rec.entries[m->record_line].algo &&
                    cf_digest_algo_named(c->rec.entries[m->record_line].algo, &algo) == 0;
    struct cf_digest d;
    cf_digest_init(&d, algo);
    struct sink s = { -1, 0, NULL };
    if ((long)i == c->wheel)
        s.keep = &c->wheel_text;
    else if ((long)i == c->metadata)
        s.keep = &c->metadata_text;
    else if ((long)i == c->marker)
        s.keep = &c->marker_text;
    if (s.keep && m->z->usize > MAX_METADATA) {
        cf_wheel_member_problem(log, i, &seq, "'%s': %llu bytes, too large for a metadata file (16 MiB at most)", m->shown,
                         (unsigned long long)m->z->usize);
        s.keep = NULL;
    }
    struct cf_wheel_stream *st = cf_xmalloc(sizeof *st);
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_member_open(c, i, st, &err) < 0) {
        cf_wheel_member_problem(log, i, &seq, "'%s': %s", m->shown, cf_error_message(&err));
        cf_error_clear(&err);
        m->data = DATA_BAD;
        free(st);
        return;
    }
    unsigned char head[4];
    size_t head_n = 0;
    int decided = 0, write_failed = 0;
    ssize_t got;
    while ((got = cf_wheel_member_read(st, buf, CF_WHEEL_CHUNK, &err)) > 0) {
        size_t n = (size_t)got;
        cf_digest_update(&d, buf, n);
        if (!decided) {
            size_t before = head_n, take = n < sizeof head - head_n ? n : sizeof head - head_n;
            memcpy(head + head_n, buf, take);
            head_n += take;
            if (head_n == sizeof head || m->size_read + n == m->z->usize) {
                decided = 1;
                open_sink(c, i, head, head_n, &s, log, &seq);
                /* bytes of earlier, shorter reads go first */
                if (s.fd >= 0 && before && cf_write_all(s.fd, head, before) < 0)
                    write_failed = 1;
            }
        }
        if (s.fd >= 0 && m->size_read < s.fd_cap) {
            size_t w = s.fd_cap - m->size_read < n ? (size_t)(s.fd_cap - m->size_read) : n;
            if (cf_write_all(s.fd, buf, w) < 0 && !write_failed) {
                cf_wheel_member_problem(log, i, &seq, "writing the layout copy of '%s': %s", m->shown, strerror(errno));
                write_failed = 1;
            }
        }
        if (s.keep)
            cf_sb_add(s.keep, buf, n);
        m->size_read += n;
    }
    if (!decided)
        open_sink(c, i, head, head_n, &s, log, &seq);
    if (got < 0) {
        cf_wheel_member_problem(log, i, &seq, "'%s': %s", m->shown, cf_error_message(&err));
        cf_error_clear(&err);
    }
    cf_wheel_member_close(st);
    free(st);
    if (s.fd >= 0)
        close(s.fd);
    settle_digest(c, m, &d, have_algo);
    m->data = got < 0 ? DATA_BAD : DATA_OK;
}

