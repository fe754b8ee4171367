/* SHA-256 of a file: of an open one, read from its start (for trees walked
 * through directory descriptors, where no path is re-resolved), and of a path. */
#include "cclforge/fs.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define OPENSSL_API_COMPAT 10101 /* as fs.c: the digest alone, no EVP providers */
#include <openssl/sha.h>

int cf_sha256_fd(int fd, const char *name, char hex[65], cf_error *err)
{
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    unsigned char buf[1 << 16];
    for (off_t off = 0;;) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cf_error_set(err, CF_ERR_IO, "%s: read failed: %s", name, strerror(errno));
        if (n == 0)
            break;
        SHA256_Update(&ctx, buf, (size_t)n);
        off += n;
    }
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256_Final(md, &ctx);
    cf_hex_encode(md, SHA256_DIGEST_LENGTH, hex);
    return 0;
}

int cf_sha256_file(const char *path, char hex[65], cf_error *err)
{
    int fd = cf_open_regular(path, err);
    if (fd < 0)
        return -1;
    int rc = cf_sha256_fd(fd, path, hex, err);
    close(fd);
    return rc;
}
