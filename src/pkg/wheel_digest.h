/* Streaming RECORD digests (sha256 / sha384 / sha512). Internal to src/pkg. */
#ifndef CCLFORGE_PKG_WHEEL_DIGEST_H
#define CCLFORGE_PKG_WHEEL_DIGEST_H

/* The low-level calls, declared without deprecation warnings at the 1.1.1
 * API level: the EVP interface would link OpenSSL's provider machinery
 * (3.4 MB) into a cclforge built with a static libcrypto. */
#define OPENSSL_API_COMPAT 10101
#include <openssl/sha.h>
#include <stddef.h>

#include "cclforge/strbuf.h"

enum cf_digest_algo { CF_DIGEST_SHA256, CF_DIGEST_SHA384, CF_DIGEST_SHA512 };

struct cf_digest {
    enum cf_digest_algo algo;
    union {
        SHA256_CTX s256;
        SHA512_CTX s512; /* sha384 too */
    } u;
};

/* RECORD's algorithm names PEP 427 allows; -1 for any other (md5, sha1, ...). */
int cf_digest_algo_named(const char *name, enum cf_digest_algo *algo);
void cf_digest_init(struct cf_digest *d, enum cf_digest_algo algo);
void cf_digest_update(struct cf_digest *d, const void *data, size_t len);
/* Ends the digest and appends it as urlsafe base64 without padding. */
void cf_digest_final_b64(struct cf_digest *d, struct strbuf *out);

#endif
