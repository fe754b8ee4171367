/* Helpers for unit tests: temp dirs, writing files, compiling real fixtures. */
#ifndef CCLFORGE_TESTSUPPORT_H
#define CCLFORGE_TESTSUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the includes above first */
#include <cmocka.h>

/* A fresh directory removed by ts_cleanup(); aborts the test on failure. */
char *ts_tmpdir(void);
void ts_cleanup(void);
/* Writes text to dir/name, creating parents; returns the full path (owned by the test state). */
char *ts_write(const char *dir, const char *name, const char *text);
/* Runs argv (NULL-terminated), asserting exit 0; prints the output on failure. */
void ts_run_ok(const char *const *argv);
/* Runs argv; returns the exit code (-1 if it could not start). */
int ts_run(const char *const *argv);
/* Compiles C source text into `out` with the given extra flags (NULL-terminated list),
 * via $CC or cc. Returns out. */
const char *ts_cc(const char *dir, const char *out, const char *source, ...);
/* 1 when a program is on PATH. */
int ts_have(const char *prog);

#endif
