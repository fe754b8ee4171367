/* The survey as JSON: one writer and one reader per struct, mirrored so that
 * `doctor --json` output loads back unchanged (docs/schemas/doctor.md). */
#include "cclforge/survey.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/fabric.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/ncclconf.h"
#include "survey/survey_internal.h"

static const char *const section_keys[CF_SEC_COUNT] = {
    [CF_SEC_HOST] = "host",           [CF_SEC_TOOLKITS] = "toolkits",
    [CF_SEC_GPUS] = "gpus",           [CF_SEC_GPU_PROBES] = "gpu_probes",
    [CF_SEC_DRIVER] = "driver",       [CF_SEC_LIBTORCH] = "libtorch",
    [CF_SEC_COMM_LIBS] = "comm_libraries", [CF_SEC_COMPILERS] = "compilers",
    [CF_SEC_NCCL_CONFIG] = "nccl_config", [CF_SEC_FABRIC] = "fabric",
};

const char *cf_survey_section_name(enum cf_survey_section sec)
{
    return sec < CF_SEC_COUNT ? section_keys[sec] : "?";
}

/* ---- writing ---- */

static cJSON *comm_to_json(const struct cf_comm_lib *c)
{
    if (!c)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "kind", c->kind);
    cf_json_put_str(o, "path", c->path);
    cf_json_put_str(o, "how", c->how);
    cf_json_put_str(o, "version", c->version);
    cJSON_AddNumberToObject(o, "version_code", c->version_code);
    cf_json_put_str(o, "cuda_version", c->cuda_version);
    cf_json_put_str(o, "hip_version", c->hip_version);
    cf_json_put_str(o, "banner", c->banner);
    cf_json_put_str(o, "header", c->header);
    if (c->archs_known)
        cf_json_put_strvec(o, "archs", &c->archs);
    else
        cJSON_AddNullToObject(o, "archs");
    cf_json_put_strvec(o, "missing_libs", &c->missing_libs);
    cf_json_put_strvec(o, "undefined_symbols", &c->undefined_symbols);
    return o;
}

static cJSON *toolkit_to_json(const struct cf_toolkit *t)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "vendor", t->vendor);
    cf_json_put_str(o, "root", t->root);
    cf_json_put_str(o, "found_by", t->found_by);
    cf_json_put_str(o, "version", t->version);
    cf_json_put_str(o, "version_source", t->version_source);
    cf_json_put_str(o, "compiler", t->compiler);
    cf_json_put_strvec(o, "include_dirs", &t->include_dirs);
    cf_json_put_strvec(o, "lib_dirs", &t->lib_dirs);
    cJSON_AddItemToObject(o, "comm", comm_to_json(t->comm));
    return o;
}

static cJSON *gpu_to_json(const struct cf_gpu *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", g->index);
    cf_json_put_str(o, "vendor", g->vendor);
    cf_json_put_str(o, "name", g->name);
    cf_json_put_str(o, "arch", g->arch);
    if (g->cc_major > 0) {
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
        cJSON_AddStringToObject(o, "compute_capability", cc);
    } else {
        cJSON_AddNullToObject(o, "compute_capability");
    }
    cJSON_AddNumberToObject(o, "memory_bytes", (double)g->memory_bytes);
    cf_json_put_str(o, "uuid", g->uuid);
    cJSON_AddBoolToObject(o, "visible", g->visible);
    cJSON_AddNumberToObject(o, "visible_index", g->visible_index);
    return o;
}

static cJSON *probe_to_json(const struct cf_gpu_probe *p)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "vendor", p->vendor);
    cf_json_put_str(o, "method", p->method);
    cJSON_AddBoolToObject(o, "ok", p->ok);
    cJSON_AddNumberToObject(o, "count", p->count);
    cf_json_put_str(o, "note", p->note);
    return o;
}

static cJSON *torch_to_json(const struct cf_libtorch *t)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "root", t->root);
    cf_json_put_str(o, "lib_dir", t->lib_dir);
    cf_json_put_str(o, "found_by", t->found_by);
    cf_json_put_str(o, "variant", t->variant);
    cf_json_put_strvec(o, "variant_meta", &t->variant_meta);
    cf_json_put_str(o, "version", t->version);
    cf_json_put_str(o, "version_source", t->version_source);
    cJSON_AddStringToObject(o, "flavour", cf_torch_flavour_name(t->flavour));
    cf_json_put_str(o, "gpu_runtime_version", t->gpu_runtime_version);
    if (t->cxx11_abi < 0)
        cJSON_AddNullToObject(o, "cxx11_abi");
    else
        cJSON_AddBoolToObject(o, "cxx11_abi", t->cxx11_abi);
    cf_json_put_str(o, "abi_source", t->abi_source);
    cf_json_put_str(o, "gpu_lib", t->gpu_lib);
    cf_json_put_str(o, "nccl_built_against", t->nccl_built_against);
    cJSON_AddBoolToObject(o, "needs_comm_lib", t->needs_comm_lib);
    cJSON_AddItemToObject(o, "embedded", comm_to_json(t->embedded));
    cJSON_AddItemToObject(o, "loaded", comm_to_json(t->loaded));
    cf_json_put_strvec(o, "missing_libs", &t->missing_libs);
    cf_json_put_strvec(o, "bridge_toolkit_found", &t->bridge_toolkit_found);
    cf_json_put_strvec(o, "bridge_toolkit_missing", &t->bridge_toolkit_missing);
    cf_json_put_strvec(o, "bridge_unreadable", &t->bridge_unreadable);
    cf_json_put_strvec(o, "bridge_walk_bounded", &t->bridge_walk_bounded);
    cf_json_put_strvec(o, "bridge_plugins", &t->bridge_plugins);
    cf_json_put_strvec(o, "bridge_plugin_missing", &t->bridge_plugin_missing);
    cf_json_put_strvec(o, "undefined_symbols", &t->undefined_symbols);
    if (t->archs_known)
        cf_json_put_strvec(o, "archs", &t->archs);
    else
        cJSON_AddNullToObject(o, "archs");
    cf_json_put_str(o, "problem", t->problem);
    return o;
}

static cJSON *compiler_to_json(const struct cf_compiler *c)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "name", c->name);
    cf_json_put_str(o, "path", c->path);
    cf_json_put_str(o, "version", c->version);
    cJSON_AddNumberToObject(o, "major", c->major);
    cJSON_AddNumberToObject(o, "minor", c->minor);
    if (c->host_gcc_max || c->host_clang_max || c->host_range_source) {
        cJSON_AddNumberToObject(o, "host_gcc_max", c->host_gcc_max);
        cJSON_AddNumberToObject(o, "host_clang_max", c->host_clang_max);
        cf_json_put_str(o, "host_range_source", c->host_range_source);
    }
    return o;
}

void *cf_survey_to_json(const struct cf_survey *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *host = cJSON_AddObjectToObject(o, "host");
    cf_json_put_str(host, "hostname", s->hostname);
    cf_json_put_str(host, "injected_from", s->injected_from);
    cJSON *inj = cJSON_AddArrayToObject(host, "injected_sections");
    for (int i = 0; i < CF_SEC_COUNT; i++)
        if (s->injected[i])
            cJSON_AddItemToArray(inj, cJSON_CreateString(section_keys[i]));
    cJSON_AddNumberToObject(host, "survey_seconds", s->seconds);

    cJSON *a = cJSON_AddArrayToObject(o, "toolkits");
    for (size_t i = 0; i < s->n_toolkits; i++)
        cJSON_AddItemToArray(a, toolkit_to_json(&s->toolkits[i]));
    a = cJSON_AddArrayToObject(o, "gpus");
    for (size_t i = 0; i < s->n_gpus; i++)
        cJSON_AddItemToArray(a, gpu_to_json(&s->gpus[i]));
    a = cJSON_AddArrayToObject(o, "gpu_probes");
    for (size_t i = 0; i < s->n_probes; i++)
        cJSON_AddItemToArray(a, probe_to_json(&s->probes[i]));
    cJSON *d = cJSON_AddObjectToObject(o, "driver");
    cJSON_AddNumberToObject(d, "cuda_driver_version", s->driver.cuda_driver_version);
    cf_json_put_str(d, "nvidia_version", s->driver.nvidia_version);
    cf_json_put_str(d, "amd_version", s->driver.amd_version);
    a = cJSON_AddArrayToObject(o, "libtorch");
    for (size_t i = 0; i < s->n_torches; i++)
        cJSON_AddItemToArray(a, torch_to_json(&s->torches[i]));
    a = cJSON_AddArrayToObject(o, "comm_libraries");
    for (size_t i = 0; i < s->n_comm_libs; i++)
        cJSON_AddItemToArray(a, comm_to_json(&s->comm_libs[i]));
    a = cJSON_AddArrayToObject(o, "compilers");
    for (size_t i = 0; i < s->n_compilers; i++)
        cJSON_AddItemToArray(a, compiler_to_json(&s->compilers[i]));
    if (s->nccl_config)
        cJSON_AddItemToObject(o, "nccl_config", cf_nccl_config_to_json(s->nccl_config));
    if (s->fabric)
        cJSON_AddItemToObject(o, "fabric", cf_fabric_to_json(s->fabric));
    return o;
}

/* ---- reading: every getter checks the type and reports the key path ---- */

struct reader {
    cf_error *err;
    int failed;
    const char *where; /* "gpus[1]" */
};

static void bad_type(struct reader *r, const char *key, const char *want)
{
    if (!r->failed)
        cf_error_set(r->err, CF_ERR_FORMAT, "survey JSON: %s.%s must be %s", r->where, key, want);
    r->failed = 1;
}

static char *get_str(struct reader *r, const cJSON *o, const char *key)
{
    const char *v = NULL;
    if (cf_json_get_str(o, key, &v) < 0)
        bad_type(r, key, "a string or null");
    return v ? cf_strdup(v) : NULL;
}

static double get_num(struct reader *r, const cJSON *o, const char *key, double dflt)
{
    double v = dflt;
    if (cf_json_get_num(o, key, &v) < 0)
        bad_type(r, key, "a number");
    return v;
}

/* An integer in [lo, hi]; anything else (fractions, huge values) is a format error. */
static double get_ranged(struct reader *r, const cJSON *o, const char *key, double dflt, double lo, double hi)
{
    double v = get_num(r, o, key, dflt);
    if (v != v || v < lo || v > hi || v != (double)(long long)v) {
        char what[96];
        snprintf(what, sizeof what, "an integer from %.0f to %.0f", lo, hi);
        bad_type(r, key, what);
        return dflt;
    }
    return v;
}

static int get_int(struct reader *r, const cJSON *o, const char *key, int dflt)
{
    return (int)get_ranged(r, o, key, dflt, -1e9, 1e9);
}

static int get_bool(struct reader *r, const cJSON *o, const char *key, int dflt)
{
    int v = dflt;
    if (cf_json_get_bool(o, key, &v) < 0)
        bad_type(r, key, "true or false");
    return v;
}

/* Returns 1 when the key held an array (possibly empty), 0 when absent/null. */
static int get_strvec(struct reader *r, const cJSON *o, const char *key, struct strvec *out)
{
    int rc = cf_json_get_strvec(o, key, out);
    if (rc < 0)
        bad_type(r, key, "an array of strings");
    return rc > 0;
}

static void read_comm(struct reader *r, const cJSON *o, struct cf_comm_lib *c)
{
    c->kind = get_str(r, o, "kind");
    c->path = get_str(r, o, "path");
    c->how = get_str(r, o, "how");
    c->version = get_str(r, o, "version");
    c->version_code = get_int(r, o, "version_code", 0);
    if (!c->version_code && c->version)
        c->version_code = cf_comm_version_code(c->version);
    c->cuda_version = get_str(r, o, "cuda_version");
    c->hip_version = get_str(r, o, "hip_version");
    c->banner = get_str(r, o, "banner");
    c->header = get_str(r, o, "header");
    c->archs_known = get_strvec(r, o, "archs", &c->archs);
    get_strvec(r, o, "missing_libs", &c->missing_libs);
    get_strvec(r, o, "undefined_symbols", &c->undefined_symbols);
}

static struct cf_comm_lib *read_comm_opt(struct reader *r, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsObject(v)) {
        bad_type(r, key, "an object or null");
        return NULL;
    }
    struct cf_comm_lib *c = cf_xcalloc(1, sizeof *c);
    read_comm(r, v, c);
    return c;
}

static void read_toolkit(struct reader *r, const cJSON *o, struct cf_toolkit *t)
{
    t->vendor = get_str(r, o, "vendor");
    t->root = get_str(r, o, "root");
    t->found_by = get_str(r, o, "found_by");
    t->version = get_str(r, o, "version");
    t->version_source = get_str(r, o, "version_source");
    t->compiler = get_str(r, o, "compiler");
    get_strvec(r, o, "include_dirs", &t->include_dirs);
    get_strvec(r, o, "lib_dirs", &t->lib_dirs);
    t->comm = read_comm_opt(r, o, "comm");
    if (!t->vendor)
        bad_type(r, "vendor", "a vendor id (\"cuda\", \"rocm\", \"dtk\")");
}

static void read_gpu(struct reader *r, const cJSON *o, struct cf_gpu *g, int ordinal)
{
    g->index = get_int(r, o, "index", ordinal);
    g->vendor = get_str(r, o, "vendor");
    g->name = get_str(r, o, "name");
    g->arch = get_str(r, o, "arch");
    char *cc = get_str(r, o, "compute_capability");
    struct cf_arch a;
    if (cc && (!strchr(cc, '.') || cf_arch_parse(cc, &a, NULL) < 0 || a.sm > 999)) {
        bad_type(r, "compute_capability", "\"MAJOR.MINOR\" such as \"6.1\"");
    } else if (cc) {
        g->cc_major = (int)a.sm / 10;
        g->cc_minor = (int)a.sm % 10;
    }
    free(cc);
    /* Either field determines the other for NVIDIA: "sm_61" <-> 6.1. */
    if (!g->arch && g->cc_major > 0) {
        char buf[16];
        cf_sm_name(g->cc_major, g->cc_minor, buf, sizeof buf);
        g->arch = cf_strdup(buf);
    } else if (g->arch && g->cc_major == 0 && cf_arch_parse(g->arch, &a, NULL) == 0 && a.family == CF_ARCH_NVIDIA &&
               a.code == CF_CODE_SASS && a.sm <= 999) { /* a compute capability "MAJOR.MINOR" with MAJOR <= 99 */
        g->cc_major = (int)a.sm / 10;
        g->cc_minor = (int)a.sm % 10;
    }
    if (!g->vendor)
        g->vendor = cf_strdup(g->arch && cf_starts_with(g->arch, "gfx") ? "amd" : "nvidia");
    if (!g->arch)
        bad_type(r, "arch", "a GPU arch such as \"sm_61\" or \"gfx928\" (or give compute_capability)");
    g->memory_bytes = (uint64_t)get_ranged(r, o, "memory_bytes", 0, 0, 9007199254740992.0); /* 2^53 */
    g->uuid = get_str(r, o, "uuid");
    g->visible = get_bool(r, o, "visible", 1);
    g->visible_index = get_int(r, o, "visible_index", g->visible ? ordinal : -1);
}

static void read_probe(struct reader *r, const cJSON *o, struct cf_gpu_probe *p)
{
    p->vendor = get_str(r, o, "vendor");
    p->method = get_str(r, o, "method");
    p->ok = get_bool(r, o, "ok", 0);
    p->count = get_int(r, o, "count", 0);
    p->note = get_str(r, o, "note");
}

static enum cf_torch_flavour flavour_from_name(const char *s)
{
    static const struct { const char *name; enum cf_torch_flavour f; } names[] = {
        { "cpu", CF_TORCH_CPU }, { "cuda", CF_TORCH_CUDA }, { "hip", CF_TORCH_HIP }, { "rocm", CF_TORCH_HIP },
    };
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name))
            return names[i].f;
    return CF_TORCH_UNKNOWN;
}

static void read_torch(struct reader *r, const cJSON *o, struct cf_libtorch *t)
{
    t->root = get_str(r, o, "root");
    t->lib_dir = get_str(r, o, "lib_dir");
    t->found_by = get_str(r, o, "found_by");
    t->variant = get_str(r, o, "variant");
    get_strvec(r, o, "variant_meta", &t->variant_meta);
    t->version = get_str(r, o, "version");
    t->version_source = get_str(r, o, "version_source");
    char *fl = get_str(r, o, "flavour");
    t->flavour = flavour_from_name(fl);
    free(fl);
    t->gpu_runtime_version = get_str(r, o, "gpu_runtime_version");
    const cJSON *abi = cJSON_GetObjectItemCaseSensitive(o, "cxx11_abi");
    t->cxx11_abi = abi && cJSON_IsBool(abi) ? cJSON_IsTrue(abi) : -1;
    t->abi_source = get_str(r, o, "abi_source");
    t->gpu_lib = get_str(r, o, "gpu_lib");
    t->nccl_built_against = get_str(r, o, "nccl_built_against");
    t->embedded = read_comm_opt(r, o, "embedded");
    t->loaded = read_comm_opt(r, o, "loaded");
    t->needs_comm_lib = get_bool(r, o, "needs_comm_lib", t->loaded != NULL);
    get_strvec(r, o, "missing_libs", &t->missing_libs);
    if (cJSON_GetObjectItemCaseSensitive(o, "bridge_toolkit_found")) /* absent in older surveys */
        get_strvec(r, o, "bridge_toolkit_found", &t->bridge_toolkit_found);
    if (cJSON_GetObjectItemCaseSensitive(o, "bridge_toolkit_missing"))
        get_strvec(r, o, "bridge_toolkit_missing", &t->bridge_toolkit_missing);
    if (cJSON_GetObjectItemCaseSensitive(o, "bridge_unreadable"))
        get_strvec(r, o, "bridge_unreadable", &t->bridge_unreadable);
    if (cJSON_GetObjectItemCaseSensitive(o, "bridge_walk_bounded"))
        get_strvec(r, o, "bridge_walk_bounded", &t->bridge_walk_bounded);
    if (cJSON_GetObjectItemCaseSensitive(o, "bridge_plugins"))
        get_strvec(r, o, "bridge_plugins", &t->bridge_plugins);
    if (cJSON_GetObjectItemCaseSensitive(o, "bridge_plugin_missing"))
        get_strvec(r, o, "bridge_plugin_missing", &t->bridge_plugin_missing);
    get_strvec(r, o, "undefined_symbols", &t->undefined_symbols);
    t->archs_known = get_strvec(r, o, "archs", &t->archs);
    t->problem = get_str(r, o, "problem");
}

static void read_compiler(struct reader *r, const cJSON *o, struct cf_compiler *c)
{
    c->name = get_str(r, o, "name");
    c->path = get_str(r, o, "path");
    c->version = get_str(r, o, "version");
    c->major = get_int(r, o, "major", 0);
    c->minor = get_int(r, o, "minor", 0);
    if (!c->major && c->version) {
        c->major = cf_parse_small(c->version, 100000);
        const char *dot = strchr(c->version, '.');
        c->minor = dot ? cf_parse_small(dot + 1, 100000) : 0;
    }
    c->host_gcc_max = get_int(r, o, "host_gcc_max", 0);
    c->host_clang_max = get_int(r, o, "host_clang_max", 0);
    c->host_range_source = get_str(r, o, "host_range_source");
    if (!c->name)
        bad_type(r, "name", "a compiler name (\"gcc\", \"nvcc\", ...)");
}

/* Reads array section `key` into a freshly allocated array of `size`-byte items. */
typedef void (*item_reader)(struct reader *r, const cJSON *o, void *item, int ordinal);

static void rd_toolkit(struct reader *r, const cJSON *o, void *it, int i) { (void)i; read_toolkit(r, o, it); }
static void rd_gpu(struct reader *r, const cJSON *o, void *it, int i) { read_gpu(r, o, it, i); }
static void rd_probe(struct reader *r, const cJSON *o, void *it, int i) { (void)i; read_probe(r, o, it); }
static void rd_torch(struct reader *r, const cJSON *o, void *it, int i) { (void)i; read_torch(r, o, it); }
static void rd_comm(struct reader *r, const cJSON *o, void *it, int i) { (void)i; read_comm(r, o, it); }
static void rd_compiler(struct reader *r, const cJSON *o, void *it, int i) { (void)i; read_compiler(r, o, it); }

static void *read_array(struct reader *r, const cJSON *v, const char *key, size_t size, item_reader fn, size_t *n)
{
    *n = 0;
    if (!cJSON_IsArray(v)) {
        char where[64];
        snprintf(where, sizeof where, "%s", key);
        r->where = "survey";
        bad_type(r, where, "an array");
        return NULL;
    }
    size_t count = (size_t)cJSON_GetArraySize(v);
    char *items = cf_xcalloc(count ? count : 1, size);
    size_t i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        char where[96];
        snprintf(where, sizeof where, "%s[%zu]", key, i);
        r->where = where;
        if (!cJSON_IsObject(it)) {
            if (!r->failed)
                cf_error_set(r->err, CF_ERR_FORMAT, "survey JSON: %s must be an object", where);
            r->failed = 1;
        } else {
            fn(r, it, items + i * size, (int)i);
        }
        r->where = "survey";
        i++;
    }
    *n = count;
    return items;
}

static void free_section(struct cf_survey *s, enum cf_survey_section sec);

int cf_survey_from_json(const void *json, struct cf_survey *s, cf_error *err)
{
    const cJSON *root = json;
    if (!cJSON_IsObject(root))
        return cf_error_set(err, CF_ERR_FORMAT, "survey JSON: the document must be an object");
    struct reader r = { err, 0, "survey" };
    const cJSON *v;

    /* A hand-written subset may omit "schema"; another command's report may not pass. */
    static const char *const accepted[] = { "cclforge.survey/1", "cclforge.doctor/1" };
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "schema"))) {
        int ok = 0;
        for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
            ok |= cJSON_IsString(v) && !strcmp(v->valuestring, accepted[i]);
        if (!ok)
            return cf_error_set(err, CF_ERR_FORMAT,
                                "survey JSON: schema %s%s%s is not a survey (expected cclforge.survey/1 or "
                                "cclforge.doctor/1, as written by `cclforge doctor --json`)",
                                cJSON_IsString(v) ? "'" : "", cJSON_IsString(v) ? v->valuestring : "(not a string)",
                                cJSON_IsString(v) ? "'" : "");
    }

    if ((v = cJSON_GetObjectItemCaseSensitive(root, "host")) && cJSON_IsObject(v)) {
        free_section(s, CF_SEC_HOST);
        r.where = "host";
        s->hostname = get_str(&r, v, "hostname");
        s->injected[CF_SEC_HOST] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "toolkits"))) {
        free_section(s, CF_SEC_TOOLKITS);
        s->toolkits = read_array(&r, v, "toolkits", sizeof *s->toolkits, rd_toolkit, &s->n_toolkits);
        s->injected[CF_SEC_TOOLKITS] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "gpus"))) {
        free_section(s, CF_SEC_GPUS);
        s->gpus = read_array(&r, v, "gpus", sizeof *s->gpus, rd_gpu, &s->n_gpus);
        s->injected[CF_SEC_GPUS] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "gpu_probes"))) {
        free_section(s, CF_SEC_GPU_PROBES);
        s->probes = read_array(&r, v, "gpu_probes", sizeof *s->probes, rd_probe, &s->n_probes);
        s->injected[CF_SEC_GPU_PROBES] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "driver"))) {
        free_section(s, CF_SEC_DRIVER);
        r.where = "driver";
        if (!cJSON_IsObject(v)) {
            bad_type(&r, "driver", "an object");
        } else {
            s->driver.cuda_driver_version = get_int(&r, v, "cuda_driver_version", 0);
            s->driver.nvidia_version = get_str(&r, v, "nvidia_version");
            s->driver.amd_version = get_str(&r, v, "amd_version");
        }
        s->injected[CF_SEC_DRIVER] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "libtorch"))) {
        free_section(s, CF_SEC_LIBTORCH);
        s->torches = read_array(&r, v, "libtorch", sizeof *s->torches, rd_torch, &s->n_torches);
        s->injected[CF_SEC_LIBTORCH] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "comm_libraries"))) {
        free_section(s, CF_SEC_COMM_LIBS);
        s->comm_libs = read_array(&r, v, "comm_libraries", sizeof *s->comm_libs, rd_comm, &s->n_comm_libs);
        s->injected[CF_SEC_COMM_LIBS] = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "compilers"))) {
        free_section(s, CF_SEC_COMPILERS);
        s->compilers = read_array(&r, v, "compilers", sizeof *s->compilers, rd_compiler, &s->n_compilers);
        s->injected[CF_SEC_COMPILERS] = 1;
    }
    if (!r.failed && (v = cJSON_GetObjectItemCaseSensitive(root, "nccl_config")) && !cJSON_IsNull(v)) {
        free_section(s, CF_SEC_NCCL_CONFIG);
        s->nccl_config = cf_xcalloc(1, sizeof *s->nccl_config);
        r.failed = cf_nccl_config_from_json(v, s->nccl_config, err) < 0;
        s->injected[CF_SEC_NCCL_CONFIG] = 1;
    }
    if (!r.failed && (v = cJSON_GetObjectItemCaseSensitive(root, "fabric")) && !cJSON_IsNull(v)) {
        free_section(s, CF_SEC_FABRIC);
        s->fabric = cf_xcalloc(1, sizeof *s->fabric);
        r.failed = cf_fabric_from_json(v, s->fabric, err) < 0;
        s->injected[CF_SEC_FABRIC] = 1;
    }
    return r.failed ? -1 : 0;
}

/* A saved report's own host facts, which cf_survey_from_json leaves to the
 * survey that injects them: where its sections came from and how long it took. */
int cf_survey_host_from_json(const void *json, struct cf_survey *s, cf_error *err)
{
    const cJSON *host = cJSON_GetObjectItemCaseSensitive((const cJSON *)json, "host");
    struct reader r = { err, 0, "host" };
    const cJSON *inj = cJSON_GetObjectItemCaseSensitive(host, "injected_sections"), *it;
    if (!cJSON_IsObject(host))
        return cf_error_set(err, CF_ERR_FORMAT, "survey JSON: host must be an object");
    double seconds = get_num(&r, host, "survey_seconds", -1);
    if (!r.failed && !(seconds >= 0 && seconds < 1e9))
        bad_type(&r, "survey_seconds", "a number of seconds from 0");
    char *from = get_str(&r, host, "injected_from");
    unsigned char injected[CF_SEC_COUNT] = { 0 };
    if (!cJSON_IsArray(inj))
        bad_type(&r, "injected_sections", "an array of section names");
    cJSON_ArrayForEach(it, inj)
    {
        int sec = 0;
        while (sec < CF_SEC_COUNT && !(cJSON_IsString(it) && !strcmp(it->valuestring, section_keys[sec])))
            sec++;
        if (sec == CF_SEC_COUNT) {
            bad_type(&r, "injected_sections", "an array of section names (host, toolkits, gpus, ...)");
            break;
        }
        injected[sec] = 1;
    }
    if (r.failed) {
        free(from);
        return -1;
    }
    s->seconds = seconds;
    free(s->injected_from);
    s->injected_from = from;
    memcpy(s->injected, injected, sizeof injected);
    return 0;
}

/* The sections every `doctor --json` report carries and compare reads: a
 * document without one of them compares as a host that has nothing. */
static const enum cf_survey_section whole_sections[] = {
    CF_SEC_HOST, CF_SEC_TOOLKITS, CF_SEC_GPUS, CF_SEC_DRIVER, CF_SEC_LIBTORCH, CF_SEC_COMM_LIBS,
};

int cf_survey_check_whole(const struct cf_survey *s, const char *name, cf_error *err)
{
    struct strbuf missing = STRBUF_INIT;
    size_t n = 0;
    for (size_t i = 0; i < sizeof whole_sections / sizeof *whole_sections; i++)
        if (!s->injected[whole_sections[i]])
            cf_sb_addf(&missing, "%s\"%s\"", n++ ? ", " : "", cf_survey_section_name(whole_sections[i]));
    if (!n)
        return 0;
    cf_error_set(err, CF_ERR_FORMAT,
                 "%s is not a host's survey: it lacks %s; write each host's report with `cclforge doctor --json > "
                 "HOST.json` on that host",
                 name, missing.buf);
    cf_sb_release(&missing);
    return -1;
}

int cf_survey_load(const char *path, struct cf_survey *s, cf_error *err)
{
    struct strbuf text = STRBUF_INIT;
    if (cf_read_file(path, 64u << 20, &text, err) < 0) {
        cf_sb_release(&text);
        return cf_error_prefix(err, "reading survey %s", path);
    }
    cJSON *doc = cJSON_ParseWithLength(text.buf, text.len);
    if (!doc) {
        const char *at = cJSON_GetErrorPtr();
        size_t offset = at && at >= text.buf && at <= text.buf + text.len ? (size_t)(at - text.buf) : 0;
        cf_sb_release(&text);
        return cf_error_set(err, CF_ERR_FORMAT, "survey %s is not valid JSON (near byte %zu); "
                            "write it with `cclforge doctor --json > FILE`",
                            path, offset);
    }
    cf_sb_release(&text);
    /* A doctor report nests nothing: its sections are top-level. */
    int rc = cf_survey_from_json(doc, s, err);
    cJSON_Delete(doc);
    if (rc < 0)
        return cf_error_prefix(err, "%s", path);
    free(s->injected_from);
    s->injected_from = cf_strdup(path);
    return 0;
}

int cf_survey_save(const struct cf_survey *s, const char *path, cf_error *err)
{
    cJSON *o = cf_survey_to_json(s);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.survey/1");
    cJSON *child = o->child;
    o->child = NULL;
    for (cJSON *it = child; it;) {
        cJSON *next = it->next;
        it->prev = it->next = NULL;
        cJSON_AddItemToObject(doc, it->string, it);
        it = next;
    }
    cJSON_Delete(o);
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text)
        return cf_error_set(err, CF_ERR_INTERNAL, "out of memory writing survey %s", path);
    size_t len = strlen(text);
    int rc = cf_write_file_atomic(path, text, len, err);
    free(text);
    return rc;
}

/* ---- release ---- */

static void comm_release(struct cf_comm_lib *c)
{
    if (!c)
        return;
    free(c->kind);
    free(c->path);
    free(c->how);
    free(c->version);
    free(c->cuda_version);
    free(c->hip_version);
    free(c->banner);
    free(c->header);
    cf_strvec_clear(&c->archs);
    cf_strvec_clear(&c->missing_libs);
    cf_strvec_clear(&c->undefined_symbols);
    memset(c, 0, sizeof *c);
}

/* Releases and frees one heap cf_comm_lib; NULL is fine. */
static void comm_lib_free(struct cf_comm_lib *c)
{
    comm_release(c);
    free(c);
}

static void free_section(struct cf_survey *s, enum cf_survey_section sec)
{
    switch (sec) {
    case CF_SEC_HOST:
        free(s->hostname);
        s->hostname = NULL;
        break;
    case CF_SEC_TOOLKITS:
        for (size_t i = 0; i < s->n_toolkits; i++) {
            struct cf_toolkit *t = &s->toolkits[i];
            free(t->vendor);
            free(t->root);
            free(t->found_by);
            free(t->version);
            free(t->version_source);
            free(t->compiler);
            cf_strvec_clear(&t->include_dirs);
            cf_strvec_clear(&t->lib_dirs);
            comm_lib_free(t->comm);
        }
        free(s->toolkits);
        s->toolkits = NULL;
        s->n_toolkits = 0;
        break;
    case CF_SEC_GPUS:
        for (size_t i = 0; i < s->n_gpus; i++) {
            free(s->gpus[i].vendor);
            free(s->gpus[i].name);
            free(s->gpus[i].arch);
            free(s->gpus[i].uuid);
        }
        free(s->gpus);
        s->gpus = NULL;
        s->n_gpus = 0;
        break;
    case CF_SEC_GPU_PROBES:
        for (size_t i = 0; i < s->n_probes; i++) {
            free(s->probes[i].vendor);
            free(s->probes[i].method);
            free(s->probes[i].note);
        }
        free(s->probes);
        s->probes = NULL;
        s->n_probes = 0;
        break;
    case CF_SEC_DRIVER:
        free(s->driver.nvidia_version);
        free(s->driver.amd_version);
        memset(&s->driver, 0, sizeof s->driver);
        break;
    case CF_SEC_LIBTORCH:
        for (size_t i = 0; i < s->n_torches; i++) {
            struct cf_libtorch *t = &s->torches[i];
            free(t->root);
            free(t->lib_dir);
            free(t->found_by);
            free(t->variant);
            cf_strvec_clear(&t->variant_meta);
            free(t->version);
            free(t->version_source);
            free(t->gpu_runtime_version);
            free(t->abi_source);
            free(t->gpu_lib);
            free(t->nccl_built_against);
            comm_lib_free(t->embedded);
            comm_lib_free(t->loaded);
            cf_strvec_clear(&t->missing_libs);
            cf_strvec_clear(&t->bridge_toolkit_found);
            cf_strvec_clear(&t->bridge_toolkit_missing);
            cf_strvec_clear(&t->bridge_unreadable);
            cf_strvec_clear(&t->bridge_walk_bounded);
            cf_strvec_clear(&t->bridge_plugins);
            cf_strvec_clear(&t->bridge_plugin_missing);
            cf_strvec_clear(&t->undefined_symbols);
            cf_strvec_clear(&t->archs);
            free(t->problem);
        }
        free(s->torches);
        s->torches = NULL;
        s->n_torches = 0;
        break;
    case CF_SEC_COMM_LIBS:
        for (size_t i = 0; i < s->n_comm_libs; i++)
            comm_release(&s->comm_libs[i]);
        free(s->comm_libs);
        s->comm_libs = NULL;
        s->n_comm_libs = 0;
        break;
    case CF_SEC_COMPILERS:
        for (size_t i = 0; i < s->n_compilers; i++)
            cf_compiler_release(&s->compilers[i]);
        free(s->compilers);
        s->compilers = NULL;
        s->n_compilers = 0;
        break;
    case CF_SEC_NCCL_CONFIG:
        cf_nccl_config_release(s->nccl_config);
        free(s->nccl_config);
        s->nccl_config = NULL;
        break;
    case CF_SEC_FABRIC:
        cf_fabric_release(s->fabric);
        free(s->fabric);
        s->fabric = NULL;
        break;
    case CF_SEC_COUNT:
        break;
    }
}

void cf_survey_release(struct cf_survey *s)
{
    if (!s)
        return;
    for (int i = 0; i < CF_SEC_COUNT; i++)
        free_section(s, (enum cf_survey_section)i);
    free(s->injected_from);
    memset(s, 0, sizeof *s);
}
