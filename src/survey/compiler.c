/* Compilers on PATH and in toolkits, with versions; nvcc's accepted host compilers.
 * cf_compiler_probe is the one way cclforge asks a compiler for its version
 * (doctor, the bridge's compiler gate, the NCCL build manifest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/depcache.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "survey/survey_internal.h"

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

int cf_nvcc_host_gcc_max(int cuda_major, int cuda_minor)
{
    int r = table_row(cuda_major, cuda_minor);
    return r < 0 ? 0 : nvcc_host_table[r].gcc_max;
}

/* Newest clang major nvcc of that CUDA version accepts (table; 0 = unknown). */
static int nvcc_host_clang_max(int cuda_major, int cuda_minor)
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
            *gcc_max = cf_parse_small(p + strlen("#if __GNUC__ > "), 1000);
        p = strstr(sb.buf, "#if (__clang_major__ >= ");
        if (p)
            *clang_max = cf_parse_small(p + strlen("#if (__clang_major__ >= "), 1000) - 1;
    }
    cf_sb_release(&sb);
}

static void split_version(struct cf_compiler *c)
{
    if (!c->version)
        return;
    c->major = cf_parse_small(c->version, 100000);
    const char *dot = strchr(c->version, '.');
    c->minor = dot ? cf_parse_small(dot + 1, 100000) : 0;
}

static char *dotted_after(const char *text, const char *marker)
{
    const char *p = strstr(text, marker);
    if (!p)
        return NULL;
    return cf_version_at(p + strlen(marker));
}

/* The whole line of text that contains `at`. */
static char *line_around(const char *text, const char *at)
{
    const char *start = at;
    while (start > text && start[-1] != '\n')
        start--;
    return cf_strndup(start, strcspn(start, "\n"));
}

/* GNU style: the first token of the line shaped like N.N ("g++ (GCC) 8.5.0 20210514",
 * "g++ (Debian 12.2.0-14) 12.2.0"). */
static char *first_dotted_token(const char *line)
{
    for (const char *c = line; *c; c++) {
        int at_token = c == line || c[-1] == ' ' || c[-1] == '(';
        size_t digits = strspn(c, "0123456789");
        if (at_token && digits && c[digits] == '.')
            return cf_version_at(c);
    }
    return NULL;
}

/* How each family says its version in `--version` output, most specific first:
 * hipcc prints a clang line as well; GNU compilers have no marker. */
static const struct {
    const char *family;
    const char *marker; /* text just before the version; "": first_dotted_token of the first line */
} version_markers[] = {
    { "hipcc", "HIP version:" },
    { "nvcc", ", V" },
    { "clang", "clang version" },
    { "gcc", "" },
};

/* nvcc: the host compiler range. bin/nvcc -> include/crt/host_config.h, else the table. */
static void nvcc_host_range(struct cf_compiler *c)
{
    char *bin = cf_dirname(c->path);
    char *root = cf_dirname(bin);
    char *hc = cf_path_join(root, "include/crt/host_config.h");
    parse_host_config(hc, &c->host_gcc_max, &c->host_clang_max);
    if (c->host_gcc_max > 0) {
        c->host_range_source = cf_strdup(hc);
    } else if (c->major) {
        c->host_gcc_max = cf_nvcc_host_gcc_max(c->major, c->minor);
        c->host_clang_max = nvcc_host_clang_max(c->major, c->minor);
        c->host_range_source = cf_strdup("table (docs/doctor.md)");
    }
    free(hc);
    free(root);
    free(bin);
}

/* `path --version`, remembered per binary when use_cache (its output is a
 * function of the binary: the entry depends on the file itself). */
static char *version_output(const char *path, int use_cache)
{
    const char *argv[] = { path, "--version", NULL };
    char *real = use_cache ? cf_realpath(path) : NULL;
    if (!real)
        return cf_capture(argv, 15);
    struct strbuf sb = STRBUF_INIT;
    char *out = NULL;
    if (cf_depcache_get("compiler", real, strlen(real), &sb)) {
        out = cf_sb_detach(&sb);
    } else if ((out = cf_capture(argv, 15)) != NULL) {
        const char *deps[] = { real, NULL };
        cf_depcache_put("compiler", real, strlen(real), out, strlen(out), deps);
    }
    cf_sb_release(&sb);
    free(real);
    return out;
}

int cf_compiler_probe(const char *path, struct cf_compiler *c, cf_error *err)
{
    return cf_compiler_probe_cached(path, 0, c, err);
}

int cf_compiler_probe_cached(const char *path, int use_cache, struct cf_compiler *c, cf_error *err)
{
    memset(c, 0, sizeof *c);
    c->name = cf_strdup(cf_basename(path));
    c->path = cf_strdup(path);
    char *out = version_output(path, use_cache);
    if (!out)
        return cf_error_set(err, CF_ERR_FAILED, "%s --version failed: is it a working compiler?", path);
    for (size_t i = 0; i < sizeof version_markers / sizeof version_markers[0]; i++) {
        const char *marker = version_markers[i].marker[0] ? version_markers[i].marker : NULL;
        const char *at = marker ? strstr(out, marker) : out;
        if (!at)
            continue;
        c->family = version_markers[i].family;
        c->banner = line_around(out, at);
        c->version = marker ? dotted_after(at, marker) : first_dotted_token(c->banner);
        break;
    }
    free(out);
    split_version(c);
    if (c->family && !strcmp(c->family, "nvcc"))
        nvcc_host_range(c);
    if (!c->version)
        return cf_error_set(err, CF_ERR_FORMAT, "%s --version printed no version cclforge recognises (\"%s\")", path,
                            c->banner ? c->banner : "");
    return 0;
}

void cf_compiler_release(struct cf_compiler *c)
{
    free(c->name);
    free(c->path);
    free(c->version);
    free(c->banner);
    free(c->host_range_source);
    memset(c, 0, sizeof *c);
}

/* The compilers doctor reports, by the names a build looks up. */
static const char *const surveyed_compilers[] = { "gcc", "g++", "clang", "nvcc", "hipcc" };

static void add_compiler(const struct cf_survey_opts *opts, struct cf_survey *s, const char *name, const char *path)
{
    for (size_t i = 0; i < s->n_compilers; i++)
        if (!strcmp(s->compilers[i].name, name))
            return; /* first one (PATH) is the one a build uses */
    struct cf_compiler *c = cf_survey_add_compiler(s);
    /* one that does not answer is still listed, without a version */
    cf_compiler_probe_cached(path, !opts->no_cache, c, NULL);
    free(c->name);
    c->name = cf_strdup(name);
}

void cf_probe_compilers(const struct cf_survey_opts *opts, struct cf_survey *s)
{
    for (size_t i = 0; i < sizeof surveyed_compilers / sizeof surveyed_compilers[0]; i++) {
        char *path = cf_which(surveyed_compilers[i]);
        if (path)
            add_compiler(opts, s, surveyed_compilers[i], path);
        free(path);
    }
    /* A toolkit's compiler that is not on PATH still matters for builds. */
    for (size_t t = 0; t < s->n_toolkits; t++) {
        const char *cc = s->toolkits[t].compiler;
        if (!cc)
            continue;
        const char *base = cf_basename(cc);
        for (size_t i = 0; i < sizeof surveyed_compilers / sizeof surveyed_compilers[0]; i++)
            if (!strcmp(base, surveyed_compilers[i]))
                add_compiler(opts, s, base, cc);
    }
}
