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

/* Opens a regular file for reading (O_RDONLY|O_CLOEXEC) and returns the
 * descriptor. Anything else (FIFO, socket, device, directory) is refused
 * before it is opened, with an error naming the path and what it is; every
 * read of a user-named path goes through here, so none can block or touch a
 * device. -1 with err set otherwise. */
int cf_open_regular(const char *path, cf_error *err);
/* "a FIFO (named pipe)", "a socket", "a character device", ... for st_mode. */
const char *cf_file_kind_name(unsigned mode);
/* Reads a whole file, refusing files larger than max_bytes. Appends to out. */
int cf_read_file(const char *path, size_t max_bytes, struct strbuf *out, cf_error *err);
/* Writes all of data to fd, through short writes and EINTR: 0, or -1 with
 * errno set (ENOSPC when the file took nothing). */
int cf_write_all(int fd, const void *data, size_t len);
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
/* The working directory and the target of the link at path (as getcwd and
 * readlink give them), malloc'd; NULL on failure. A small buffer first,
 * grown only for long names: getcwd(NULL, 0) takes 4 KB of heap (and a
 * PATH_MAX array as many of stack), pages a short run faults in for them. */
char *cf_getcwd(void);
char *cf_readlink(const char *path);
/* 1 when both paths exist and name the same file or directory, however
 * spelled ("x/../y", symlinks); 0 otherwise or when either is NULL. */
int cf_same_path(const char *a, const char *b);
/* The real path of the running executable: /proc/self/exe, or where there is
 * no /proc (a chroot, some sandboxes) the path execve was given
 * (AT_EXECFN). NULL when neither resolves. Caller frees. */
char *cf_self_exe(void);
/* "/a/./b//../c/" -> "/a/c" on the string alone (abs is taken as absolute);
 * *escaped (may be NULL) is set to 1 when a ".." climbed above "/". Caller frees. */
char *cf_path_normalize(const char *abs, int *escaped);
/* The host path of `path` (absolute, as seen inside root) with every symlink
 * resolved inside root, as chroot(root) would: an absolute link target
 * starts again at root, ".." stops at it. Components that do not exist are
 * kept as written. NULL after 40 links (ELOOP). Caller frees. */
char *cf_path_in_root(const char *root, const char *path);
/* path made absolute against the current directory, symlinks left in place. Caller frees. */
char *cf_path_absolute(const char *path);

/* A read-only memory map of a whole file; len 0 files map to data == NULL.
 * Reads of it never raise SIGBUS: a page the file no longer backes (it was
 * truncated while mapped) reads as zeros and the map is marked faulted. */
struct cf_mmap {
    const uint8_t *data;
    size_t len;
    int guard; /* slot in the SIGBUS guard (src/util/mmap_guard.c); -1 none */
    struct cf_file_id {      /* the mapped file as fstat saw it when it was opened */
        uint64_t dev, ino, size;
        int64_t mtime_ns, ctime_ns;
    } id;
};
int cf_mmap_file(const char *path, struct cf_mmap *map, cf_error *err);
/* The same for a descriptor already open (it is closed here, mapped or not);
 * path labels errors. */
int cf_mmap_fd(int fd, const char *path, struct cf_mmap *map, cf_error *err);
void cf_munmap(struct cf_mmap *map);
/* 1 when a read of the mapping found the file shorter than when it was mapped. */
int cf_mmap_faulted(const struct cf_mmap *map);
/* 0, or -1 with err "NAME: the file was truncated while it was read (...):
 * REMEDY" once cf_mmap_faulted: the one wording of that error for every
 * mapped file (an ELF object, the ld.so.cache). */
int cf_mmap_check_intact(const struct cf_mmap *map, const char *name, const char *remedy, cf_error *err);

/* The guard itself, for a mapping made elsewhere: returns a slot (or -1 when
 * none is free, the mapping then being unguarded), the fault flag of a slot,
 * and the release that must come before the munmap. */
int cf_mmap_guard_add(const void *start, size_t len);
/* The handler is installed at the first mapping; a program (or test harness)
 * that sets its own SIGBUS handler later calls this to put ours back in
 * front (it chains to theirs). */
void cf_mmap_guard_reinstall(void);
int cf_mmap_guard_faulted(int slot);
void cf_mmap_guard_remove(int slot);

/* The cache root: $CCLFORGE_HOME, else $XDG_CACHE_HOME/cclforge (absolute),
 * else $HOME/.cache/cclforge (absolute); NULL when none is set (cron, systemd
 * units): never a shared directory. Caller frees. */
char *cf_cache_root(void);
/* The cache root when it and every directory above it may be trusted
 * (cf_dir_trusted): what is kept there is reported as fact (doctor's probes,
 * inspect's scans, bridge objects). NULL otherwise, with why (may be NULL)
 * saying which directory and the fix: the caller then runs without a cache. */
char *cf_cache_root_usable(cf_error *why);
/* 1 when the file changed less than two seconds ago: a second change within
 * the same timestamp tick would not show, so no cache may store it yet. */
int cf_file_id_racy(const struct cf_file_id *id);
/* Keeps a cache directory bounded: removes the oldest regular files (by
 * mtime) `depth` levels below dir (1: its own files, 2: those of its
 * subdirectories) until at most max_files remain and their sizes sum to at
 * most max_bytes. Names starting with '.' (stamps, temporaries) stay.
 * Returns how many files were removed. */
size_t cf_cache_prune(const char *dir, int depth, size_t max_files, uint64_t max_bytes);

/* Lowercase hex SHA-256 of a file (65 bytes incl. NUL written to hex); src/util/sha256_fd.c. */
int cf_sha256_file(const char *path, char hex[65], cf_error *err);
void cf_sha256_hex(const void *data, size_t len, char hex[65]);
/* SHA-256 of a buffer. Every digest goes through the low-level SHA*_Init
 * calls: OpenSSL 3's one-shot SHA256() routes through EVP, which would link
 * the whole provider machinery (~700 objects) into the static binary. */
void cf_sha256(const void *data, size_t len, unsigned char md[32]);
/* libcrypto's CPU probe, so that its digests take the CPU's fast code
 * (src/util/crypto_cpu.c says why it is called by hand). Once, before any
 * thread hashes: the CLI calls it at start. */
void cf_crypto_cpu_probe(void);
/* n bytes as 2n lowercase hex digits and a NUL. */
void cf_hex_encode(const unsigned char *bytes, size_t n, char *hex);
/* The same for an open file from offset 0 (name for messages); src/util/sha256_fd.c. */
int cf_sha256_fd(int fd, const char *name, char hex[65], cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
