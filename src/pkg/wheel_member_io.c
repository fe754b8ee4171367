/* Reading one member: zip_read.c for stored and deflated members (all but
 * a rare few), libzip for the rest (bzip2, lzma), opened the first time such
 * a member turns up, on a duplicate of the descriptor that was scanned. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkg/wheel_verify_internal.h"
#include "pkg/zip_loader.h"

int cf_wheel_read_at(void *ctx, uint64_t off, void *buf, size_t n)
{
    int fd = *(const int *)ctx;
    for (size_t got = 0; got < n;) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static int open_libzip(struct verify_ctx *c, cf_error *err)
{
    if (c->za)
        return 0;
    int zfd = dup(c->fd), zerr = 0;
    c->za = zfd >= 0 ? cf_zip_fdopen(zfd, ZIP_RDONLY | ZIP_CHECKCONS, &zerr) : NULL;
    if (c->za)
        return 0;
    if (zfd >= 0)
        close(zfd);
    zip_error_t ze;
    cf_zip_error_init_with_code(&ze, zerr);
    cf_error_set(err, CF_ERR_FORMAT, "libzip cannot open the archive: %s", cf_zip_error_strerror(&ze));
    cf_zip_error_fini(&ze);
    return -1;
}

int cf_wheel_member_open(struct verify_ctx *c, size_t i, struct cf_wheel_stream *s, cf_error *err)
{
    const struct cf_zip_entry *e = &c->scan.entries[i];
    s->zf = NULL;
    if (cf_zip_member_supported(e))
        return cf_zip_member_open(&s->zm, &c->engine, cf_wheel_read_at, &c->fd, e, err);
    if (open_libzip(c, err) < 0)
        return -1;
    s->zf = cf_zip_fopen_index(c->za, i, 0);
    if (!s->zf)
        return cf_error_set(err, CF_ERR_FORMAT, "cannot be read (%s)", cf_zip_strerror(c->za));
    return 0;
}

ssize_t cf_wheel_member_read(struct cf_wheel_stream *s, void *buf, size_t n, cf_error *err)
{
    if (!s->zf)
        return cf_zip_member_read(&s->zm, buf, n, err);
    zip_int64_t got = cf_zip_fread(s->zf, buf, n);
    if (got < 0)
        return cf_error_set(err, CF_ERR_FORMAT, "corrupt data (%s)", cf_zip_file_strerror(s->zf));
    return (ssize_t)got;
}

void cf_wheel_member_close(struct cf_wheel_stream *s)
{
    if (s->zf)
        cf_zip_fclose(s->zf);
    else
        cf_zip_member_close(&s->zm);
    s->zf = NULL;
}

int cf_wheel_member_read_all(struct verify_ctx *c, size_t i, size_t cap, struct strbuf *out, cf_error *err)
{
    const struct cf_zip_entry *z = &c->scan.entries[i];
    if (z->usize > cap)
        return cf_error_set(err, CF_ERR_FORMAT, "%llu bytes, more than %zu", (unsigned long long)z->usize, cap);
    struct cf_wheel_stream *s = cf_xmalloc(sizeof *s);
    int rc = cf_wheel_member_open(c, i, s, err);
    if (rc == 0) {
        char buf[16384];
        ssize_t got;
        while ((got = cf_wheel_member_read(s, buf, sizeof buf, err)) > 0 && out->len + (size_t)got <= cap)
            cf_sb_add(out, buf, (size_t)got);
        if (got > 0)
            rc = cf_error_set(err, CF_ERR_FORMAT, "more data than declared");
        else if (got < 0)
            rc = -1;
        cf_wheel_member_close(s);
    }
    free(s);
    return rc;
}
