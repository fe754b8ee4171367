/* Compilers on PATH and in toolkits, with versions; nvcc's accepted host compilers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "env/env_internal.h"

/* The newest host compiler major each nvcc release accepts, from the CUDA
 * Installation Guide for Linux ("Supported Compilers") and each release's
 * include/crt/host_config.h. A local toolkit's host_config.h is parsed and wins;
 * this table serves injected surveys and trees without the header. */
static const struct {
    int cuda_major, cuda_minor; /* first release with these limits */
    int gcc_max, clang_max;
} nvcc_host_table[] = {
    { 11, 0, 9, 9 },   { 11, 1, 10, 10 }, { 11, 2, 10, 11 }, { 11, 4, 11, 12 },
    { 11, 6, 11, 13 }, { 11, 8, 11, 14 }, { 12, 0, 12, 14 }, { 12, 2, 12, 15 },
    { 12, 3, 12, 16 }, { 12, 4, 13, 17 }, { 12, 6, 13, 18 }, { 12, 8, 14, 19 },
    { 13, 0, 15, 20 },
};

static int table_row(int major, int minor)
{
    int row = -1;
    for (size_t i = 0; i < sizeof nvcc_host_table / sizeof nvcc_host_table[0]; i++) {
        int ma = nvcc_host_table[i].cuda_major, mi = nvcc_host_table[i].cuda_minor;
        if (ma < major || (ma == major && mi <= minor))
            row = (int)i;
    }
    /* A release newer than the table is not assumed to accept more than the last row. */
    return row;
}

int nvcc_host_gcc_max(int cuda_major, int cuda_minor)
{
    int r = table_row(cuda_major, cuda_minor);
    return r < 0 ? 0 : nvcc_host_table[r].gcc_max;
}

int nvcc_host_clang_max(int cuda_major, int cuda_minor)
{
    int r = table_row(cuda_major, cuda_minor);
    return r < 0 ? 0 : nvcc_host_table[r].clang_max;
}

/* host_config.h has "#if __GNUC__ > 15" (error beyond) and
 * "#if (__clang_major__ >= 21) || ..." for plain clang hosts. */
static void parse_host_config(const char *path, int *gcc_max, int *clang_max)
{
    struct strbuf sb = STRBUF_INIT;
    if (cf_read_file(path, 1 << 20, &sb, NULL) == 0) {
        const char *p = strstr(sb.buf, "#if __GNUC__ > ");
        if (p)
            *gcc_max = parse_small(p + strlen("#if __GNUC__ > "), 1000);
        p = strstr(sb.buf, "#if (__clang_major__ >= ");
        if (p)
            *clang_max = parse_small(p + strlen("#if (__clang_major__ >= "), 1000) - 1;
    }
    sb_release(&sb);
}

static void split_version(struct cf_compiler *c)
{
    if (!c->version)
        return;
    c->major = parse_small(c->version, 100000);
    const char *dot = strchr(c->version, '.');
    c->minor = dot ? parse_small(dot + 1, 100000) : 0;
}

static char *dotted_after(const char *text, const char *marker)
{
    const char *p = strstr(text, marker);
    if (!p)
        return NULL;
    p += strlen(marker);
    while (*p == ' ')
        p++;
    size_t n = strspn(p, "0123456789.");
    while (n && p[n - 1] == '.')
        n--;
    return n ? cf_strndup(p, n) : NULL;
}

/* How to ask each compiler for its version. */
static const struct {
    const char *name;
    const char *arg;
    const char *marker; /* NULL: the whole output is the version */
} compiler_table[] = {
    { "gcc", "-dumpfullversion", NULL },
    { "g++", "-dumpfullversion", NULL },
    { "clang", "--version", "clang version" },
    { "nvcc", "--version", ", V" },
    { "hipcc", "--version", "HIP version:" },
};

static void add_compiler(struct cf_survey *s, const char *name, const char *path, const char *arg, const char *marker)
{
    for (size_t i = 0; i < s->n_compilers; i++)
        if (!strcmp(s->compilers[i].name, name))
            return; /* first one (PATH) is the one a build uses */
    const char *argv[] = { path, arg, NULL };
    char *out = cf_capture(argv, 15);
    struct cf_compiler *c = survey_add_compiler(s);
    c->name = cf_strdup(name);
    c->path = cf_strdup(path);
    if (out)
        c->version = marker ? dotted_after(out, marker) : dotted_after(out, "");
    free(out);
    split_version(c);
    if (strcmp(name, "nvcc"))
        return;
    /* nvcc: the host compiler range. bin/nvcc -> include/crt/host_config.h */
    char *bin = cf_dirname(path);
    char *root = cf_dirname(bin);
    char *hc = cf_path_join(root, "include/crt/host_config.h");
    parse_host_config(hc, &c->host_gcc_max, &c->host_clang_max);
    if (c->host_gcc_max > 0) {
        c->host_range_source = cf_strdup(hc);
    } else if (c->major) {
        c->host_gcc_max = nvcc_host_gcc_max(c->major, c->minor);
        c->host_clang_max = nvcc_host_clang_max(c->major, c->minor);
        c->host_range_source = cf_strdup("table (docs/doctor.md)");
    }
    free(hc);
    free(root);
    free(bin);
}

void probe_compilers(const struct cf_survey_opts *opts, struct cf_survey *s)
{
    (void)opts;
    for (size_t i = 0; i < sizeof compiler_table / sizeof compiler_table[0]; i++) {
        char *path = cf_which(compiler_table[i].name);
        if (path)
            add_compiler(s, compiler_table[i].name, path, compiler_table[i].arg, compiler_table[i].marker);
        free(path);
    }
    /* A toolkit's compiler that is not on PATH still matters for builds. */
    for (size_t t = 0; t < s->n_toolkits; t++) {
        const char *cc = s->toolkits[t].compiler;
        if (!cc)
            continue;
        const char *base = cf_basename(cc);
        for (size_t i = 0; i < sizeof compiler_table / sizeof compiler_table[0]; i++)
            if (!strcmp(base, compiler_table[i].name))
                add_compiler(s, base, cc, compiler_table[i].arg, compiler_table[i].marker);
    }
}
