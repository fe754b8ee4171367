/* The survey's data model: its items, the queries over them, and the
 * environment the probes read (src/survey/survey.c runs the probes). */
#include "cclforge/survey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/vendor.h"
#include "survey/survey_internal.h"

const char *cf_env_get_raw(const struct cf_survey_opts *opts, const char *key)
{
    size_t klen = strlen(key);
    if (opts && opts->env) {
        for (const char *const *e = opts->env; *e; e++) {
            if (!strncmp(*e, key, klen) && (*e)[klen] == '=')
                return *e + klen + 1;
            if (!strcmp(*e, key)) /* "KEY" alone: explicitly unset */
                return NULL;
        }
    }
    return getenv(key);
}

const char *cf_env_get(const struct cf_survey_opts *opts, const char *key)
{
    const char *v = cf_env_get_raw(opts, key);
    return v && *v ? v : NULL;
}

/* Grows an array by one zeroed item. */
static void *grow(void *arr, size_t *n, size_t size)
{
    char *p = cf_xrealloc(arr, (*n + 1) * size);
    memset(p + *n * size, 0, size);
    (*n)++;
    return p;
}

struct cf_gpu *cf_survey_add_gpu(struct cf_survey *s)
{
    s->gpus = grow(s->gpus, &s->n_gpus, sizeof *s->gpus);
    struct cf_gpu *g = &s->gpus[s->n_gpus - 1];
    g->visible = 1;
    g->visible_index = -1;
    return g;
}

struct cf_gpu_probe *cf_survey_add_probe(struct cf_survey *s, const char *vendor, const char *method)
{
    s->probes = grow(s->probes, &s->n_probes, sizeof *s->probes);
    struct cf_gpu_probe *p = &s->probes[s->n_probes - 1];
    p->vendor = cf_strdup(vendor);
    p->method = cf_strdup(method);
    return p;
}

struct cf_toolkit *cf_survey_add_toolkit(struct cf_survey *s)
{
    s->toolkits = grow(s->toolkits, &s->n_toolkits, sizeof *s->toolkits);
    return &s->toolkits[s->n_toolkits - 1];
}

struct cf_compiler *cf_survey_add_compiler(struct cf_survey *s)
{
    s->compilers = grow(s->compilers, &s->n_compilers, sizeof *s->compilers);
    return &s->compilers[s->n_compilers - 1];
}

struct cf_comm_lib *cf_survey_add_comm_lib(struct cf_survey *s)
{
    s->comm_libs = grow(s->comm_libs, &s->n_comm_libs, sizeof *s->comm_libs);
    return &s->comm_libs[s->n_comm_libs - 1];
}

struct cf_libtorch *cf_survey_add_torch(struct cf_survey *s)
{
    s->torches = grow(s->torches, &s->n_torches, sizeof *s->torches);
    struct cf_libtorch *t = &s->torches[s->n_torches - 1];
    t->cxx11_abi = -1;
    return t;
}

/* ---- queries ---- */

/* GPU archs in the one arch order (sm_61 < sm_120, gfx906 < gfx90a < gfx1100);
 * names that do not parse sort first, by name. */
static int arch_name_cmp(const void *pa, const void *pb)
{
    const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
    struct cf_arch x, y;
    if (cf_arch_parse(a, &x, NULL) < 0)
        memset(&x, 0, sizeof x);
    if (cf_arch_parse(b, &y, NULL) < 0)
        memset(&y, 0, sizeof y);
    int c = cf_arch_cmp(&x, &y);
    return c ? c : strcmp(a, b);
}

void cf_survey_gpu_archs(const struct cf_survey *s, int visible_only, struct strvec *out)
{
    /* Sorted, then equal neighbours dropped: n log n for any number of GPUs. */
    const char **tmp = cf_xcalloc(s->n_gpus ? s->n_gpus : 1, sizeof *tmp);
    size_t n = 0;
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct cf_gpu *g = &s->gpus[i];
        if (g->arch && (!visible_only || g->visible))
            tmp[n++] = g->arch;
    }
    if (n)
        qsort(tmp, n, sizeof *tmp, arch_name_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(tmp[i], tmp[i - 1]))
            cf_strvec_push(out, tmp[i]);
    free(tmp);
}

const struct cf_toolkit *cf_survey_toolkit(const struct cf_survey *s, const char *vendor)
{
    for (size_t i = 0; i < s->n_toolkits; i++)
        if (s->toolkits[i].vendor && !strcmp(s->toolkits[i].vendor, vendor))
            return &s->toolkits[i];
    return NULL;
}

const struct cf_libtorch *cf_survey_torch(const struct cf_survey *s)
{
    return s->n_torches ? &s->torches[0] : NULL;
}

static int kind_is(const struct cf_comm_lib *c, const char *kind)
{
    return c && (!kind || (c->kind && !strcmp(c->kind, kind)));
}

static const struct cf_comm_lib *active_of_kind(const struct cf_survey *s, const char *kind)
{
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (t && kind_is(t->embedded, kind))
        return t->embedded;
    if (t && kind_is(t->loaded, kind))
        return t->loaded;
    static const char *const by_priority[] = { "LD_PRELOAD", "loaded" };
    for (size_t k = 0; k < sizeof by_priority / sizeof by_priority[0]; k++)
        for (size_t i = 0; i < s->n_comm_libs; i++)
            if (s->comm_libs[i].how && !strcmp(s->comm_libs[i].how, by_priority[k]) &&
                kind_is(&s->comm_libs[i], kind))
                return &s->comm_libs[i];
    for (size_t i = 0; i < s->n_comm_libs; i++)
        if (kind_is(&s->comm_libs[i], kind))
            return &s->comm_libs[i];
    for (size_t i = 0; i < s->n_toolkits; i++)
        if (kind_is(s->toolkits[i].comm, kind) && s->toolkits[i].comm->path)
            return s->toolkits[i].comm;
    return NULL;
}

const struct cf_comm_lib *cf_survey_active_comm(const struct cf_survey *s)
{
    /* The kind the host needs: libtorch's flavour, else its GPUs' vendor. */
    const char *kind = NULL;
    const struct cf_libtorch *t = cf_survey_torch(s);
    if (t && (t->flavour == CF_TORCH_HIP || t->flavour == CF_TORCH_CUDA))
        kind = cf_comm_profile(t->flavour == CF_TORCH_HIP ? CF_COMMLIB_RCCL : CF_COMMLIB_NCCL)->kind;
    for (size_t i = 0; !kind && i < s->n_gpus; i++) {
        const struct cf_vendor_profile *p = s->gpus[i].visible ? cf_vendor_profile_for_gpu(s->gpus[i].vendor) : NULL;
        kind = p ? p->comm->kind : NULL;
    }
    const struct cf_comm_lib *c = kind ? active_of_kind(s, kind) : NULL;
    return c ? c : active_of_kind(s, NULL);
}

const struct cf_compiler *cf_survey_compiler(const struct cf_survey *s, const char *name)
{
    for (size_t i = 0; i < s->n_compilers; i++)
        if (s->compilers[i].name && !strcmp(s->compilers[i].name, name))
            return &s->compilers[i];
    return NULL;
}

const struct cf_comm_profile *cf_comm_lib_profile(const struct cf_comm_lib *c)
{
    const struct cf_comm_profile *p = cf_comm_profile_by_kind(c ? c->kind : NULL);
    return p ? p : cf_comm_profile(CF_COMMLIB_NCCL);
}

const char *cf_torch_flavour_name(enum cf_torch_flavour f)
{
    static const char *const names[] = { "unknown", "cpu", "cuda", "hip" };
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "unknown";
}

/* ---- small pure pieces ---- */

int cf_comm_version_code(const char *version)
{
    if (!version)
        return 0;
    /* "X.Y.Z" followed by nothing or a suffix; each part a small number. */
    int parts[3];
    const char *p = version;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9')
            return 0;
        parts[i] = cf_parse_small(p, 1000);
        p += strspn(p, "0123456789");
        if (i < 2 && *p++ != '.')
            return 0;
    }
    int major = parts[0], minor = parts[1], patch = parts[2];
    if (minor > 99 || patch > 99 || major > 99)
        return 0;
    return (int)cf_nccl_version_code((unsigned)major, (unsigned)minor, (unsigned)patch);
}

/* One entry of a *_VISIBLE_DEVICES list matches a GPU by ordinal or by UUID prefix
 * ("GPU-8f3b..." or the bare hex). Returns the GPU's position or -1. */
static int match_visible_entry(const struct cf_gpu *gpus, size_t n, const char *vendor, const char *entry)
{
    char *end;
    long idx = strtol(entry, &end, 10);
    if (end != entry && *end == '\0') {
        for (size_t i = 0; i < n; i++)
            if (gpus[i].vendor && !strcmp(gpus[i].vendor, vendor) && gpus[i].index == idx)
                return (int)i;
        return -1;
    }
    const char *want = entry;
    if (cf_starts_with(want, "GPU-"))
        want += 4;
    if (!*want)
        return -1;
    int found = -1;
    for (size_t i = 0; i < n; i++) {
        const char *u = gpus[i].uuid;
        if (!u || !gpus[i].vendor || strcmp(gpus[i].vendor, vendor))
            continue;
        if (cf_starts_with(u, "GPU-"))
            u += 4;
        if (cf_starts_with(u, want)) {
            if (found >= 0)
                return -1; /* ambiguous prefix: the runtime rejects it too */
            found = (int)i;
        }
    }
    return found;
}

void cf_apply_visible_devices(struct cf_gpu *gpus, size_t n, const char *vendor, const char *value)
{
    int next = 0;
    for (size_t i = 0; i < n; i++) {
        if (!gpus[i].vendor || strcmp(gpus[i].vendor, vendor))
            continue;
        gpus[i].visible = value == NULL;
        gpus[i].visible_index = value == NULL ? next++ : -1;
    }
    if (!value)
        return;
    struct strvec entries = STRVEC_INIT;
    cf_strvec_split(&entries, value, ",", 1);
    next = 0;
    for (size_t e = 0; e < entries.n; e++) {
        char *entry = entries.v[e];
        while (*entry == ' ')
            entry++;
        int pos = match_visible_entry(gpus, n, vendor, entry);
        /* The runtimes stop at the first entry that names no device (and ignore repeats). */
        if (pos < 0 || gpus[pos].visible)
            break;
        gpus[pos].visible = 1;
        gpus[pos].visible_index = next++;
    }
    cf_strvec_clear(&entries);
}
