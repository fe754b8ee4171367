/* Errors are values: a library call fills a cf_error and returns -1; the CLI prints it. */
#ifndef CCLFORGE_ERROR_H
#define CCLFORGE_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cf_error_kind {
    CF_OK = 0,
    CF_ERR_USAGE,    /* bad argument from the user: CLI exits 2 */
    CF_ERR_IO,       /* a file or directory could not be read or written */
    CF_ERR_FORMAT,   /* malformed input: not ELF, truncated, bad JSON, bad zip */
    CF_ERR_NOTFOUND, /* something looked for does not exist */
    CF_ERR_FAILED,   /* the job ran and failed (build, check, collective) */
    CF_ERR_INTERNAL  /* out of memory or a bug */
};

typedef struct cf_error {
    enum cf_error_kind kind;
    char *message; /* malloc'd, NULL when kind == CF_OK */
} cf_error;

#define CF_ERROR_INIT { CF_OK, 0 }

/* Sets the error (replacing any previous one) and returns -1 so callers can
 * write `return cf_error_set(err, ...)`. err may be NULL. */
int cf_error_set(cf_error *err, enum cf_error_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes the existing message with context ("reading X: <old>"). Returns -1. */
int cf_error_prefix(cf_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cf_error_clear(cf_error *err);
const char *cf_error_message(const cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
