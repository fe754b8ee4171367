/* NCCL release tags (vX.Y.Z-N), version codes, and finding tags in a repository. */
#include "nccl_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"

/* Reads a decimal number of 1..4 digits at *p; -1 when there is none. */
static int read_number(const char **p)
{
    const char *s = *p;
    int value = 0, digits = 0;
    while (isdigit((unsigned char)*s) && digits < 5) {
        value = value * 10 + (*s - '0');
        s++;
        digits++;
    }
    if (digits == 0 || digits > 4)
        return -1;
    *p = s;
    return value;
}

/* Parses [v]X.Y.Z[-N]; returns 0 and sets has_v / rev (-1 when no -N). */
static int parse_loose(const char *text, struct cf_nccl_tag *tag, int *has_v)
{
    const char *p = text;
    *has_v = 0;
    if (*p == 'v') {
        *has_v = 1;
        p++;
    }
    int major = read_number(&p);
    if (major < 0 || *p++ != '.')
        return -1;
    int minor = read_number(&p);
    if (minor < 0 || minor > 99 || *p++ != '.')
        return -1;
    int patch = read_number(&p);
    if (patch < 0 || patch > 99)
        return -1;
    int rev = -1;
    if (*p == '-') {
        p++;
        rev = read_number(&p);
        if (rev < 0)
            return -1;
    }
    if (*p)
        return -1;
    tag->major = major;
    tag->minor = minor;
    tag->patch = patch;
    tag->rev = rev;
    return 0;
}

int cf_nccl_tag_parse(const char *text, struct cf_nccl_tag *tag, cf_error *err)
{
    int has_v = 0;
    if (!text || parse_loose(text, tag, &has_v) < 0 || !has_v || tag->rev < 0)
        return cf_error_set(err, CF_ERR_USAGE,
                            "'%s' is not an NCCL release tag: write vX.Y.Z-N as upstream tags it (e.g. v2.28.9-1)",
                            text ? text : "");
    return 0;
}

int cf_nccl_version_parse(const char *text, struct cf_nccl_tag *tag, cf_error *err)
{
    int has_v = 0;
    if (!text || parse_loose(text, tag, &has_v) < 0)
        return cf_error_set(err, CF_ERR_FORMAT, "'%s' is not an NCCL version (X.Y.Z)", text ? text : "");
    return 0;
}

void cf_nccl_tag_format(const struct cf_nccl_tag *tag, struct strbuf *out)
{
    cf_sb_addf(out, "v%d.%d.%d", tag->major, tag->minor, tag->patch);
    if (tag->rev >= 0)
        cf_sb_addf(out, "-%d", tag->rev);
}

void cf_nccl_version_format(const struct cf_nccl_tag *tag, struct strbuf *out)
{
    cf_sb_addf(out, "%d.%d.%d", tag->major, tag->minor, tag->patch);
}

int cf_nccl_tag_version_code(const struct cf_nccl_tag *tag)
{
    return (int)cf_nccl_version_code((unsigned)tag->major, (unsigned)tag->minor, (unsigned)tag->patch);
}

int cf_nccl_tag_pick_newest(const char *const *names, size_t n, const struct cf_nccl_tag *want,
                            struct cf_nccl_tag *out, cf_error *err)
{
    int best = -1;
    struct strbuf same_minor = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        if (cf_starts_with(name, "refs/tags/"))
            name += strlen("refs/tags/");
        if (cf_ends_with(name, "^{}"))
            continue; /* peeled annotated tag: the plain entry is listed too */
        struct cf_nccl_tag t;
        if (cf_nccl_tag_parse(name, &t, NULL) < 0)
            continue;
        if (t.major == want->major && t.minor == want->minor) {
            if (t.patch == want->patch) {
                if (t.rev > best)
                    best = t.rev;
            } else if (same_minor.len < 200) {
                cf_sb_addf(&same_minor, "%s%s", same_minor.len ? ", " : "", name);
            }
        }
    }
    if (best < 0) {
        struct strbuf v = STRBUF_INIT;
        cf_nccl_version_format(want, &v);
        cf_error_set(err, CF_ERR_NOTFOUND, "no tag v%s-N exists in the source%s%s; pass --tag explicitly",
                     cf_sb_str(&v), same_minor.len ? " (nearby: " : "", same_minor.len ? cf_sb_str(&same_minor) : "");
        cf_sb_release(&v);
        cf_sb_release(&same_minor);
        return -1;
    }
    cf_sb_release(&same_minor);
    *out = *want;
    out->rev = best;
    return 0;
}

int cf_git_list_tags(const char *url, struct strvec *names, cf_error *err)
{
    const char *argv[] = { "git", "ls-remote", "--tags", "--refs", "--", url, NULL };
    struct cf_spawn_opts o = cf_spawn_probe_opts(120);
    o.env_set = cf_nccl_git_env;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    if (cf_spawn_run(argv, &o, &r, err) < 0)
        return cf_error_prefix(err, "listing the tags of %s", url);
    if (!cf_spawn_ok(&r)) {
        char *how = cf_spawn_describe(&r);
        cf_sb_rtrim(&r.err);
        const char *msg = cf_sb_str(&r.err);
        const char *last = strrchr(msg, '\n');
        cf_error_set(err, CF_ERR_FAILED,
                     "cannot list the tags of %s (git ls-remote: %s: %s); check the URL and the network, or pass "
                     "--tag and --source DIR|TARBALL",
                     url, how, last ? last + 1 : msg);
        free(how);
        cf_spawn_result_release(&r);
        return -1;
    }
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    for (size_t i = 0; i < lines.n; i++) {
        const char *tab = strchr(lines.v[i], '\t');
        if (tab)
            cf_strvec_push(names, tab + 1);
    }
    cf_strvec_clear(&lines);
    cf_spawn_result_release(&r);
    return 0;
}

/* The value of "NAME := value" (or "=") in a makefile fragment; NULL when absent. */
static char *make_var(const char *text, const char *name)
{
    size_t nlen = strlen(name);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *p = line;
        while (p < line + len && isspace((unsigned char)*p))
            p++;
        if ((size_t)(line + len - p) > nlen && !strncmp(p, name, nlen) &&
            (isspace((unsigned char)p[nlen]) || p[nlen] == ':' || p[nlen] == '=')) {
            const char *q = p + nlen;
            while (q < line + len && (isspace((unsigned char)*q) || *q == ':' || *q == '?'))
                q++;
            if (q < line + len && *q == '=') {
                q++;
                while (q < line + len && isspace((unsigned char)*q))
                    q++;
                const char *end = line + len;
                while (end > q && isspace((unsigned char)end[-1]))
                    end--;
                return cf_strndup(q, (size_t)(end - q));
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    return NULL;
}

int cf_nccl_source_version(const char *src_dir, struct cf_nccl_tag *tag, char **suffix, cf_error *err)
{
    char *path = cf_path_join(src_dir, "makefiles/version.mk");
    struct strbuf text = STRBUF_INIT;
    int rc = cf_read_file(path, 1 << 16, &text, err);
    if (rc == 0) {
        static const char *const names[] = { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" };
        int values[3];
        for (int i = 0; i < 3 && rc == 0; i++) {
            char *v = make_var(cf_sb_str(&text), names[i]);
            char *end = NULL;
            long n = v ? strtol(v, &end, 10) : -1;
            if (!v || *v == 0 || *end || n < 0 || n > 9999)
                rc = cf_error_set(err, CF_ERR_FORMAT, "%s: %s is missing or not a number; is this an NCCL source tree?",
                                  path, names[i]);
            else
                values[i] = (int)n;
            free(v);
        }
        if (rc == 0) {
            tag->major = values[0];
            tag->minor = values[1];
            tag->patch = values[2];
            char *rev = make_var(cf_sb_str(&text), "PKG_REVISION");
            tag->rev = rev && *rev && isdigit((unsigned char)*rev) ? atoi(rev) : -1;
            free(rev);
            if (suffix) {
                char *s = make_var(cf_sb_str(&text), "NCCL_SUFFIX");
                *suffix = s ? s : cf_strdup("");
            }
        }
    } else {
        cf_error_prefix(err, "reading the NCCL version of source %s", src_dir);
    }
    cf_sb_release(&text);
    free(path);
    return rc;
}
