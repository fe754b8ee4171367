/* libzip, loaded the first time a wheel command calls it. Linking it would
 * make every cclforge run load libzip.so.4 and, through it, libcrypto.so.3
 * and libbz2, for the two commands that write or read wheels: a machine
 * without libzip still runs every other command.
 *
 * Each libzip function the wheel code calls is defined here as cf_<name>
 * with libzip's own prototype (from <zip.h>; cclforge must not define
 * libzip's own names, which would clash with a real libzip in the same
 * program) and forwards to the loaded library. dlopen of a
 * library already loaded returns the same handle, so nothing is cached here.
 * Without libzip.so.4, calls fail the way libzip reports failures, and the
 * error text says what to install. */
#include <dlfcn.h>
#include <string.h>
#include <time.h>
#include "pkg/zip_loader.h"

#ifdef CCLFORGE_LIBZIP_LINKED
/* The release build links a static libzip (scripts/dist-deps.sh): nothing to
 * load, and each cf_ name calls libzip's own. The executable exports none of
 * them, so a libzip another library brings cannot clash. */
#define FORWARD(ret, name, fail, params, args) \
    ret cf_##name params \
    { \
        return name args; \
    }
#define FORWARD_VOID(name, missing, params, args) \
    void cf_##name params \
    { \
        name args; \
    }
#else
#define LIBZIP_SONAME "libzip.so.4"
#define LIBZIP_MISSING LIBZIP_SONAME " cannot be loaded: install libzip4 (Debian/Ubuntu) or libzip"

static void *zip_symbol(const char *name)
{
    void *lib = dlopen(LIBZIP_SONAME, RTLD_NOW | RTLD_LOCAL);
    return lib ? dlsym(lib, name) : NULL;
}

/* ret cf_name(params) { forward to libzip's name(args), or return fail } */
#define FORWARD(ret, name, fail, params, args) \
    ret cf_##name params \
    { \
        ret(*real) params; \
        void *sym = zip_symbol(#name); \
        if (!sym) \
            return fail; \
        memcpy(&real, &sym, sizeof real); \
        return real args; \
    }

#define FORWARD_VOID(name, missing, params, args) \
    void cf_##name params \
    { \
        void(*real) params; \
        void *sym = zip_symbol(#name); \
        if (!sym) { \
            missing; \
            return; \
        } \
        memcpy(&real, &sym, sizeof real); \
        real args; \
    }

#endif

/* an open that cannot reach libzip fails as libzip's own would */
#define OPEN_FAILED (errorp ? (void)(*errorp = ZIP_ER_INTERNAL) : (void)0, (zip_t *)NULL)
FORWARD(zip_t *, zip_open, OPEN_FAILED, (const char *path, int flags, int *errorp), (path, flags, errorp))
/* zip_fdopen owns fd on success; on failure the caller keeps it. */
FORWARD(zip_t *, zip_fdopen, OPEN_FAILED, (int fd, int flags, int *errorp), (fd, flags, errorp))
FORWARD(int, zip_close, -1, (zip_t *za), (za))
FORWARD(const char *, zip_file_strerror, LIBZIP_MISSING, (zip_file_t *zf), (zf))
FORWARD_VOID(zip_discard, (void)za, (zip_t *za), (za))
FORWARD(const char *, zip_strerror, LIBZIP_MISSING, (zip_t *za), (za))
FORWARD_VOID(zip_error_init_with_code, (memset(e, 0, sizeof *e), e->zip_err = code), (zip_error_t *e, int code),
             (e, code))
FORWARD(const char *, zip_error_strerror, LIBZIP_MISSING, (zip_error_t *e), (e))
FORWARD_VOID(zip_error_fini, (void)e, (zip_error_t *e), (e))
FORWARD(zip_int64_t, zip_get_num_entries, -1, (zip_t *za, zip_flags_t flags), (za, flags))
FORWARD(const char *, zip_get_name, NULL, (zip_t *za, zip_uint64_t index, zip_flags_t flags), (za, index, flags))
FORWARD_VOID(zip_stat_init, memset(st, 0, sizeof *st), (zip_stat_t *st), (st))
FORWARD(int, zip_stat_index, -1, (zip_t *za, zip_uint64_t index, zip_flags_t flags, zip_stat_t *st),
        (za, index, flags, st))
FORWARD(zip_file_t *, zip_fopen_index, NULL, (zip_t *za, zip_uint64_t index, zip_flags_t flags), (za, index, flags))
FORWARD(zip_int64_t, zip_fread, -1, (zip_file_t *zf, void *buf, zip_uint64_t n), (zf, buf, n))
FORWARD(int, zip_fclose, -1, (zip_file_t *zf), (zf))
FORWARD(int, zip_file_get_external_attributes, -1,
        (zip_t *za, zip_uint64_t index, zip_flags_t flags, zip_uint8_t *opsys, zip_uint32_t *attributes),
        (za, index, flags, opsys, attributes))
FORWARD(zip_source_t *, zip_source_buffer, NULL, (zip_t *za, const void *data, zip_uint64_t len, int freep),
        (za, data, len, freep))
FORWARD_VOID(zip_source_free, (void)src, (zip_source_t *src), (src))
FORWARD(zip_int64_t, zip_file_add, -1, (zip_t *za, const char *name, zip_source_t *src, zip_flags_t flags),
        (za, name, src, flags))
FORWARD(int, zip_file_set_external_attributes, -1,
        (zip_t *za, zip_uint64_t index, zip_flags_t flags, zip_uint8_t opsys, zip_uint32_t attributes),
        (za, index, flags, opsys, attributes))
FORWARD(int, zip_file_set_mtime, -1, (zip_t *za, zip_uint64_t index, time_t mtime, zip_flags_t flags),
        (za, index, mtime, flags))
FORWARD(int, zip_set_file_compression, -1, (zip_t *za, zip_uint64_t index, zip_int32_t method, zip_uint32_t level),
        (za, index, method, level))
