#include "ts_inflate.h"

#include <stdio.h>
#include <string.h>

#include "cclforge/strbuf.h"

int ts_read_strbuf(void *ctx, uint64_t off, void *buf, size_t n)
{
    const struct strbuf *sb = ctx;
    if (off > sb->len || n > sb->len - off)
        return -1;
    memcpy(buf, sb->buf + off, n);
    return 0;
}

size_t ts_inflate_engines(struct cf_inflate_engine out[2])
{
    size_t n = 0;
    if (cf_inflate_named(&out[n], "zlib", NULL) == 0)
        n++;
    cf_error err = CF_ERROR_INIT;
    if (cf_inflate_named(&out[n], "isal", &err) == 0)
        n++;
    else
        printf("isal is not available here: %s\n", cf_error_message(&err));
    cf_error_clear(&err);
    return n;
}
