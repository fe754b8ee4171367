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

/* This machine's CUDA toolkit, looked for as doctor looks (src/gpu/vendor.c):
 * CUDA_HOME, CUDA_PATH, the nvcc on PATH, /usr/local/cuda, /usr/local/cuda-*
 * (newest first), /opt/cuda; a toolkit holds include/cuda.h or bin/nvcc.
 * Its root (owned by the test state), NULL when there is none. */
const char *ts_cuda_root(void);
/* Its CUDA_VERSION (13000 for 13.0) from its include/cuda.h; -1 without one. */
long ts_cuda_version(void);
/* A program of the toolkit (bin/NAME), else NAME on PATH; NULL: neither. */
const char *ts_cuda_tool(const char *name);
/* This machine's libnccl.so.2 (the toolkit's lib64/, lib/ or
 * targets/<arch>-linux/lib/, then ld.so.cache, then the system library
 * directories) and its version read from the nccl.h beside it: an oracle that
 * does not ask the code under test. */
struct ts_nccl {
    const char *lib;     /* <canonical directory>/libnccl.so.2 */
    const char *dir;     /* that directory */
    const char *header;  /* the nccl.h read */
    int major, minor, patch;
    long code;           /* NCCL_VERSION_CODE */
    char version[64];    /* "2.28.9" (room for three longs) */
};
/* 0 and *out filled, or -1 when no library with a readable nccl.h is found
 * (the caller skips: a test never passes without it). */
int ts_find_nccl(struct ts_nccl *out);

/* Clears e_shoff, e_shnum and e_shstrndx of the ELF header at ehdr (either
 * class; zero reads the same in either byte order): the object sstrip or
 * `objcopy --strip-section-headers` leaves, which the loader still runs. */
void ts_drop_section_headers(uint8_t *ehdr);
/* The same, rewriting the header of the file at path in place. */
void ts_strip_section_headers(const char *path);

/* A test binary whose every test skipped (a missing prerequisite: no nvcc, no
 * real NCCL) did not run: it exits 77, CTest's SKIP_RETURN_CODE, so CTest shows
 * it Skipped and scripts/test.sh counts it apart, never as passed. skip() and
 * cmocka_run_group_tests() are wrapped here so every test binary gets this
 * without code of its own; skipped tests inside a binary that ran others are
 * listed by cmocka as SKIPPED. */
void ts_note_skip(void);
int ts_run_group(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                 CMFixtureFunction teardown);
#undef skip
#define skip() (ts_note_skip(), _skip(__FILE__, __LINE__))
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(group_tests, group_setup, group_teardown)                                       \
    ts_run_group(#group_tests, group_tests, sizeof(group_tests) / sizeof((group_tests)[0]), group_setup,       \
                 group_teardown)

#endif
