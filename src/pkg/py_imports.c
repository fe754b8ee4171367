/* Import statements of Python source, read as text (pkg/py_imports.h). */
#include "pkg/py_imports.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

static int blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }
static int modchar(char c)
{
    return c == '.' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* text[*i] starts `word` followed by a blank (or, for "import", '(' may follow too). */
static int keyword(const char *t, size_t len, size_t i, const char *word)
{
    size_t n = strlen(word);
    return len - i > n && !memcmp(t + i, word, n) && (blank(t[i + n]) || t[i + n] == '(' || t[i + n] == '\\');
}

static size_t skip_blanks(const char *t, size_t len, size_t i)
{
    while (i < len && blank(t[i]))
        i++;
    return i;
}

/* The names after `import`, into out (at most CF_PY_IMPORT_MAX_NAMES bytes):
 * one logical line, or up to ')' when parenthesised; comments dropped. *i and
 * *line advance past what was read. */
static void read_names(const char *t, size_t len, size_t *i, size_t *line, struct strbuf *out)
{
    size_t k = skip_blanks(t, len, *i);
    int paren = k < len && t[k] == '(';
    if (paren)
        k++;
    while (k < len) {
        char c = t[k];
        if (c == '#') {
            while (k < len && t[k] != '\n')
                k++;
            continue;
        }
        if (c == '\\' && k + 1 < len && t[k + 1] == '\n') {
            k += 2;
            ++*line;
            continue;
        }
        if (c == '\n') {
            if (!paren)
                break;
            ++*line;
            c = ' ';
        } else if (paren && c == ')') {
            k++;
            break;
        }
        if (out->len < CF_PY_IMPORT_MAX_NAMES)
            cf_sb_addc(out, (unsigned char)c < 0x20 ? ' ' : c); /* no NUL or control byte in names */
        k++;
    }
    *i = k;
}

void cf_py_imports_scan(const char *t, size_t len, int (*fn)(void *ctx, const struct cf_py_import *imp), void *ctx)
{
    size_t line = 1;
    struct strbuf names = STRBUF_INIT;
    for (size_t i = 0; i < len;) {
        size_t start_line = line;
        size_t k = skip_blanks(t, len, i);
        int stop = 0;
        if (keyword(t, len, k, "from")) {
            size_t m = skip_blanks(t, len, k + 4), m0 = m;
            while (m < len && modchar(t[m]))
                m++;
            size_t mlen = m - m0;
            m = skip_blanks(t, len, m);
            if (mlen && keyword(t, len, m, "import")) {
                cf_sb_reset(&names);
                size_t at = m + 6;
                read_names(t, len, &at, &line, &names);
                struct cf_py_import imp = { t + m0, mlen, cf_sb_str(&names), names.len, start_line };
                stop = fn(ctx, &imp);
                k = at;
            }
        } else if (keyword(t, len, k, "import")) {
            cf_sb_reset(&names);
            size_t at = k + 6;
            read_names(t, len, &at, &line, &names);
            /* "a.b as c, d": each module once */
            const char *s = cf_sb_str(&names), *end = s + names.len;
            while (s < end && !stop) {
                while (s < end && (blank(*s) || *s == ','))
                    s++;
                const char *m0 = s;
                while (s < end && modchar(*s))
                    s++;
                if (s > m0) {
                    struct cf_py_import imp = { m0, (size_t)(s - m0), NULL, 0, start_line };
                    stop = fn(ctx, &imp);
                }
                while (s < end && *s != ',')
                    s++;
            }
            k = at;
        }
        if (stop)
            break;
        /* to the next line */
        while (k < len && t[k] != '\n')
            k++;
        if (k < len) {
            k++;
            line++;
        }
        i = k;
    }
    cf_sb_release(&names);
}

int cf_py_import_names_has(const char *names, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < len;) {
        while (i < len && (blank(names[i]) || names[i] == ','))
            i++;
        size_t s = i;
        while (i < len && modchar(names[i]))
            i++;
        if (i - s == n && !memcmp(names + s, name, n))
            return 1;
        while (i < len && names[i] != ',')
            i++;
    }
    return 0;
}

char *cf_py_import_resolve(const char *package, const char *module, size_t module_len)
{
    size_t dots = 0;
    while (dots < module_len && module[dots] == '.')
        dots++;
    if (!dots)
        return cf_strndup(module, module_len);
    if (!*package)
        return NULL; /* a relative import outside any package */
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, package);
    for (size_t up = 1; up < dots; up++) { /* "." is the package itself, each more dot one level up */
        char *dot = strrchr(sb.buf, '.');
        if (!dot) {
            cf_sb_release(&sb);
            return NULL; /* above the top-level package */
        }
        cf_sb_setlen(&sb, (size_t)(dot - sb.buf));
    }
    if (dots < module_len) {
        if (sb.len)
            cf_sb_addc(&sb, '.');
        cf_sb_add(&sb, module + dots, module_len - dots);
    }
    return cf_sb_detach(&sb);
}
