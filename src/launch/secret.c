/* The per-run secret every rendezvous connection proves it knows, and HMAC-SHA256. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cclforge/envp.h"
#include "cclforge/fs.h"
#include "cclforge/launch.h"
#include "cclforge/syscompat.h"

#define OPENSSL_API_COMPAT 10101
#include <openssl/sha.h>

/* RFC 2104 over SHA-256 (block 64 bytes), with the low-level SHA256_* calls
 * (why: cf_sha256 in cclforge/fs.h). */
void cf_launch_hmac(const unsigned char *key, size_t key_len, const void *msg, size_t msg_len,
                    unsigned char out[32])
{
    unsigned char k[64] = { 0 }, pad[64], inner[32];
    if (key_len > sizeof k)
        cf_sha256(key, key_len, k);
    else
        memcpy(k, key, key_len);
    SHA256_CTX ctx;
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, pad, sizeof pad);
    SHA256_Update(&ctx, msg, msg_len);
    SHA256_Final(inner, &ctx);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, pad, sizeof pad);
    SHA256_Update(&ctx, inner, sizeof inner);
    SHA256_Final(out, &ctx);
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int cf_launch_secret_random(struct cf_launch_secret *s, char hex[65], cf_error *err)
{
    memset(s, 0, sizeof *s);
    size_t got = 0;
    while (got < sizeof s->key) {
        ssize_t n = cf_getrandom(s->key + got, sizeof s->key - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return cf_error_set(err, CF_ERR_INTERNAL, "getrandom: %s", strerror(errno));
        got += (size_t)n;
    }
    if (hex)
        cf_hex_encode(s->key, sizeof s->key, hex);
    return 0;
}

int cf_launch_secret_for(const struct cf_launch_info *info, char *const *envp, struct cf_launch_secret *s,
                         cf_error *err)
{
    memset(s, 0, sizeof *s);
    const char *hex = cf_envp_get(envp, CF_LAUNCH_SECRET_ENV);
    if (hex) {
        int ok = strlen(hex) == 2 * sizeof s->key;
        for (size_t i = 0; ok && i < sizeof s->key; i++) {
            int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
            ok = hi >= 0 && lo >= 0;
            if (ok)
                s->key[i] = (unsigned char)(hi << 4 | lo);
        }
        if (!ok)
            return cf_error_set(err, CF_ERR_USAGE,
                                "%s must be 64 hex digits (e.g. from `openssl rand -hex 32`), the same on every rank",
                                CF_LAUNCH_SECRET_ENV);
        return 0;
    }
    /* no shared secret given: bind connections to this job at least, from what every
     * rank of it sees alike */
    char material[512];
    int n = snprintf(material, sizeof material, "cclforge-derived-secret\n%s\n%s\n%s\n%d",
                     info->launcher ? info->launcher : "", info->run_id, info->master_addr, info->master_port);
    cf_sha256(material, (size_t)n < sizeof material ? (size_t)n : sizeof material - 1, s->key);
    s->derived = 1;
    return 0;
}
