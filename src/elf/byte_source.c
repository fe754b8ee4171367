#include "byte_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/strbuf.h"

void cf_src_init_memory(struct cf_byte_source *s, const uint8_t *data, size_t len)
{
    memset(s, 0, sizeof(*s));
    s->mem = data;
    s->len = data ? len : 0;
    s->fd = -1;
}

void cf_src_init_fd(struct cf_byte_source *s, int fd, uint64_t base, size_t len, size_t win_cap)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->base = base;
    s->len = len;
    s->win_cap = win_cap;
    s->win = cf_xmalloc(win_cap);
}

void cf_src_release(struct cf_byte_source *s)
{
    free(s->win);
    s->win = NULL;
}

static int refill(struct cf_byte_source *s, size_t off)
{
    size_t want = s->len - off < s->win_cap ? s->len - off : s->win_cap;
    size_t got = 0;
    while (got < want) {
        ssize_t n = pread(s->fd, s->win + got, want - got, (off_t)(s->base + off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            s->io_error = n < 0 ? errno : EIO; /* a short file: changed under us */
            s->win_len = 0;
            return -1;
        }
        got += (size_t)n;
    }
    s->bytes_read += got;
    s->win_off = off;
    s->win_len = got;
    return 0;
}

const uint8_t *cf_src_get_some(struct cf_byte_source *s, size_t off, size_t max, size_t *got)
{
    *got = 0;
    if (off >= s->len)
        return NULL;
    size_t n = s->len - off < max ? s->len - off : max;
    if (s->mem) {
        *got = n;
        return s->mem + off;
    }
    if (off < s->win_off || off >= s->win_off + s->win_len) {
        if (refill(s, off) != 0)
            return NULL;
    }
    size_t avail = s->win_off + s->win_len - off;
    *got = n < avail ? n : avail;
    return s->win + (off - s->win_off);
}

const uint8_t *cf_src_get(struct cf_byte_source *s, size_t off, size_t n)
{
    if (off > s->len || n > s->len - off)
        return NULL;
    if (s->mem)
        return s->mem + off;
    if (n > s->win_cap)
        return NULL;
    if (off < s->win_off || off + n > s->win_off + s->win_len) {
        if (refill(s, off) != 0)
            return NULL;
    }
    return s->win + (off - s->win_off);
}

size_t cf_src_skip_zeros(struct cf_byte_source *s, size_t pos)
{
    while (pos < s->len) {
        size_t got = 0;
        const uint8_t *p = cf_src_get_some(s, pos, s->mem ? s->len : s->win_cap, &got);
        if (!p)
            return s->len;
        size_t i = 0;
        while (i < got && p[i] == 0)
            i++;
        pos += i;
        if (i < got)
            break;
    }
    return pos;
}

int cf_src_read_error(const struct cf_byte_source *s, const char *name, size_t off, cf_error *err)
{
    return cf_error_set(err, CF_ERR_IO, "%s: cannot read offset %zu: %s", name, off,
                        s->io_error ? strerror(s->io_error) : "outside the range");
}
