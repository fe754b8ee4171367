/* The survey as JSON (docs/schemas/doctor.md): one field table per struct
 * (cclforge/json_fields.h) gives the writer, the strict reader and the release,
 * so that `doctor --json` output loads back unchanged; beside them stands only
 * what a table cannot say. */
#include "cclforge/survey.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/fabric.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"
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

/* ---- the field tables: one per struct, for the writer, the reader and the release ---- */

#define UNSET INT_MIN /* a blank's "not in the document": the reader fills it from its neighbours */
#define WHOLE .min = -1e9, .max = 1e9 /* a count or version: no document holds more */
#define S(T, f) CF_JF(struct T, f, CF_JF_STR)
#define V(T, f) CF_JF(struct T, f, CF_JF_STRVEC)
#define I(T, f) CF_JF_AS(struct T, #f, f, CF_JF_INT, WHOLE)
#define B(T, f) CF_JF(struct T, f, CF_JF_BOOL)

static const struct cf_jf comm_fields[] = {
    S(cf_comm_lib, kind), S(cf_comm_lib, path), S(cf_comm_lib, how), S(cf_comm_lib, version),
    I(cf_comm_lib, version_code), S(cf_comm_lib, cuda_version), S(cf_comm_lib, hip_version), S(cf_comm_lib, banner),
    S(cf_comm_lib, header), V(cf_comm_lib, archs) /* null while not archs_known */, V(cf_comm_lib, missing_libs),
    V(cf_comm_lib, undefined_symbols),
};
static const struct cf_jf_table comm_table = CF_JF_TABLE(struct cf_comm_lib, comm_fields);
static const struct cf_jf_table *const comm_sub[] = { &comm_table };

static const struct cf_jf toolkit_fields[] = {
    CF_JF_AS(struct cf_toolkit, "vendor", vendor, CF_JF_STR, .flags = CF_JF_REQUIRED), S(cf_toolkit, root),
    S(cf_toolkit, found_by), S(cf_toolkit, version), S(cf_toolkit, version_source), S(cf_toolkit, compiler),
    V(cf_toolkit, include_dirs), V(cf_toolkit, lib_dirs), CF_JF_PTR_TO(struct cf_toolkit, comm, 0),
};

static const struct cf_gpu gpu_blank = { .index = UNSET, .visible = 1, .visible_index = UNSET };
static const struct cf_jf gpu_fields[] = {
    I(cf_gpu, index), S(cf_gpu, vendor), S(cf_gpu, name), S(cf_gpu, arch),
    CF_JF_SLOT("compute_capability") /* "6.1" from cc_major, cc_minor */, CF_JF(struct cf_gpu, memory_bytes, CF_JF_U64),
    S(cf_gpu, uuid), B(cf_gpu, visible), I(cf_gpu, visible_index),
};

static const struct cf_jf probe_fields[] = {
    S(cf_gpu_probe, vendor), S(cf_gpu_probe, method), B(cf_gpu_probe, ok), I(cf_gpu_probe, count),
    S(cf_gpu_probe, note),
};

static const char *flavour_name(int v)
{
    return cf_torch_flavour_name((enum cf_torch_flavour)v);
}

static const struct cf_libtorch torch_blank = { .cxx11_abi = -1, .needs_comm_lib = UNSET };
static const struct cf_jf torch_fields[] = {
    S(cf_libtorch, root), S(cf_libtorch, lib_dir), S(cf_libtorch, found_by), S(cf_libtorch, variant),
    V(cf_libtorch, variant_meta), S(cf_libtorch, version), S(cf_libtorch, version_source),
    CF_JF_AS(struct cf_libtorch, "flavour", flavour, CF_JF_ENUM, .name = flavour_name,
             .flags = CF_JF_CALLER_READS) /* "rocm" too; an unknown one is "unknown" */,
    S(cf_libtorch, gpu_runtime_version),
    CF_JF_AS(struct cf_libtorch, "cxx11_abi", cxx11_abi, CF_JF_BOOL, .flags = CF_JF_NULL_IF_NEGATIVE),
    S(cf_libtorch, abi_source), S(cf_libtorch, gpu_lib), S(cf_libtorch, nccl_built_against),
    B(cf_libtorch, needs_comm_lib),
    CF_JF_PTR_TO(struct cf_libtorch, embedded, 0), CF_JF_PTR_TO(struct cf_libtorch, loaded, 0),
    V(cf_libtorch, missing_libs), V(cf_libtorch, bridge_toolkit_found), V(cf_libtorch, bridge_toolkit_missing),
    V(cf_libtorch, bridge_unreadable), V(cf_libtorch, bridge_walk_bounded), V(cf_libtorch, bridge_plugins),
    V(cf_libtorch, bridge_plugin_missing), V(cf_libtorch, undefined_symbols), V(cf_libtorch, archs),
    S(cf_libtorch, problem),
};

static const struct cf_jf compiler_fields[] = {
    CF_JF_AS(struct cf_compiler, "name", name, CF_JF_STR, .flags = CF_JF_REQUIRED), S(cf_compiler, path),
    S(cf_compiler, version), I(cf_compiler, major), I(cf_compiler, minor),
};
/* written only when known (nvcc's) */
static const struct cf_jf compiler_host_fields[] = {
    I(cf_compiler, host_gcc_max), I(cf_compiler, host_clang_max), S(cf_compiler, host_range_source),
};
static const struct cf_jf_table compiler_host_table = CF_JF_TABLE(struct cf_compiler, compiler_host_fields);

static const struct cf_jf driver_fields[] = {
    I(cf_driver, cuda_driver_version), S(cf_driver, nvidia_version), S(cf_driver, amd_version),
};
static const struct cf_jf_table driver_table = CF_JF_TABLE(struct cf_driver, driver_fields);

static const struct cf_jf host_fields[] = { S(cf_survey, hostname) };
static const struct cf_jf_table host_table = CF_JF_TABLE(struct cf_survey, host_fields);
/* the host's facts of a saved report, which a survey injecting its sections leaves alone */
static const struct cf_jf host_facts_fields[] = {
    S(cf_survey, injected_from), CF_JF_SLOT("injected_sections"),
    CF_JF_AS(struct cf_survey, "survey_seconds", seconds, CF_JF_DOUBLE, .min = 0, .max = 1e9, .flags = CF_JF_REQUIRED),
};
static const struct cf_jf_table host_facts_table = CF_JF_TABLE(struct cf_survey, host_facts_fields);

enum { SUB_TOOLKIT, SUB_GPU, SUB_PROBE, SUB_DRIVER, SUB_TORCH, SUB_COMM, SUB_COMPILER };
static const struct cf_jf_table toolkit_table = CF_JF_TABLE_SUBS(struct cf_toolkit, toolkit_fields, comm_sub);
static const struct cf_jf_table torch_table = { torch_fields, sizeof torch_fields / sizeof torch_fields[0],
                                                sizeof(struct cf_libtorch), comm_sub, &torch_blank };
static const struct cf_jf_table gpu_table = CF_JF_TABLE_BLANK(struct cf_gpu, gpu_fields, &gpu_blank);
static const struct cf_jf_table probe_table = CF_JF_TABLE(struct cf_gpu_probe, probe_fields);
static const struct cf_jf_table compiler_table = CF_JF_TABLE(struct cf_compiler, compiler_fields);
static const struct cf_jf_table *const section_subs[] = {
    [SUB_TOOLKIT] = &toolkit_table, [SUB_GPU] = &gpu_table,   [SUB_PROBE] = &probe_table,
    [SUB_DRIVER] = &driver_table,   [SUB_TORCH] = &torch_table, [SUB_COMM] = &comm_table,
    [SUB_COMPILER] = &compiler_table,
};

/* The sections in the document's order, keyed as section_keys. */
#define SECTION(key, f, n, sub_) \
    CF_JF_AS(struct cf_survey, key, f, CF_JF_ARRAY, .sub = sub_, .count_offset = offsetof(struct cf_survey, n))
static const struct cf_jf section_fields[] = {
    SECTION("toolkits", toolkits, n_toolkits, SUB_TOOLKIT), SECTION("gpus", gpus, n_gpus, SUB_GPU),
    SECTION("gpu_probes", probes, n_probes, SUB_PROBE),
    CF_JF_AS(struct cf_survey, "driver", driver, CF_JF_OBJECT, .sub = SUB_DRIVER),
    SECTION("libtorch", torches, n_torches, SUB_TORCH), SECTION("comm_libraries", comm_libs, n_comm_libs, SUB_COMM),
    SECTION("compilers", compilers, n_compilers, SUB_COMPILER),
};
static const struct cf_jf_table section_table = CF_JF_TABLE_SUBS(struct cf_survey, section_fields, section_subs);

static enum cf_survey_section section_of(const char *key)
{
    int sec = 0;
    while (sec < CF_SEC_COUNT && strcmp(section_keys[sec], key))
        sec++;
    return (enum cf_survey_section)sec;
}

/* ---- writing: the tables, then what they cannot say ---- */

static void comm_written(cJSON *o, const struct cf_comm_lib *c)
{
    if (c && !c->archs_known)
        cJSON_ReplaceItemInObjectCaseSensitive(o, "archs", cJSON_CreateNull());
}

static cJSON *section(cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key)->child;
}

void *cf_survey_to_json(const struct cf_survey *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *host = cJSON_AddObjectToObject(o, "host");
    cf_jf_add(host, &host_table, s);
    cf_jf_add(host, &host_facts_table, s);
    cJSON *inj = cJSON_CreateArray();
    for (int i = 0; i < CF_SEC_COUNT; i++)
        if (s->injected[i])
            cJSON_AddItemToArray(inj, cJSON_CreateString(section_keys[i]));
    cJSON_ReplaceItemInObjectCaseSensitive(host, "injected_sections", inj);

    cf_jf_add(o, &section_table, s);
    size_t i = 0;
    for (cJSON *it = section(o, "toolkits"); it; it = it->next, i++)
        comm_written(cJSON_GetObjectItemCaseSensitive(it, "comm"), s->toolkits[i].comm);
    i = 0;
    for (cJSON *it = section(o, "gpus"); it; it = it->next, i++)
        if (s->gpus[i].cc_major > 0) {
            char cc[32];
            snprintf(cc, sizeof cc, "%d.%d", s->gpus[i].cc_major, s->gpus[i].cc_minor);
            cJSON_ReplaceItemInObjectCaseSensitive(it, "compute_capability", cJSON_CreateString(cc));
        }
    i = 0;
    for (cJSON *it = section(o, "libtorch"); it; it = it->next, i++) {
        const struct cf_libtorch *t = &s->torches[i];
        comm_written(cJSON_GetObjectItemCaseSensitive(it, "embedded"), t->embedded);
        comm_written(cJSON_GetObjectItemCaseSensitive(it, "loaded"), t->loaded);
        if (!t->archs_known)
            cJSON_ReplaceItemInObjectCaseSensitive(it, "archs", cJSON_CreateNull());
    }
    i = 0;
    for (cJSON *it = section(o, "comm_libraries"); it; it = it->next, i++)
        comm_written(it, &s->comm_libs[i]);
    i = 0;
    for (cJSON *it = section(o, "compilers"); it; it = it->next, i++) {
        const struct cf_compiler *c = &s->compilers[i];
        if (c->host_gcc_max || c->host_clang_max || c->host_range_source)
            cf_jf_add(it, &compiler_host_table, c);
    }
    if (s->nccl_config)
        cJSON_AddItemToObject(o, "nccl_config", cf_nccl_config_to_json(s->nccl_config));
    if (s->fabric)
        cJSON_AddItemToObject(o, "fabric", cf_fabric_to_json(s->fabric));
    return o;
}

/* ---- reading: the tables, then what one field says of another ---- */

/* "archs": null is "not read", [] is "none"; a version code follows from its version */
static void comm_read(struct cf_comm_lib *c, const cJSON *o)
{
    if (!c)
        return;
    c->archs_known = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "archs"));
    if (!c->version_code && c->version)
        c->version_code = cf_comm_version_code(c->version);
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

static int torch_read(const struct cf_jf_reader *r, struct cf_libtorch *t, const cJSON *o, size_t i)
{
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "flavour");
    if (fl && !cJSON_IsNull(fl) && !cJSON_IsString(fl))
        return cf_jf_refuse(r, "\"libtorch[%zu].flavour\" is not a string", i);
    t->flavour = flavour_from_name(cJSON_GetStringValue(fl));
    comm_read(t->embedded, cJSON_GetObjectItemCaseSensitive(o, "embedded"));
    comm_read(t->loaded, cJSON_GetObjectItemCaseSensitive(o, "loaded"));
    if (t->needs_comm_lib == UNSET)
        t->needs_comm_lib = t->loaded != NULL;
    t->archs_known = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(o, "archs"));
    return 0;
}

/* compute_capability and arch: either determines the other for NVIDIA ("sm_61" <-> 6.1) */
static int gpu_read(const struct cf_jf_reader *r, struct cf_gpu *g, const cJSON *o, size_t i)
{
    if (g->index == UNSET)
        g->index = (int)i;
    if (g->visible_index == UNSET)
        g->visible_index = g->visible ? (int)i : -1;
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(o, "compute_capability");
    struct cf_arch a;
    if (cc && !cJSON_IsNull(cc)) {
        if (!cJSON_IsString(cc) || !strchr(cc->valuestring, '.') || cf_arch_parse(cc->valuestring, &a, NULL) < 0 ||
            a.sm > 999)
            return cf_jf_refuse(r, "\"gpus[%zu].compute_capability\" is not \"MAJOR.MINOR\" such as \"6.1\"", i);
        g->cc_major = (int)a.sm / 10;
        g->cc_minor = (int)a.sm % 10;
    }
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
        return cf_jf_refuse(r, "\"gpus[%zu].arch\" is missing: give a GPU arch such as \"sm_61\" or \"gfx928\" (or "
                            "compute_capability)", i);
    return 0;
}

/* What the tables leave to the section just read from the array v. */
static int section_read(const struct cf_jf_reader *r, struct cf_survey *s, enum cf_survey_section sec, const cJSON *v)
{
    size_t i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        if (sec == CF_SEC_TOOLKITS)
            comm_read(s->toolkits[i].comm, cJSON_GetObjectItemCaseSensitive(it, "comm"));
        else if (sec == CF_SEC_COMM_LIBS)
            comm_read(&s->comm_libs[i], it);
        else if (sec == CF_SEC_GPUS && gpu_read(r, &s->gpus[i], it, i) < 0)
            return -1;
        else if (sec == CF_SEC_LIBTORCH && torch_read(r, &s->torches[i], it, i) < 0)
            return -1;
        else if (sec == CF_SEC_COMPILERS) {
            struct cf_compiler *c = &s->compilers[i];
            char path[48];
            snprintf(path, sizeof path, "compilers[%zu]", i);
            if (cf_jf_read(r, &compiler_host_table, it, c, path) < 0)
                return -1;
            if (!c->major && c->version) {
                c->major = cf_parse_small(c->version, 100000);
                const char *dot = strchr(c->version, '.');
                c->minor = dot ? cf_parse_small(dot + 1, 100000) : 0;
            }
        }
    }
    return 0;
}

static void free_section(struct cf_survey *s, enum cf_survey_section sec);

int cf_survey_from_json(const void *json, struct cf_survey *s, cf_error *err)
{
    const cJSON *root = json;
    if (!cJSON_IsObject(root))
        return cf_error_set(err, CF_ERR_FORMAT, "survey JSON: the document must be an object");
    const struct cf_jf_reader r = { err, "survey JSON", "", 0, 0 };
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
        s->injected[CF_SEC_HOST] = 1;
        if (cf_jf_read(&r, &host_table, v, s, "host") < 0)
            return -1;
    }
    for (size_t i = 0; i < section_table.n; i++) {
        const struct cf_jf *f = &section_table.fields[i];
        const struct cf_jf_table one = { f, 1, sizeof *s, section_subs, NULL };
        enum cf_survey_section sec = section_of(f->key);
        if (sec == CF_SEC_COUNT || !(v = cJSON_GetObjectItemCaseSensitive(root, f->key)))
            continue;
        free_section(s, sec);
        s->injected[sec] = 1;
        if (cJSON_IsNull(v)) /* a section given is injected: null would say nothing of it */
            return cf_jf_refuse(&r, "\"%s\" is null, not a section", f->key);
        if (cf_jf_read(&r, &one, root, s, "") < 0 || section_read(&r, s, sec, v) < 0)
            return -1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "nccl_config")) && !cJSON_IsNull(v)) {
        free_section(s, CF_SEC_NCCL_CONFIG);
        s->nccl_config = cf_xcalloc(1, sizeof *s->nccl_config);
        s->injected[CF_SEC_NCCL_CONFIG] = 1;
        if (cf_nccl_config_from_json(v, s->nccl_config, err) < 0)
            return -1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "fabric")) && !cJSON_IsNull(v)) {
        free_section(s, CF_SEC_FABRIC);
        s->fabric = cf_xcalloc(1, sizeof *s->fabric);
        s->injected[CF_SEC_FABRIC] = 1;
        if (cf_fabric_from_json(v, s->fabric, err) < 0)
            return -1;
    }
    return 0;
}

/* A saved report's own host facts, which cf_survey_from_json leaves to the
 * survey that injects them: where its sections came from and how long it took. */
int cf_survey_host_from_json(const void *json, struct cf_survey *s, cf_error *err)
{
    const struct cf_jf_reader r = { err, "survey JSON", "", 0, 0 };
    const cJSON *host = cJSON_GetObjectItemCaseSensitive((const cJSON *)json, "host");
    const cJSON *inj = cJSON_GetObjectItemCaseSensitive(host, "injected_sections"), *it;
    struct cf_survey facts = CF_SURVEY_INIT;
    if (cf_jf_read(&r, &host_facts_table, host, &facts, "host") < 0 ||
        (!cJSON_IsArray(inj) && cf_jf_refuse(&r, "\"host.injected_sections\" is not an array of section names") < 0)) {
        cf_jf_release(&host_facts_table, &facts);
        return -1;
    }
    cJSON_ArrayForEach(it, inj)
    {
        enum cf_survey_section sec = section_of(cJSON_IsString(it) ? it->valuestring : "");
        if (sec == CF_SEC_COUNT) {
            cf_jf_release(&host_facts_table, &facts);
            return cf_jf_refuse(&r, "\"host.injected_sections\" holds what is no section (host, toolkits, gpus, ...)");
        }
        facts.injected[sec] = 1;
    }
    s->seconds = facts.seconds;
    free(s->injected_from);
    s->injected_from = facts.injected_from;
    memcpy(s->injected, facts.injected, sizeof facts.injected);
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

static void free_section(struct cf_survey *s, enum cf_survey_section sec)
{
    switch (sec) {
    case CF_SEC_HOST: cf_jf_release(&host_table, s); break;
    case CF_SEC_DRIVER:
        cf_jf_release(&driver_table, &s->driver);
        memset(&s->driver, 0, sizeof s->driver);
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
    case CF_SEC_COUNT: break;
    default:
        for (size_t i = 0; sec == CF_SEC_COMPILERS && i < s->n_compilers; i++)
            cf_compiler_release(&s->compilers[i]); /* banner and the host range too */
        for (size_t i = 0; i < section_table.n; i++)
            if (section_of(section_table.fields[i].key) == sec) {
                const struct cf_jf_table one = { &section_table.fields[i], 1, sizeof *s, section_subs, NULL };
                cf_jf_release(&one, s);
            }
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
