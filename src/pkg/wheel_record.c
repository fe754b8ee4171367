/* RECORD (CSV), METADATA/WHEEL headers, wheel file names and platform tags.
 * All input is untrusted: lengths are explicit and every read is bounded. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cclforge/wheel.h"

/* One CSV field starting at text[*pos] (RFC 4180 quoting); stops at ',' or end of line. */
static int csv_field(const char *text, size_t end, size_t *pos, struct strbuf *field)
{
    size_t p = *pos;
    cf_sb_reset(field);
    if (p < end && text[p] == '"') {
        p++;
        for (;;) {
            if (p >= end)
                return -1; /* unterminated quote */
            if (text[p] == '"') {
                if (p + 1 < end && text[p + 1] == '"') {
                    cf_sb_addc(field, '"');
                    p += 2;
                    continue;
                }
                p++;
                break;
            }
            cf_sb_addc(field, text[p++]);
        }
        if (p < end && text[p] != ',')
            return -1; /* junk after a closing quote */
    } else {
        while (p < end && text[p] != ',') {
            if (text[p] == '"')
                return -1;
            cf_sb_addc(field, text[p++]);
        }
    }
    *pos = p;
    return 0;
}

static int parse_size(const char *s, long long *out)
{
    if (!*s) {
        *out = -1;
        return 0;
    }
    long long v = 0;
    for (const char *c = s; *c; c++) {
        if (!isdigit((unsigned char)*c) || v > (long long)1e15)
            return -1;
        v = v * 10 + (*c - '0');
    }
    *out = v;
    return 0;
}

/* The line starting at pos: *end is where it ends without "\n" or "\r\n";
 * returns where the next line starts (past len when this is the last). */
static size_t next_line(const char *text, size_t len, size_t pos, size_t *end)
{
    size_t eol = pos;
    while (eol < len && text[eol] != '\n')
        eol++;
    *end = eol > pos && text[eol - 1] == '\r' ? eol - 1 : eol;
    return eol + 1;
}

int cf_record_parse(const char *text, size_t len, struct cf_record *rec, cf_error *err)
{
    memset(rec, 0, sizeof *rec);
    size_t alloc = 0, line_no = 0, pos = 0;
    struct strbuf field = STRBUF_INIT;
    while (pos < len) {
        size_t end, next = next_line(text, len, pos, &end);
        line_no++;
        if (end == pos) { /* blank line */
            pos = next;
            continue;
        }
        char *fields[3] = { 0 };
        size_t nf = 0, p = pos;
        int bad = 0;
        for (;;) {
            if (nf == 3 || csv_field(text, end, &p, &field) < 0) {
                bad = 1;
                break;
            }
            if (memchr(field.buf ? field.buf : "", '\0', field.len)) {
                bad = 1;
                break;
            }
            fields[nf++] = cf_strndup(cf_sb_str(&field), field.len);
            if (p >= end)
                break;
            p++; /* the comma */
        }
        if (!bad && nf != 3)
            bad = 1;
        struct cf_record_entry e = { 0 };
        if (!bad && !fields[0][0])
            bad = 1;
        if (!bad) {
            e.path = fields[0];
            fields[0] = NULL;
            if (fields[1][0]) {
                char *eq = strchr(fields[1], '=');
                if (!eq || eq == fields[1] || !eq[1])
                    bad = 1;
                else {
                    e.algo = cf_strndup(fields[1], (size_t)(eq - fields[1]));
                    e.digest = cf_strdup(eq + 1);
                }
            }
            if (!bad && parse_size(fields[2], &e.size) < 0)
                bad = 1;
        }
        for (size_t i = 0; i < 3; i++)
            free(fields[i]);
        if (bad) {
            free(e.path);
            free(e.algo);
            free(e.digest);
            cf_sb_release(&field);
            cf_record_release(rec);
            return cf_error_set(err, CF_ERR_FORMAT,
                                "RECORD line %zu is not 'path,algorithm=digest,size' (a CSV line with 3 fields)",
                                line_no);
        }
        if (rec->n == alloc) {
            alloc = alloc ? alloc * 2 : 16;
            rec->entries = cf_xrealloc(rec->entries, alloc * sizeof *rec->entries);
        }
        rec->entries[rec->n++] = e;
        pos = next;
    }
    cf_sb_release(&field);
    return 0;
}

void cf_record_release(struct cf_record *rec)
{
    for (size_t i = 0; i < rec->n; i++) {
        free(rec->entries[i].path);
        free(rec->entries[i].algo);
        free(rec->entries[i].digest);
    }
    free(rec->entries);
    memset(rec, 0, sizeof *rec);
}

void cf_record_format_line(struct strbuf *out, const char *path, const char *sha256_b64, long long size)
{
    if (strpbrk(path, ",\"\r\n")) {
        cf_sb_addc(out, '"');
        for (const char *c = path; *c; c++) {
            if (*c == '"')
                cf_sb_addc(out, '"');
            cf_sb_addc(out, *c);
        }
        cf_sb_addc(out, '"');
    } else {
        cf_sb_adds(out, path);
    }
    if (sha256_b64)
        cf_sb_addf(out, ",sha256=%s,%lld\n", sha256_b64, size);
    else
        cf_sb_adds(out, ",,\n");
}

/* Continuation lines are appended to one growing buffer per value (not a
 * fresh copy of the value per line): 200,000 of them stay linear. */
int cf_kv_parse(const char *text, size_t len, struct cf_kv *kv, cf_error *err)
{
    memset(kv, 0, sizeof *kv);
    size_t alloc = 0, pos = 0, line_no = 0;
    struct strbuf value = STRBUF_INIT; /* the value of the last header, still open to continuations */
    while (pos < len) {
        size_t end, next = next_line(text, len, pos, &end);
        line_no++;
        if (end == pos)
            break; /* the body (description) starts after the first blank line */
        if (memchr(text + pos, '\0', end - pos)) {
            cf_sb_release(&value);
            cf_kv_release(kv);
            return cf_error_set(err, CF_ERR_FORMAT, "line %zu holds a NUL byte", line_no);
        }
        if (text[pos] == ' ' || text[pos] == '\t') {
            if (kv->n == 0) {
                cf_kv_release(kv);
                return cf_error_set(err, CF_ERR_FORMAT, "line %zu: continuation line before any header", line_no);
            }
            cf_sb_addc(&value, '\n');
            cf_sb_add(&value, text + pos, end - pos);
            pos = next;
            continue;
        }
        const char *colon = memchr(text + pos, ':', end - pos);
        if (!colon || colon == text + pos) {
            cf_sb_release(&value);
            cf_kv_release(kv);
            return cf_error_set(err, CF_ERR_FORMAT, "line %zu is not a 'Key: value' header", line_no);
        }
        if (kv->n)
            kv->values[kv->n - 1] = cf_sb_detach(&value);
        const char *v = colon + 1;
        while (v < text + end && (*v == ' ' || *v == '\t'))
            v++;
        if (kv->n == alloc) {
            alloc = alloc ? alloc * 2 : 16;
            kv->keys = cf_xrealloc(kv->keys, alloc * sizeof *kv->keys);
            kv->values = cf_xrealloc(kv->values, alloc * sizeof *kv->values);
        }
        kv->keys[kv->n] = cf_strndup(text + pos, (size_t)(colon - (text + pos)));
        kv->values[kv->n] = NULL;
        kv->n++;
        cf_sb_add(&value, v, (size_t)(text + end - v));
        pos = next;
    }
    if (kv->n)
        kv->values[kv->n - 1] = cf_sb_detach(&value);
    return 0;
}

void cf_kv_release(struct cf_kv *kv)
{
    for (size_t i = 0; i < kv->n; i++) {
        free(kv->keys[i]);
        free(kv->values[i]);
    }
    free(kv->keys);
    free(kv->values);
    memset(kv, 0, sizeof *kv);
}

const char *cf_kv_get(const struct cf_kv *kv, const char *key)
{
    for (size_t i = 0; i < kv->n; i++)
        if (!strcasecmp(kv->keys[i], key))
            return kv->values[i];
    return NULL;
}

int cf_wheel_name_parse(const char *filename, struct cf_wheel_name *wn, cf_error *err)
{
    memset(wn, 0, sizeof *wn);
    const char *base = strrchr(filename, '/');
    base = base ? base + 1 : filename;
    if (!cf_ends_with(base, ".whl"))
        return cf_error_set(err, CF_ERR_FORMAT, "%s: a wheel's file name ends in .whl", base);
    struct strvec parts = STRVEC_INIT;
    char *stem = cf_strndup(base, strlen(base) - 4);
    cf_strvec_split(&parts, stem, "-", 1);
    free(stem);
    if (parts.n != 5 && parts.n != 6) {
        cf_strvec_clear(&parts);
        return cf_error_set(err, CF_ERR_FORMAT,
                            "%s: not a wheel file name (name-version[-build]-python-abi-platform.whl)", base);
    }
    for (size_t i = 0; i < parts.n; i++) {
        const char *why = !parts.v[i][0] ? "an empty field" : NULL;
        for (const unsigned char *b = (const unsigned char *)parts.v[i]; *b && !why; b++)
            if (*b <= ' ' || *b == 0x7f)
                why = "a space or control byte";
        if (!why && i == 2 && parts.n == 6 && !isdigit((unsigned char)parts.v[i][0]))
            why = "a build tag not starting with a digit";
        if (why) {
            cf_strvec_clear(&parts);
            return cf_error_set(err, CF_ERR_FORMAT,
                                "%s: %s in the wheel file name (packaging.utils.parse_wheel_filename refuses it)", base,
                                why);
        }
    }
    size_t k = 0;
    wn->dist = cf_strdup(parts.v[k++]);
    wn->version = cf_strdup(parts.v[k++]);
    if (parts.n == 6)
        wn->build = cf_strdup(parts.v[k++]);
    wn->python_tag = cf_strdup(parts.v[k++]);
    wn->abi_tag = cf_strdup(parts.v[k++]);
    wn->platform_tag = cf_strdup(parts.v[k++]);
    cf_strvec_clear(&parts);
    return 0;
}

void cf_wheel_name_release(struct cf_wheel_name *wn)
{
    free(wn->dist);
    free(wn->version);
    free(wn->build);
    free(wn->python_tag);
    free(wn->abi_tag);
    free(wn->platform_tag);
    memset(wn, 0, sizeof *wn);
}

int cf_platform_glibc_ceiling(const char *tag)
{
    static const struct {
        const char *prefix;
        int code;
    } legacy[] = { { "manylinux1_", 2005 }, { "manylinux2010_", 2012 }, { "manylinux2014_", 2017 } };
    if (!tag)
        return 0;
    /* a compressed tag set ("a.b") allows the lowest ceiling of its parts */
    int best = 0;
    struct strvec parts = STRVEC_INIT;
    cf_strvec_split(&parts, tag, ".", 0);
    for (size_t i = 0; i < parts.n; i++) {
        int code = 0;
        unsigned major, minor;
        char rest[8];
        for (size_t j = 0; j < sizeof legacy / sizeof legacy[0]; j++)
            if (cf_starts_with(parts.v[i], legacy[j].prefix))
                code = legacy[j].code;
        if (!code && sscanf(parts.v[i], "manylinux_%u_%u_%7s", &major, &minor, rest) == 3 && major < 10 &&
            minor < 1000)
            code = (int)(major * 1000 + minor);
        if (code && (!best || code < best))
            best = code;
    }
    cf_strvec_clear(&parts);
    return best;
}

int cf_wheel_tags_expand(const struct cf_wheel_name *wn, size_t max, struct strvec *out)
{
    struct strvec py = STRVEC_INIT, abi = STRVEC_INIT, plat = STRVEC_INIT;
    cf_strvec_split(&py, wn->python_tag, ".", 1);
    cf_strvec_split(&abi, wn->abi_tag, ".", 1);
    cf_strvec_split(&plat, wn->platform_tag, ".", 1);
    int rc = 0;
    if (py.n * abi.n * plat.n > max) {
        rc = -1;
    } else {
        for (size_t i = 0; i < py.n; i++)
            for (size_t j = 0; j < abi.n; j++)
                for (size_t k = 0; k < plat.n; k++)
                    cf_strvec_pushf(out, "%s-%s-%s", py.v[i], abi.v[j], plat.v[k]);
    }
    cf_strvec_clear(&py);
    cf_strvec_clear(&abi);
    cf_strvec_clear(&plat);
    return rc;
}

char *cf_platform_arch(const char *tag)
{
    /* manylinux_2_17_x86_64, manylinux2014_x86_64, linux_x86_64: the arch
     * follows the policy words; of a compressed set, the first tag's */
    static const char *const prefixes[] = { "manylinux1_", "manylinux2010_", "manylinux2014_", "linux_",
                                            "musllinux_" };
    const char *end = strchr(tag, '.');
    size_t len = end ? (size_t)(end - tag) : strlen(tag);
    const char *arch = NULL;
    unsigned a, b;
    int used = 0;
    if (sscanf(tag, "manylinux_%u_%u_%n", &a, &b, &used) == 2 && used > 0)
        arch = tag + used;
    for (size_t i = 0; !arch && i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (cf_starts_with(tag, prefixes[i]))
            arch = tag + strlen(prefixes[i]);
    if (arch && cf_starts_with(tag, "musllinux_") && sscanf(arch, "%u_%u_%n", &a, &b, &used) == 2 && used > 0)
        arch += used;
    if (!arch || (size_t)(arch - tag) >= len)
        return NULL;
    return cf_strndup(arch, len - (size_t)(arch - tag));
}

char *cf_dist_canonical(const char *name)
{
    struct strbuf sb = STRBUF_INIT;
    int in_sep = 0;
    for (const char *c = name; *c; c++) {
        if (*c == '-' || *c == '_' || *c == '.') {
            if (!in_sep)
                cf_sb_addc(&sb, '-');
            in_sep = 1;
        } else {
            cf_sb_addc(&sb, (char)tolower((unsigned char)*c));
            in_sep = 0;
        }
    }
    return cf_sb_detach(&sb);
}
