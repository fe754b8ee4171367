/* RECORD's digests: sha256, sha384 or sha512 of a member's bytes, fed in
 * pieces as they are decompressed, written as urlsafe base64 without padding
 * (PEP 376 / PEP 427). */
#include "pkg/wheel_digest.h"

#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/wheel.h"

void cf_b64_urlsafe_nopad(const unsigned char *data, size_t len, struct strbuf *out)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];
        cf_sb_addc(out, alphabet[v >> 18 & 63]);
        cf_sb_addc(out, alphabet[v >> 12 & 63]);
        cf_sb_addc(out, alphabet[v >> 6 & 63]);
        cf_sb_addc(out, alphabet[v & 63]);
    }
    if (len - i == 1) {
        unsigned v = (unsigned)data[i] << 16;
        cf_sb_addc(out, alphabet[v >> 18 & 63]);
        cf_sb_addc(out, alphabet[v >> 12 & 63]);
    } else if (len - i == 2) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8;
        cf_sb_addc(out, alphabet[v >> 18 & 63]);
        cf_sb_addc(out, alphabet[v >> 12 & 63]);
        cf_sb_addc(out, alphabet[v >> 6 & 63]);
    }
}

static const struct {
    const char *name;
    enum cf_digest_algo algo;
} algos[] = { { "sha256", CF_DIGEST_SHA256 }, { "sha384", CF_DIGEST_SHA384 }, { "sha512", CF_DIGEST_SHA512 } };

int cf_digest_algo_named(const char *name, enum cf_digest_algo *algo)
{
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++)
        if (!strcmp(name, algos[i].name)) {
            *algo = algos[i].algo;
            return 0;
        }
    return -1;
}

void cf_digest_init(struct cf_digest *d, enum cf_digest_algo algo)
{
    d->algo = algo;
    if (algo == CF_DIGEST_SHA256)
        SHA256_Init(&d->u.s256);
    else if (algo == CF_DIGEST_SHA384)
        SHA384_Init(&d->u.s512);
    else
        SHA512_Init(&d->u.s512);
}

void cf_digest_update(struct cf_digest *d, const void *data, size_t len)
{
    if (d->algo == CF_DIGEST_SHA256)
        SHA256_Update(&d->u.s256, data, len);
    else if (d->algo == CF_DIGEST_SHA384)
        SHA384_Update(&d->u.s512, data, len);
    else
        SHA512_Update(&d->u.s512, data, len);
}

void cf_digest_final_b64(struct cf_digest *d, struct strbuf *out)
{
    unsigned char md[SHA512_DIGEST_LENGTH];
    size_t n = SHA512_DIGEST_LENGTH;
    if (d->algo == CF_DIGEST_SHA256) {
        SHA256_Final(md, &d->u.s256);
        n = SHA256_DIGEST_LENGTH;
    } else if (d->algo == CF_DIGEST_SHA384) {
        SHA384_Final(md, &d->u.s512);
        n = SHA384_DIGEST_LENGTH;
    } else {
        SHA512_Final(md, &d->u.s512);
    }
    cf_b64_urlsafe_nopad(md, n, out);
}

void cf_wheel_sha256_b64(const void *data, size_t len, struct strbuf *out)
{
    struct cf_digest d;
    cf_digest_init(&d, CF_DIGEST_SHA256);
    cf_digest_update(&d, data, len);
    cf_digest_final_b64(&d, out);
}
