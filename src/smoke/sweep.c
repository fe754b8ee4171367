/* Sizes as nccl-tests reads and steps them (-b/-e/-f/-i), and the buffers of one
 * test as its GetCollByteCount lays them out. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cclforge/smoke.h"

int cf_smoke_parse_size(const char *s, size_t *out, cf_error *err)
{
    static const struct { char suffix; unsigned shift; } units[] = {
        { 'K', 10 }, { 'k', 10 }, { 'M', 20 }, { 'm', 20 }, { 'G', 30 }, { 'g', 30 },
    };
    if (!s || !*s)
        return cf_error_set(err, CF_ERR_USAGE, "empty size");
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return cf_error_set(err, CF_ERR_USAGE, "'%s' is not a size (examples: 8, 64K, 128M, 1G)", s);
    unsigned shift = 0;
    if (*end) {
        int known = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (*end == units[i].suffix) {
                shift = units[i].shift;
                known = 1;
            }
        if (!known || (end[1] && !(end[1] == 'B' && !end[2])))
            return cf_error_set(err, CF_ERR_USAGE, "'%s' is not a size (examples: 8, 64K, 128M, 1G)", s);
    }
    if (v > (SIZE_MAX >> shift))
        return cf_error_set(err, CF_ERR_USAGE, "size '%s' is too large", s);
    *out = (size_t)v << shift;
    return 0;
}

size_t cf_smoke_next_size(const struct cf_smoke_sweep *sw, size_t bytes)
{
    /* nccl-tests' TimeTest: size*stepfactor when the factor is above 1, else size+stepbytes */
    size_t next;
    if (sw->step_factor > 1)
        next = bytes > SIZE_MAX / sw->step_factor ? 0 : bytes * sw->step_factor;
    else
        next = bytes > SIZE_MAX - sw->step_bytes ? 0 : bytes + sw->step_bytes;
    return next > bytes && next <= sw->max_bytes ? next : 0;
}

void cf_smoke_layout_for(enum cf_smoke_op op, size_t bytes, enum cf_smoke_dtype dt, int nranks, int rank,
                         struct cf_smoke_layout *l)
{
    const struct cf_smoke_dtype_info *di = cf_smoke_dtype_info(dt);
    size_t esize = di ? di->size : 1;
    size_t n = nranks > 0 ? (size_t)nranks : 1;
    size_t count = bytes / esize;
    /* each rank's share rounds down to a multiple of 16 bytes */
    size_t share = (count / n) & ~(16 / esize - 1);
    l->count = count;
    l->send_elems = l->recv_elems = count;
    l->send_offset = l->recv_offset = 0;
    switch (cf_smoke_op_info(op)->share) {
    case CF_SHARE_NONE:
        break;
    case CF_SHARE_SEND:
        l->count = l->send_elems = share;
        l->recv_elems = share * n;
        l->send_offset = share * (size_t)rank;
        break;
    case CF_SHARE_RECV:
        l->count = l->recv_elems = share;
        l->send_elems = share * n;
        l->recv_offset = share * (size_t)rank;
        break;
    case CF_SHARE_BOTH:
        l->count = share;
        l->send_elems = l->recv_elems = share * n;
        break;
    }
    size_t biggest = l->send_elems > l->recv_elems ? l->send_elems : l->recv_elems;
    l->bytes = biggest * esize;
}
