/* What a user's text may look like before it reaches make, cmake, docker or
 * git. make expands $(...) in command-line variables and NCCL's Makefiles
 * paste BUILDDIR, CUDA_HOME and ONLY_FUNCS unquoted into recipes run by sh -c
 * (and into target names and $(patsubst) patterns), so no quoting can make
 * every character safe: such text is refused, naming the character and the fix. */
#include "nccl_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"

/* git transports a --source may use, whatever the user's git configuration
 * (protocol.ext.allow, url.*.insteadOf): GIT_ALLOW_PROTOCOL overrides it. */
const char *const cf_nccl_git_env[] = { "GIT_TERMINAL_PROMPT=0", CF_NCCL_GIT_ALLOW_PROTOCOL, NULL };

static const char *const git_schemes[] = { "https://", "ssh://", "git://", "file://" };

char *cf_nccl_refused_char(const char *s, int (*ok)(unsigned char c))
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p && ok(*p))
        p++;
    if (!*p)
        return NULL;
    unsigned char c = *p;
    static const struct {
        unsigned char c;
        const char *words;
    } named[] = { { ' ', "a space" }, { '\t', "a tab" }, { '\n', "a newline" }, { '\r', "a carriage return" } };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].c == c)
            return cf_strdup(named[i].words);
    return c < 0x20 || c == 0x7f ? cf_asprintf("the control character \\x%02x", c) : cf_asprintf("'%c'", c);
}

/* Letters, digits, / . _ + @ - and non-ASCII bytes (UTF-8 names): nothing
 * make, sh or gcc's -Wl, splitting treats specially. */
static int make_path_char(unsigned char c)
{
    return isalnum(c) || strchr("/._+@-", c) || c >= 0x80;
}

int cf_nccl_check_make_path(const char *what, const char *path, const char *fix, cf_error *err)
{
    char *c = cf_nccl_refused_char(path, make_path_char);
    if (!c)
        return 0;
    cf_error_set(err, CF_ERR_USAGE,
                 "%s %s contains %s: make and NCCL's Makefiles expand $ and hand paths to sh unquoted, so only "
                 "letters, digits and / . _ + @ - are safe there; %s",
                 what, path, c, fix);
    free(c);
    return -1;
}

char *cf_nccl_physical_path(const char *abs)
{
    /* The longest existing prefix resolved, the rest (not created yet) appended. */
    size_t cut = strlen(abs);
    for (;;) {
        char *head = cf_strndup(abs, cut ? cut : 1);
        char *real = cf_realpath(head);
        free(head);
        if (real) {
            char *out = cf_asprintf("%s%s", strcmp(real, "/") ? real : "", cut ? abs + cut : abs);
            free(real);
            return out;
        }
        if (cut == 0)
            return cf_strdup(abs);
        while (cut > 0 && abs[cut - 1] != '/')
            cut--;
        if (cut > 0)
            cut--;
    }
}

/* The bytes of an --only-funcs expression: words, globs, groups, unions. */
static int only_funcs_char(unsigned char c)
{
    return isalnum(c) || strchr("_*| ()", c);
}

/* ONLY_FUNCS is a pattern for NCCL's src/device/generate.py (and RCCL's): words
 * (collectives, reduction ops, types, algorithms, protocols: letters, digits,
 * '_'), '*' globs, '(' ')' groups, '|' unions, separated by spaces. */
int cf_nccl_check_only_funcs(const char *expr, cf_error *err)
{
    static const char example[] = "e.g. \"SendRecv\" or \"AllReduce Sum f32 * *|SendRecv\"";
    if (strlen(expr) > 4096)
        return cf_error_set(err, CF_ERR_USAGE, "--only-funcs is longer than 4096 characters");
    int depth = 0;
    for (const unsigned char *p = (const unsigned char *)expr; *p; p++) {
        if (*p != '(' && *p != ')' && only_funcs_char(*p)) {
            continue;
        } else if (*p == '(') {
            depth++;
        } else if (*p == ')') {
            if (--depth < 0)
                return cf_error_set(err, CF_ERR_USAGE, "--only-funcs '%s' closes a group it never opened (%s)", expr,
                                    example);
        } else {
            char *c = cf_nccl_refused_char((const char *)p, only_funcs_char); /* *p, in words */
            cf_error_set(err, CF_ERR_USAGE,
                         "--only-funcs contains %s: NCCL's kernel generator takes words (collectives, reduction "
                         "ops, types, algorithms, protocols), '*' globs, '(...)' groups and '|' unions, %s",
                         c, example);
            free(c);
            return -1;
        }
    }
    if (depth)
        return cf_error_set(err, CF_ERR_USAGE, "--only-funcs '%s' leaves a '(' group open (%s)", expr, example);
    return 0;
}

/* ---- image references, as github.com/distribution/reference parses them ---- */

static size_t span_of(const char *s, size_t n, int (*ok)(int))
{
    size_t i = 0;
    while (i < n && ok((unsigned char)s[i]))
        i++;
    return i;
}

static int lower_alnum(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int digit_char(int c)
{
    return c >= '0' && c <= '9';
}

/* path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | "__" | "-"+ */
static int path_component(const char *s, size_t n)
{
    size_t i = span_of(s, n, lower_alnum);
    if (!i)
        return 0;
    while (i < n) {
        size_t sep = 0;
        if (s[i] == '.' || (s[i] == '_' && (i + 1 >= n || s[i + 1] != '_')))
            sep = 1;
        else if (s[i] == '_')
            sep = 2;
        else
            while (i + sep < n && s[i + sep] == '-')
                sep++;
        if (!sep)
            return 0;
        i += sep;
        size_t run = span_of(s + i, n - i, lower_alnum);
        if (!run)
            return 0;
        i += run;
    }
    return 1;
}

/* domain := host [':' port]; host := domain-name | '[' IPv6 ']'; domain-component
 * := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9] */
static int domain(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    size_t host = n;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close || close == s + 1)
            return 0;
        for (const char *p = s + 1; p < close; p++)
            if (!isxdigit((unsigned char)*p) && *p != ':')
                return 0;
        host = (size_t)(close - s) + 1;
        colon = host < n ? s + host : NULL;
        if (colon && *colon != ':')
            return 0;
    } else {
        if (colon)
            host = (size_t)(colon - s);
        size_t i = 0;
        while (i < host) {
            size_t run = 0;
            while (i + run < host && (isalnum((unsigned char)s[i + run]) || s[i + run] == '-'))
                run++;
            if (!run || s[i] == '-' || s[i + run - 1] == '-')
                return 0;
            i += run;
            if (i < host && (s[i] != '.' || i + 1 == host))
                return 0;
            i += i < host;
        }
    }
    if (colon) {
        size_t port = n - (size_t)(colon - s) - 1;
        if (!port || span_of(colon + 1, port, digit_char) != port)
            return 0;
    }
    return host > 0;
}

/* tag := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127} */
static int tag_ok(const char *s, size_t n)
{
    if (!n || n > 128 || !(isalnum((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
            return 0;
    return 1;
}

/* digest := algorithm ':' hex{32,}; algorithm := [A-Za-z][A-Za-z0-9]* ([+._-][A-Za-z][A-Za-z0-9]*)* */
static int digest_ok(const char *s)
{
    const char *colon = strchr(s, ':');
    if (!colon || strlen(colon + 1) < 32 || strspn(colon + 1, "0123456789abcdefABCDEF") != strlen(colon + 1))
        return 0;
    for (const char *p = s; p < colon;) {
        if (!isalpha((unsigned char)*p))
            return 0;
        while (p < colon && isalnum((unsigned char)*p))
            p++;
        if (p < colon && !strchr("+._-", *p++))
            return 0;
        if (p == colon && strchr("+._-", p[-1]))
            return 0;
    }
    return 1;
}

static int reference_ok(const char *ref)
{
    size_t len = strlen(ref);
    const char *at = strchr(ref, '@');
    if (at && !digest_ok(at + 1))
        return 0;
    size_t name_tag = at ? (size_t)(at - ref) : len;
    const char *last_slash = NULL;
    for (const char *p = ref; p < ref + name_tag; p++)
        if (*p == '/')
            last_slash = p;
    const char *colon = NULL;
    for (const char *p = last_slash ? last_slash : ref; p < ref + name_tag; p++)
        if (*p == ':')
            colon = p;
    size_t name = colon ? (size_t)(colon - ref) : name_tag;
    if (colon && !tag_ok(colon + 1, name_tag - name - 1))
        return 0;
    if (!name || name > 255)
        return 0;
    /* name := [domain '/'] path-component ('/' path-component)* */
    size_t start = 0;
    const char *first_slash = memchr(ref, '/', name);
    if (first_slash && !path_component(ref, (size_t)(first_slash - ref))) {
        if (!domain(ref, (size_t)(first_slash - ref)))
            return 0;
        start = (size_t)(first_slash - ref) + 1;
    }
    while (start <= name) {
        const char *slash = memchr(ref + start, '/', name - start);
        size_t end = slash ? (size_t)(slash - ref) : name;
        if (!path_component(ref + start, end - start))
            return 0;
        start = end + 1;
    }
    return 1;
}

int cf_docker_reference_check(const char *ref, cf_error *err)
{
    if (reference_ok(ref))
        return 0;
    return cf_error_set(err, CF_ERR_USAGE,
                        "--docker-image '%s' is not an image reference: [registry[:port]/]name[:tag][@digest], the "
                        "name in lowercase letters, digits and . _ - separators, e.g. nvidia/cuda:13.0.0-devel-"
                        "ubuntu22.04",
                        ref);
}

/* ---- git sources ---- */

int cf_nccl_is_git_url(const char *source)
{
    return strstr(source, "://") != NULL || cf_starts_with(source, "git@");
}

static int git_url_char(unsigned char c)
{
    return c > ' ' && c != 0x7f;
}

int cf_nccl_check_git_url(const char *url, cf_error *err)
{
    char *c = cf_nccl_refused_char(url, git_url_char);
    if (c) {
        cf_error_set(err, CF_ERR_USAGE, "--source URL contains %s: a git URL has none", c);
        free(c);
        return -1;
    }
    if (cf_starts_with(url, "git@")) /* scp-like ssh: git@host:path */
        return strchr(url, ':') ? 0
                                : cf_error_set(err, CF_ERR_USAGE, "--source %s: write git@HOST:PATH or ssh://...", url);
    for (size_t i = 0; i < sizeof git_schemes / sizeof git_schemes[0]; i++)
        if (cf_starts_with(url, git_schemes[i]))
            return 0;
    return cf_error_set(err, CF_ERR_USAGE,
                        "--source %s: cclforge fetches only over https://, ssh:// (or git@HOST:PATH), git:// and "
                        "file:// (other git transports such as ext:: run commands); use one of those",
                        url);
}
