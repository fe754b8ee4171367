/* Files and paths. */
#ifndef CCLFORGE_FS_H
#define CCLFORGE_FS_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a whole file, refusing files larger than max_bytes. Appends to out. */
int cf_read_file(const char *path, size_t max_bytes, struct strbuf *out, cf_error *err);
/* Writes data to path (0644) with the safe atomic writer, cclforge/atomic_file.h. */
int cf_write_file_atomic(const char *path, const void *data, size_t len, cf_error *err);
int cf_mkdir_p(const char *path, unsigned mode, cf_error *err);
/* Removes a file or a directory tree; missing is not an error. Never follows symlinks. */
int cf_rm_rf(const char *path, cf_error *err);
/* Creates a fresh private directory "<parent>/<prefix>XXXXXX" (parent NULL = $TMPDIR or /tmp). */
char *cf_mkdtemp(const char *parent, const char *prefix, cf_error *err);

int cf_path_exists(const char *path);  /* anything, following links */
int cf_is_dir(const char *path);
int cf_is_file(const char *path);      /* regular file, following links */
char *cf_path_join(const char *a, const char *b);
/* The directory part ("." when none) and the last component. */
char *cf_dirname(const char *path);
const char *cf_basename(const char *path);
/* Canonical absolute path, or NULL. Caller frees. */
char *cf_realpath(const char *path);
/* "/a/./b//../c/" -> "/a/c" on the string alone (abs is taken as absolute);
 * *escaped (may be NULL) is set to 1 when a ".." climbed above "/". Caller frees. */
char *cf_path_normalize(const char *abs, int *escaped);
/* path made absolute against the current directory, symlinks left in place. Caller frees. */
char *cf_path_absolute(const char *path);

/* A read-only memory map of a whole file; len 0 files map to data == NULL. */
struct cf_mmap {
    const uint8_t *data;
    size_t len;
};
int cf_mmap_file(const char *path, struct cf_mmap *map, cf_error *err);
void cf_munmap(struct cf_mmap *map);

/* Lowercase hex SHA-256 of a file (65 bytes incl. NUL written to hex). */
int cf_sha256_file(const char *path, char hex[65], cf_error *err);
void cf_sha256_hex(const void *data, size_t len, char hex[65]);
/* The same for an open file from offset 0 (name for messages); src/util/sha256_fd.c. */
int cf_sha256_fd(int fd, const char *name, char hex[65], cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
