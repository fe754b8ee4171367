/* NCCL/RCCL version banners in bytes. NCCL's init.cc builds the literal
 *   "NCCL version " STR(NCCL_MAJOR) "." STR(NCCL_MINOR) "." STR(NCCL_PATCH)
 *   NCCL_SUFFIX "+cuda" STR(CUDA_MAJOR) "." STR(CUDA_MINOR)
 * "so that running strings on the lib can quickly reveal the version"; RCCL
 * uses "RCCL version " ... "+hip" HIP major.minor (older) or "RCCL version : "
 * X.Y.Z NCCL_SUFFIX (newer). */
#include "cclforge/commlib.h"
#include "cclforge/strbuf.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *prefix;
    enum cf_commlib lib;
} banner_prefixes[] = {
    { "NCCL version ", CF_COMMLIB_NCCL },
    { "RCCL version ", CF_COMMLIB_RCCL },
};

/* Toolkit markers after the version: "+cuda13.0", "+hip6.2", " compiled with CUDA 13.0". */
static const struct {
    const char *marker;
    const char *toolkit;
} toolkit_markers[] = {
    { "+cuda", "cuda" },
    { "+hip", "hip" },
    { " compiled with CUDA ", "cuda" },
    { " compiled with HIP ", "hip" },
};

enum { MAX_BANNER = 127, MAX_NUMBER = 100000 };

unsigned cf_nccl_version_code(unsigned major, unsigned minor, unsigned patch)
{
    if (major <= 2 && minor <= 8)
        return major * 1000 + minor * 100 + patch;
    return major * 10000 + minor * 100 + patch;
}

char *cf_nccl_code_version(unsigned code)
{
    if (code < 10000) /* NCCL 2.8 and older: X*1000 + Y*100 + Z */
        return cf_asprintf("%u.%u.%u", code / 1000, code % 1000 / 100, code % 100);
    return cf_asprintf("%u.%u.%u", code / 10000, code % 10000 / 100, code % 100);
}

/* Reads a decimal number at s[*pos..len); -1 if none or absurdly large. */
static int read_number(const char *s, size_t len, size_t *pos, unsigned *out)
{
    size_t p = *pos;
    unsigned v = 0;
    while (p < len && s[p] >= '0' && s[p] <= '9') {
        v = v * 10 + (unsigned)(s[p] - '0');
        if (v >= MAX_NUMBER)
            return -1;
        p++;
    }
    if (p == *pos)
        return -1;
    *pos = p;
    *out = v;
    return 0;
}

static int is_banner_char(char c)
{
    return c > ' ' && c < 127;
}

static int starts_at(const char *s, size_t len, size_t pos, const char *word)
{
    size_t n = strlen(word);
    return len - pos >= n && memcmp(s + pos, word, n) == 0;
}

int cf_banner_parse(const char *s, size_t len, struct cf_commlib_banner *out)
{
    memset(out, 0, sizeof(*out));
    /* A banner is one C string: stop at its NUL, and keep it short. */
    const char *nul = memchr(s, 0, len);
    if (nul)
        len = (size_t)(nul - s);
    if (len > MAX_BANNER)
        len = MAX_BANNER;
    size_t pos = 0;
    for (size_t i = 0; i < sizeof(banner_prefixes) / sizeof(banner_prefixes[0]); i++) {
        if (starts_at(s, len, 0, banner_prefixes[i].prefix)) {
            out->lib = banner_prefixes[i].lib;
            pos = strlen(banner_prefixes[i].prefix);
        }
    }
    if (out->lib == CF_COMMLIB_NONE)
        return -1;
    if (starts_at(s, len, pos, ": "))
        pos += 2;
    if (read_number(s, len, &pos, &out->major) < 0 || pos >= len || s[pos++] != '.' ||
        read_number(s, len, &pos, &out->minor) < 0 || pos >= len || s[pos++] != '.' ||
        read_number(s, len, &pos, &out->patch) < 0)
        goto not_banner;
    /* The suffix runs to the toolkit marker or the end of the word. */
    size_t suffix_start = pos;
    size_t marker = 0;
    int toolkit = -1;
    for (; pos < len; pos++) {
        for (size_t t = 0; t < sizeof(toolkit_markers) / sizeof(toolkit_markers[0]); t++)
            if (starts_at(s, len, pos, toolkit_markers[t].marker)) {
                toolkit = (int)t;
                marker = strlen(toolkit_markers[t].marker);
                break;
            }
        if (toolkit >= 0 || !is_banner_char(s[pos]))
            break;
    }
    snprintf(out->suffix, sizeof(out->suffix), "%.*s", (int)(pos - suffix_start), s + suffix_start);
    if (toolkit >= 0) {
        size_t p = pos + marker;
        if (read_number(s, len, &p, &out->toolkit_major) == 0 && p < len && s[p] == '.' &&
            (p++, read_number(s, len, &p, &out->toolkit_minor) == 0)) {
            snprintf(out->toolkit, sizeof(out->toolkit), "%s", toolkit_markers[toolkit].toolkit);
            pos = p;
        } else {
            out->toolkit_major = out->toolkit_minor = 0;
        }
    }
    /* NCCL's VERSION_STRING names its toolkit or ends after the suffix; prose
     * such as libtorch's "requires NCCL version 2.27.0 or later" does neither. */
    if (toolkit < 0 && pos != len)
        goto not_banner;
    out->version_code = cf_nccl_version_code(out->major, out->minor, out->patch);
    snprintf(out->text, sizeof(out->text), "%.*s", (int)len, s);
    return 0;
not_banner:
    memset(out, 0, sizeof(*out));
    return -1;
}

size_t cf_banner_scan(const uint8_t *buf, size_t len, uint64_t base, cf_banner_visit_fn visit,
                      void *ctx)
{
    static const char needle[] = "CCL version ";
    const size_t nlen = sizeof(needle) - 1;
    size_t count = 0;
    size_t pos = 1; /* the needle follows the 'N' or 'R' */
    /* memchr for the needle's 'v' (vectorised, several times faster than
     * glibc's generic memmem on hundreds of MB of .rodata), then compare. */
    const size_t v_at = 4; /* needle[4] == 'v' */
    while (pos < len && len - pos >= nlen) {
        const uint8_t *v = memchr(buf + pos + v_at, 'v', len - pos - v_at);
        if (!v || (size_t)(v - buf) - v_at + nlen > len)
            break;
        const uint8_t *hit = v - v_at;
        if (memcmp(hit, needle, nlen) != 0) {
            pos = (size_t)(hit - buf) + 1;
            continue;
        }
        size_t at = (size_t)(hit - buf) - 1;
        struct cf_commlib_banner b;
        if (cf_banner_parse((const char *)buf + at, len - at, &b) == 0) {
            b.offset = base + at;
            count++;
            if (visit && visit(&b, ctx))
                break;
        }
        pos = (size_t)(hit - buf) + nlen;
    }
    return count;
}

size_t cf_commlib_copies(const struct cf_commlib_identity *const *ids, size_t n)
{
    size_t copies = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] && (ids[i]->found || ids[i]->library != CF_COMMLIB_NONE))
            copies++;
    return copies;
}
