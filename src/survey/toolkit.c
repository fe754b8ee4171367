/* Vendor toolkits: find roots the way users point at them (environment, the
 * compiler on PATH, default locations), claim each root for the first profile
 * whose markers it has, and read its version, include/lib dirs and comm library. */
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/spawn.h"
#include "survey/survey_internal.h"

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void cf_glob_paths(const char *pattern, struct strvec *out)
{
    const char *star = strchr(pattern, '*');
    if (!star) {
        if (cf_path_exists(pattern))
            cf_strvec_push(out, pattern);
        return;
    }
    const char *comp_start = star;
    while (comp_start > pattern && comp_start[-1] != '/')
        comp_start--;
    const char *comp_end = strchr(star, '/');
    char *parent = comp_start > pattern ? cf_strndup(pattern, (size_t)(comp_start - pattern)) : cf_strdup(".");
    char *component = comp_end ? cf_strndup(comp_start, (size_t)(comp_end - comp_start)) : cf_strdup(comp_start);
    DIR *d = opendir(parent);
    struct strvec found = STRVEC_INIT;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' && component[0] != '.')
                continue;
            if (fnmatch(component, de->d_name, 0) == 0) {
                char *cand = cf_asprintf("%s%s%s", comp_start > pattern ? parent : "", de->d_name, comp_end ? comp_end : "");
                if (cf_path_exists(cand))
                    cf_strvec_push_nodup(&found, cand);
                else
                    free(cand);
            }
        }
        closedir(d);
    }
    if (found.n)
        qsort(found.v, found.n, sizeof *found.v, str_cmp);
    for (size_t i = 0; i < found.n; i++)
        cf_strvec_push(out, found.v[i]);
    cf_strvec_clear(&found);
    free(parent);
    free(component);
}

/* ---- version parsers (one per enum cf_version_parser) ---- */

static char *first_line(const char *path)
{
    struct strbuf sb = STRBUF_INIT;
    if (cf_read_file(path, 1 << 16, &sb, NULL) < 0) {
        cf_sb_release(&sb);
        return NULL;
    }
    char *nl = strchr(sb.buf, '\n');
    if (nl)
        cf_sb_setlen(&sb, (size_t)(nl - sb.buf));
    cf_sb_rtrim(&sb);
    char *s = sb.len ? cf_strdup(sb.buf) : NULL;
    cf_sb_release(&sb);
    return s;
}

/* Keeps the leading dotted number: "6.2.4-120" -> "6.2.4", "DTK-24.04.1" -> "24.04.1". */
static char *leading_version(const char *s)
{
    if (!s)
        return NULL;
    while (*s && !(*s >= '0' && *s <= '9'))
        s++;
    return cf_version_at(s);
}

static char *version_nvcc(const char *path, int use_cache)
{
    struct cf_compiler c;
    char *ver = NULL;
    if (cf_compiler_probe_cached(path, use_cache, &c, NULL) == 0) {
        ver = c.version; /* "13.0.88" from "Cuda compilation tools, release 13.0, V13.0.88" */
        c.version = NULL;
    }
    cf_compiler_release(&c);
    return ver;
}

/* The version a file's text (NUL-terminated) states, or NULL. */
typedef char *text_version_fn(const char *text, size_t len);

/* parse of the file at path, when it reads in whole within limit bytes */
static char *version_in_file(const char *path, size_t limit, text_version_fn *parse)
{
    struct strbuf sb = STRBUF_INIT;
    char *ver = cf_read_file(path, limit, &sb, NULL) == 0 ? parse(cf_sb_str(&sb), sb.len) : NULL;
    cf_sb_release(&sb);
    return ver;
}

static char *version_cuda_json(const char *text, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(text, len);
    const char *v = cf_json_str(cJSON_GetObjectItemCaseSensitive(doc, "cuda"), "version");
    char *ver = v ? leading_version(v) : NULL;
    cJSON_Delete(doc);
    return ver;
}

/* Finds "#define NAME <int>" in a header; -1 when absent. */
static long header_define(const char *text, const char *name)
{
    size_t nlen = strlen(name);
    for (const char *p = strstr(text, "#define"); p; p = strstr(p + 1, "#define")) {
        const char *q = p + 7;
        while (*q == ' ' || *q == '\t')
            q++;
        if (!strncmp(q, name, nlen) && (q[nlen] == ' ' || q[nlen] == '\t')) {
            char *end;
            long v = strtol(q + nlen, &end, 10);
            if (end != q + nlen)
                return v;
        }
    }
    return -1;
}

static char *version_cuda_h(const char *text, size_t len)
{
    (void)len;
    long v = header_define(text, "CUDA_VERSION");
    return v > 0 ? cf_asprintf("%ld.%ld", v / 1000, (v % 1000) / 10) : NULL;
}

static char *version_hip_h(const char *text, size_t len)
{
    (void)len;
    long ma = header_define(text, "HIP_VERSION_MAJOR"), mi = header_define(text, "HIP_VERSION_MINOR"),
         pa = header_define(text, "HIP_VERSION_PATCH");
    if (ma < 0 || mi < 0)
        return NULL;
    return pa >= 0 ? cf_asprintf("%ld.%ld.%ld", ma, mi, pa) : cf_asprintf("%ld.%ld", ma, mi);
}

static char *read_version(const struct cf_version_source *src, const char *root, int use_cache)
{
    char *path = cf_path_join(root, src->path);
    char *v = NULL;
    if (cf_path_exists(path)) {
        switch (src->parser) {
        case CF_VER_NVCC: v = version_nvcc(path, use_cache); break;
        case CF_VER_CUDA_JSON: v = version_in_file(path, 1 << 20, version_cuda_json); break;
        case CF_VER_CUDA_TXT: /* "CUDA Version 11.0.228" */
        case CF_VER_PLAIN: {
            char *line = first_line(path);
            v = leading_version(line);
            free(line);
            break;
        }
        case CF_VER_CUDA_H: v = version_in_file(path, 4 << 20, version_cuda_h); break;
        case CF_VER_HIP_H: v = version_in_file(path, 1 << 20, version_hip_h); break;
        case CF_VER_NONE: break;
        }
    }
    free(path);
    return v;
}

static const char *version_source_label(const struct cf_version_source *src)
{
    return src->parser == CF_VER_NVCC ? "nvcc --version" : src->path;
}

/* ---- the comm library that ships in the toolkit ---- */

static struct cf_comm_lib *toolkit_comm(const struct cf_survey_opts *opts, const struct cf_vendor_profile *p,
                                        const struct cf_toolkit *t)
{
    char *header = NULL;
    for (size_t i = 0; i < t->include_dirs.n && !header; i++)
        for (size_t k = 0; p->comm->headers[k] && !header; k++) {
            char *cand = cf_path_join(t->include_dirs.v[i], p->comm->headers[k]);
            if (cf_is_file(cand))
                header = cand;
            else
                free(cand);
        }
    /* The library as the loader would find it in the toolkit's directories
     * (hwcaps subdirectories, class and machine checks included), as for the
     * loaded one: a distribution's ROCm has librccl.so.1 in /usr/lib/<multiarch>. */
    struct cf_comm_lib *c = NULL;
    char *lib = t->lib_dirs.n ? cf_loader_resolve_in((const char *const *)t->lib_dirs.v, p->comm->soname) : NULL;
    if (lib)
        c = cf_comm_lib_examine(opts, lib, p->comm->kind, "toolkit", 0);
    free(lib);
    if (!c && !header)
        return NULL;
    if (!c) {
        c = cf_xcalloc(1, sizeof *c);
        c->kind = cf_strdup(p->comm->kind);
        c->how = cf_strdup("toolkit (header only)");
    }
    c->header = header;
    /* The header's version fills in when the library has no readable banner. */
    if (header && !c->version) {
        struct strbuf sb = STRBUF_INIT;
        if (cf_read_file(header, 4 << 20, &sb, NULL) == 0) {
            long ma = header_define(sb.buf, "NCCL_MAJOR"), mi = header_define(sb.buf, "NCCL_MINOR"),
                 pa = header_define(sb.buf, "NCCL_PATCH");
            if (ma >= 0 && mi >= 0 && pa >= 0) {
                c->version = cf_asprintf("%ld.%ld.%ld", ma, mi, pa);
                c->version_code = cf_comm_version_code(c->version);
            }
        }
        cf_sb_release(&sb);
    }
    return c;
}

/* ---- discovery ---- */

static int root_claimed(const struct cf_survey *s, const char *real)
{
    for (size_t i = 0; i < s->n_toolkits; i++)
        if (s->toolkits[i].root && !strcmp(s->toolkits[i].root, real))
            return 1;
    return 0;
}

int cf_toolkit_has_markers(const struct cf_vendor_profile *p, const char *root)
{
    for (const char *const *m = p->markers; *m; m++) {
        char *pat = cf_path_join(root, *m);
        struct strvec hits = STRVEC_INIT;
        cf_glob_paths(pat, &hits);
        int found = hits.n > 0;
        cf_strvec_clear(&hits);
        free(pat);
        if (found)
            return 1;
    }
    return 0;
}

char *cf_toolkit_default_root(const struct cf_vendor_profile *p)
{
    char *found = NULL;
    for (const char *const *d = p->default_roots; *d && !found; d++) {
        struct strvec hits = STRVEC_INIT;
        cf_glob_paths(*d, &hits);
        for (size_t h = 0; h < hits.n && !found; h++)
            if (cf_is_dir(hits.v[h]) && cf_toolkit_has_markers(p, hits.v[h]))
                found = cf_strdup(hits.v[h]);
        cf_strvec_clear(&hits);
    }
    return found;
}

static void push_existing_dirs(const char *root, const char *const *patterns, struct strvec *out)
{
    struct strvec reals = STRVEC_INIT;
    for (const char *const *pat = patterns; *pat; pat++) {
        char *full = cf_path_join(root, *pat);
        struct strvec hits = STRVEC_INIT;
        cf_glob_paths(full, &hits);
        for (size_t i = 0; i < hits.n; i++) {
            char *real = cf_realpath(hits.v[i]);
            if (real && cf_is_dir(real) && !cf_strvec_contains(&reals, real)) {
                cf_strvec_push(&reals, real);
                cf_strvec_push(out, hits.v[i]);
            }
            free(real);
        }
        cf_strvec_clear(&hits);
        free(full);
    }
    cf_strvec_clear(&reals);
}

static void add_toolkit(const struct cf_survey_opts *opts, struct cf_survey *s, const struct cf_vendor_profile *p,
                        const char *root, const char *found_by)
{
    char *real = cf_realpath(root);
    if (!real || !cf_is_dir(real) || root_claimed(s, real) || !cf_toolkit_has_markers(p, real)) {
        free(real);
        return;
    }
    struct cf_toolkit *t = cf_survey_add_toolkit(s);
    t->vendor = cf_strdup(p->id);
    t->root = real;
    t->found_by = cf_strdup(found_by);
    for (const struct cf_version_source *v = p->version_sources; v->parser && !t->version; v++) {
        t->version = read_version(v, real, !opts->no_cache);
        if (t->version)
            t->version_source = cf_strdup(version_source_label(v));
    }
    char *cc = cf_asprintf("%s/bin/%s", real, p->compiler);
    if (cf_is_file(cc))
        t->compiler = cc;
    else
        free(cc);
    push_existing_dirs(real, p->include_dirs, &t->include_dirs);
    push_existing_dirs(real, p->lib_dirs, &t->lib_dirs);
    /* Debian and Ubuntu packages (ROCm in /usr) keep libraries in lib/<multiarch>. */
    const char *tuple = cf_host_multiarch();
    if (tuple) {
        char *pattern = cf_asprintf("lib/%s", tuple);
        const char *const multiarch[] = { pattern, NULL };
        push_existing_dirs(real, multiarch, &t->lib_dirs);
        free(pattern);
    }
    t->comm = toolkit_comm(opts, p, t);
}

void cf_probe_toolkits(const struct cf_survey_opts *opts, struct cf_survey *s)
{
    size_t n;
    const struct cf_vendor_profile *profiles = cf_vendor_profiles(&n);
    /* Pass 1: what the user named (environment, then PATH) for every vendor, so an
     * explicit CUDA_HOME or ROCM_PATH wins over any default location. */
    for (size_t i = 0; i < n; i++) {
        const struct cf_vendor_profile *p = &profiles[i];
        for (const char *const *e = p->root_env; *e; e++) {
            const char *v = cf_env_get(opts, *e);
            if (v)
                add_toolkit(opts, s, p, v, *e);
        }
        char *cc = cf_which(p->compiler);
        if (cc) {
            char *bin = cf_dirname(cc);
            char *root = cf_dirname(bin);
            char *how = cf_asprintf("PATH (%s)", cc);
            add_toolkit(opts, s, p, root, how);
            free(how);
            free(root);
            free(bin);
            free(cc);
        }
    }
    /* Pass 2: default locations. */
    for (size_t i = 0; i < n && !opts->no_default_roots; i++) {
        const struct cf_vendor_profile *p = &profiles[i];
        for (const char *const *d = p->default_roots; *d; d++) {
            struct strvec hits = STRVEC_INIT;
            cf_glob_paths(*d, &hits);
            for (size_t h = 0; h < hits.n; h++) {
                char *how = cf_asprintf("default %s", hits.v[h]);
                add_toolkit(opts, s, p, hits.v[h], how);
                free(how);
            }
            cf_strvec_clear(&hits);
        }
    }
}
