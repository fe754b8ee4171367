#include "cclforge/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The low-level SHA-256 calls (declared without deprecation warnings at the
 * 1.1.1 API level): with a static libcrypto they pull in the digest alone,
 * where EVP pulls in OpenSSL's provider machinery. */
#define OPENSSL_API_COMPAT 10101
#include <openssl/sha.h>

/* What a path names when it is not a regular file, for messages. */
const char *cf_file_kind_name(unsigned mode)
{
    static const struct {
        unsigned type;
        const char *name;
    } kinds[] = {
        { S_IFIFO, "a FIFO (named pipe)" }, { S_IFSOCK, "a socket" },   { S_IFCHR, "a character device" },
        { S_IFBLK, "a block device" },      { S_IFDIR, "a directory" }, { S_IFLNK, "a symbolic link" },
        { S_IFREG, "a regular file" },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((mode & S_IFMT) == kinds[i].type)
            return kinds[i].name;
    return "not a regular file";
}

static int not_regular(const char *path, unsigned mode, cf_error *err)
{
    return cf_error_set(err, CF_ERR_FORMAT, "%s: is %s, not a regular file; name a regular file", path,
                        cf_file_kind_name(mode));
}

/* fstat of an open descriptor that must be a regular file; closes fd when not. */
static int fstat_regular(int fd, const char *path, struct stat *st, cf_error *err)
{
    if (fstat(fd, st) != 0) {
        int failed = errno;
        close(fd);
        return cf_error_set(err, CF_ERR_IO, "%s: %s", path, strerror(failed));
    }
    if (S_ISREG(st->st_mode))
        return 0;
    close(fd);
    return not_regular(path, st->st_mode, err);
}

/* cf_open_regular, handing back what fstat saw of the opened file. */
static int open_regular(const char *path, struct stat *st, cf_error *err)
{
    /* Opening a FIFO for reading blocks until a writer comes, and opening a
     * device can act on it: stat first and open only regular files. O_NONBLOCK
     * covers a path swapped for a FIFO in between; fstat rechecks what was opened. */
    if (stat(path, st) != 0)
        return cf_error_set(err, errno == ENOENT ? CF_ERR_NOTFOUND : CF_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st->st_mode))
        return not_regular(path, st->st_mode, err);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return cf_error_set(err, errno == ENOENT ? CF_ERR_NOTFOUND : CF_ERR_IO, "%s: %s", path, strerror(errno));
    if (fstat_regular(fd, path, st, err) != 0)
        return -1;
    return fd; /* O_NONBLOCK stays: it changes nothing for a regular file */
}

int cf_open_regular(const char *path, cf_error *err)
{
    struct stat st;
    return open_regular(path, &st, err);
}

int cf_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = ENOSPC;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int cf_read_file(const char *path, size_t max_bytes, struct strbuf *out, cf_error *err)
{
    struct stat st;
    int fd = open_regular(path, &st, err);
    if (fd < 0)
        return -1;
    size_t total = 0, start = out->len;
    /* Read straight into the buffer, sized by the file when it says. */
    size_t chunk = st.st_size > 0 && (uint64_t)st.st_size < max_bytes
                       ? (size_t)st.st_size + 1 : 65536;
    cf_sb_grow(out, chunk);
    for (;;) {
        if (out->alloc - out->len - 1 == 0)
            cf_sb_grow(out, 65536);
        ssize_t n = read(fd, out->buf + out->len, out->alloc - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            cf_sb_setlen(out, start);
            return cf_error_set(err, CF_ERR_IO, "%s: read failed: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        total += (size_t)n;
        out->len += (size_t)n;
        out->buf[out->len] = '\0';
        if (total > max_bytes) {
            close(fd);
            cf_sb_setlen(out, start);
            return cf_error_set(err, CF_ERR_FORMAT, "%s: larger than the %zu bytes allowed", path, max_bytes);
        }
    }
    close(fd);
    return 0;
}

int cf_mkdir_p(const char *path, unsigned mode, cf_error *err)
{
    char *p = cf_strdup(path);
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
            int rc = cf_error_set(err, CF_ERR_IO, "cannot create directory %s: %s", p, strerror(errno));
            free(p);
            return rc;
        }
        p[i] = c;
    }
    free(p);
    if (!cf_is_dir(path))
        return cf_error_set(err, CF_ERR_IO, "%s exists and is not a directory", path);
    return 0;
}

int cf_rm_rf(const char *path, cf_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : cf_error_set(err, CF_ERR_IO, "%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0 && errno != ENOENT)
            return cf_error_set(err, CF_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        return 0;
    }
    DIR *d = opendir(path);
    if (!d)
        return cf_error_set(err, CF_ERR_IO, "%s: %s", path, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char *child = cf_path_join(path, de->d_name);
        if (cf_rm_rf(child, err) != 0)
            rc = -1;
        free(child);
        if (rc)
            break;
    }
    closedir(d);
    if (rc == 0 && rmdir(path) != 0)
        return cf_error_set(err, CF_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    return rc;
}

char *cf_mkdtemp(const char *parent, const char *prefix, cf_error *err)
{
    if (!parent) {
        parent = getenv("TMPDIR");
        if (!parent || !*parent)
            parent = "/tmp";
    }
    char *tmpl = cf_asprintf("%s/%sXXXXXX", parent, prefix ? prefix : "cclforge-");
    if (!mkdtemp(tmpl)) {
        cf_error_set(err, CF_ERR_IO, "cannot create a temporary directory in %s: %s", parent, strerror(errno));
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

int cf_path_exists(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0;
}

int cf_is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cf_is_file(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *cf_path_join(const char *a, const char *b)
{
    if (!a || !*a)
        return cf_strdup(b);
    if (b[0] == '/')
        return cf_strdup(b);
    size_t la = strlen(a);
    return cf_asprintf("%s%s%s", a, a[la - 1] == '/' ? "" : "/", b);
}

char *cf_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return cf_strdup(".");
    if (slash == path)
        return cf_strdup("/");
    return cf_strndup(path, (size_t)(slash - path));
}

const char *cf_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

char *cf_realpath(const char *path)
{
    char *r = realpath(path, NULL);
    if (!r)
        return NULL;
    char *out = cf_strdup(r);
    free(r);
    return out;
}

/* read_name(ctx, buf, size): the name's length, or -1 (errno ERANGE, or
 * the size filled: try bigger) */
static char *name_growing(ssize_t (*read_name)(const char *ctx, char *buf, size_t size), const char *ctx)
{
    for (size_t size = 256; size <= ((size_t)1 << 20); size *= 4) {
        char *buf = cf_xmalloc(size);
        ssize_t n = read_name(ctx, buf, size);
        if (n >= 0 && (size_t)n < size) {
            buf[n] = '\0';
            return buf;
        }
        free(buf);
        if (n < 0 && errno != ERANGE)
            return NULL;
    }
    return NULL;
}

static ssize_t cwd_into(const char *unused, char *buf, size_t size)
{
    (void)unused;
    return getcwd(buf, size) ? (ssize_t)strlen(buf) : -1;
}

static ssize_t link_into(const char *path, char *buf, size_t size)
{
    return readlink(path, buf, size);
}

char *cf_getcwd(void)
{
    return name_growing(cwd_into, NULL);
}

char *cf_readlink(const char *path)
{
    return name_growing(link_into, path);
}

int cf_same_path(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    char *ra = cf_realpath(a), *rb = cf_realpath(b);
    int same = ra && rb && !strcmp(ra, rb);
    free(ra);
    free(rb);
    return same;
}

/* Maps the regular file open on fd, which st describes; closes fd. */
static int map_opened(int fd, const char *path, const struct stat *st, struct cf_mmap *map, cf_error *err)
{
    map->id.dev = (uint64_t)st->st_dev;
    map->id.ino = (uint64_t)st->st_ino;
    map->id.size = (uint64_t)st->st_size;
    map->id.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    map->id.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
    if (st->st_size == 0) {
        close(fd);
        return 0;
    }
    void *p = mmap(NULL, (size_t)st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return cf_error_set(err, CF_ERR_IO, "%s: mmap failed: %s", path, strerror(e));
    map->data = p;
    map->len = (size_t)st->st_size;
    map->guard = cf_mmap_guard_add(p, map->len);
    return 0;
}

int cf_mmap_file(const char *path, struct cf_mmap *map, cf_error *err)
{
    memset(map, 0, sizeof *map);
    map->guard = -1;
    struct stat st;
    int fd = open_regular(path, &st, err);
    if (fd < 0)
        return -1;
    return map_opened(fd, path, &st, map, err);
}

int cf_mmap_fd(int fd, const char *path, struct cf_mmap *map, cf_error *err)
{
    memset(map, 0, sizeof *map);
    map->guard = -1;
    struct stat st;
    if (fstat_regular(fd, path, &st, err) != 0)
        return -1;
    return map_opened(fd, path, &st, map, err);
}

void cf_munmap(struct cf_mmap *map)
{
    if (map->data) {
        cf_mmap_guard_remove(map->guard);
        munmap((void *)map->data, map->len);
    }
    map->data = NULL;
    map->len = 0;
    map->guard = -1;
}

int cf_mmap_faulted(const struct cf_mmap *map)
{
    return map->data && cf_mmap_guard_faulted(map->guard);
}

int cf_mmap_check_intact(const struct cf_mmap *map, const char *name, const char *remedy, cf_error *err)
{
    if (!cf_mmap_faulted(map))
        return 0;
    return cf_error_set(err, CF_ERR_IO, "%s: the file was truncated while it was read (shorter than the %zu bytes mapped): %s",
                        name, map->len, remedy);
}

void cf_hex_encode(const unsigned char *md, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[2 * n] = '\0';
}

void cf_sha256(const void *data, size_t len, unsigned char md[32])
{
    SHA256_CTX ctx; /* not SHA256(): see fs.h */
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, data, len);
    SHA256_Final(md, &ctx);
}

void cf_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[SHA256_DIGEST_LENGTH];
    cf_sha256(data, len, md);
    cf_hex_encode(md, SHA256_DIGEST_LENGTH, hex);
}
