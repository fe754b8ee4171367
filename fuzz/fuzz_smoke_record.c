/* libFuzzer target for the smoke supervisor's record parser (lines from rank
 * processes and from mpirun). Properties: a decoded
 * record re-encodes to one line that decodes to the same fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke.h"
#include "cclforge/strbuf.h"
#include "smoke/smoke_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = cf_strndup((const char *)data, size);
    struct smoke_record rec = { 0 };
    if (cf_smoke_record_decode(line, &rec) == 1) {
        struct strbuf again = STRBUF_INIT;
        cf_smoke_record_encode(&again, rec.type, &rec.ev, rec.waits);
        if (!again.len || again.buf[again.len - 1] != '\n' || memchr(again.buf, '\n', again.len - 1))
            abort();
        cf_sb_setlen(&again, again.len - 1);
        struct smoke_record back = { 0 };
        if (cf_smoke_record_decode(cf_sb_str(&again), &back) != 1 || back.type != rec.type ||
            back.ev.rank != rec.ev.rank ||
            /* only a result carries a row */
            (rec.type == REC_RESULT && (back.ev.row.bytes != rec.ev.row.bytes || back.ev.row.op != rec.ev.row.op ||
                                        back.ev.row.wrong != rec.ev.row.wrong ||
                                        back.ntimes != rec.ntimes || back.nranks_list != rec.nranks_list)) ||
            (rec.type == REC_TRANSPORT && strcmp(back.ev.conn.via, rec.ev.conn.via)) ||
            (rec.ev.text && (!back.ev.text || strcmp(rec.ev.text, back.ev.text))))
            abort();
        cf_smoke_record_release(&back);
        cf_sb_release(&again);
    }
    cf_smoke_record_release(&rec);
    free(line);
    return 0;
}
