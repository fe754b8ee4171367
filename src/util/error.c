#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 3, 0))) static int error_setv(cf_error *err, enum cf_error_kind kind,
                                                             const char *fmt, va_list ap)
{
    if (!err)
        return -1;
    free(err->message);
    err->kind = kind;
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addvf(&sb, fmt, ap);
    err->message = cf_sb_detach(&sb);
    return -1;
}

int cf_error_set(cf_error *err, enum cf_error_kind kind, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_setv(err, kind, fmt, ap);
    va_end(ap);
    return -1;
}

int cf_error_prefix(cf_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    if (err->message) {
        cf_sb_adds(&sb, ": ");
        cf_sb_adds(&sb, err->message);
        free(err->message);
    }
    if (err->kind == CF_OK)
        err->kind = CF_ERR_INTERNAL;
    err->message = cf_sb_detach(&sb);
    return -1;
}

void cf_error_clear(cf_error *err)
{
    if (!err)
        return;
    free(err->message);
    err->message = NULL;
    err->kind = CF_OK;
}

const char *cf_error_message(const cf_error *err)
{
    return err && err->message ? err->message : "unknown error";
}
