/* Sizes as nccl-tests steps them (-b/-e/-f/-i), and the buffers of one test as
 * its GetCollByteCount lays them out. */
#include <stdint.h>
#include <stdlib.h>

#include "cclforge/smoke.h"

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
