/* libzip's functions under cclforge's names, forwarding to libzip.so.4
 * loaded on first use (src/pkg/zip_loader.c). Types and constants are
 * libzip's own, from <zip.h>. */
#ifndef CCLFORGE_PKG_ZIP_LOADER_H
#define CCLFORGE_PKG_ZIP_LOADER_H

#include <time.h>
#include <zip.h>

zip_t *cf_zip_open(const char *path, int flags, int *errorp);
/* Owns fd on success only (libzip's rule): close it yourself when it fails. */
zip_t *cf_zip_fdopen(int fd, int flags, int *errorp);
const char *cf_zip_file_strerror(zip_file_t *zf);
int cf_zip_close(zip_t *za);
const char *cf_zip_strerror(zip_t *za);
const char *cf_zip_error_strerror(zip_error_t *e);
zip_int64_t cf_zip_get_num_entries(zip_t *za, zip_flags_t flags);
const char *cf_zip_get_name(zip_t *za, zip_uint64_t index, zip_flags_t flags);
int cf_zip_stat_index(zip_t *za, zip_uint64_t index, zip_flags_t flags, zip_stat_t *st);
zip_file_t *cf_zip_fopen_index(zip_t *za, zip_uint64_t index, zip_flags_t flags);
zip_int64_t cf_zip_fread(zip_file_t *zf, void *buf, zip_uint64_t n);
int cf_zip_fclose(zip_file_t *zf);
int cf_zip_file_get_external_attributes(zip_t *za, zip_uint64_t index, zip_flags_t flags, zip_uint8_t *opsys, zip_uint32_t *attributes);
zip_source_t *cf_zip_source_buffer(zip_t *za, const void *data, zip_uint64_t len, int freep);
zip_int64_t cf_zip_file_add(zip_t *za, const char *name, zip_source_t *src, zip_flags_t flags);
int cf_zip_file_set_external_attributes(zip_t *za, zip_uint64_t index, zip_flags_t flags, zip_uint8_t opsys, zip_uint32_t attributes);
int cf_zip_file_set_mtime(zip_t *za, zip_uint64_t index, time_t mtime, zip_flags_t flags);
int cf_zip_set_file_compression(zip_t *za, zip_uint64_t index, zip_int32_t method, zip_uint32_t level);
void cf_zip_error_init_with_code(zip_error_t *e, int code);
void cf_zip_stat_init(zip_stat_t *st);
void cf_zip_discard(zip_t *za);
void cf_zip_error_fini(zip_error_t *e);
void cf_zip_source_free(zip_source_t *src);

#endif
