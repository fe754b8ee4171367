/* The documents of `bridge plan|build|wheel --json`, cclforge.bridge-<sub>/2
 * (docs/schemas/bridge.md): the plan with where each item came from and its
 * commands, what a build produced and checked, the wheel. Nothing in cclforge
 * reads them back; python/cclforge/build.py reads the plan's. A struct
 * written field by field is a table (cclforge/json_fields.h). */
#include <stddef.h>
#include <stdlib.h>

#include "cclforge/bridge.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"
#include "cclforge/strbuf.h"

static const struct cf_jf item_fields[] = {
    CF_JF(struct cf_bridge_item, value, CF_JF_STR),
    CF_JF_AS(struct cf_bridge_item, "from", from, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL),
};
static const struct cf_jf_table item_table = CF_JF_TABLE(struct cf_bridge_item, item_fields);
#define D(key, field) CF_JF_AS(struct cf_bridge_duplicate, key, field, CF_JF_STR)
static const struct cf_jf duplicate_fields[] = {
    D("soname", soname), D("vendor", vendor_path), D("torch", torch_path), D("used", used), D("why", why),
};
static const struct cf_jf_table duplicate_table = CF_JF_TABLE(struct cf_bridge_duplicate, duplicate_fields);
static const struct cf_jf lib_fields[] = {
    CF_JF_AS(struct cf_bridge_lib, "name", name, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
    CF_JF(struct cf_bridge_lib, path, CF_JF_STR), CF_JF(struct cf_bridge_lib, from, CF_JF_STR),
    CF_JF(struct cf_bridge_lib, searched, CF_JF_STRVEC),
};
static const struct cf_jf_table lib_table = CF_JF_TABLE(struct cf_bridge_lib, lib_fields);
static const struct cf_jf abi_fields[] = {
    CF_JF(struct cf_libtorch_abi, options_size, CF_JF_LONG), CF_JF(struct cf_libtorch_abi, options_from, CF_JF_STR),
    CF_JF(struct cf_libtorch_abi, process_group_size, CF_JF_LONG),
    CF_JF(struct cf_libtorch_abi, process_group_from, CF_JF_STR),
};
static const struct cf_jf_table abi_table = CF_JF_TABLE(struct cf_libtorch_abi, abi_fields);
static const struct cf_jf object_fields[] = {
    CF_JF(struct cf_bridge_object, source, CF_JF_STR),
    CF_JF_AS(struct cf_bridge_object, "object_cache", cached, CF_JF_STR),
    CF_JF_AS(struct cf_bridge_object, "cache_hit", hit, CF_JF_BOOL),
};
static const struct cf_jf_table object_table = CF_JF_TABLE(struct cf_bridge_object, object_fields);
#define B(key, field, type) CF_JF_AS(struct cf_bridge_build_result, key, field, type)
static const struct cf_jf build_fields[] = {
    B("output", output, CF_JF_STR), B("installed", installed, CF_JF_STR), B("log", log_path, CF_JF_STR),
    B("object_cache", object_cache, CF_JF_STR), B("cache_hit", cache_hit, CF_JF_BOOL),
    CF_JF_ARR(struct cf_bridge_build_result, more_objects, n_more_objects, 0) /* left out when none */,
    B("compile_seconds", compile_seconds, CF_JF_DOUBLE), B("link_seconds", link_seconds, CF_JF_DOUBLE),
    B("needed", needed, CF_JF_STRVEC), B("rpath", rpath, CF_JF_STRVEC), B("glibc_symbols", glibc_symbols, CF_JF_STRVEC),
    CF_JF_ARR(struct cf_bridge_build_result, duplicates, n_duplicates, 1), B("checks", checks, CF_JF_STRVEC),
    B("problems", problems, CF_JF_STRVEC),
};
static const struct cf_jf_table *const build_subs[] = { &object_table, &duplicate_table };
static const struct cf_jf_table build_table = CF_JF_TABLE_SUBS(struct cf_bridge_build_result, build_fields, build_subs);

static const char *flavour_name(int v)
{
    return v == CF_BRIDGE_HIPIFIED ? "hipified" : "cuda-named";
}

/* the plan's fields written beside an item's value and from */
#define P(key, field, ...) CF_JF_AS(struct cf_bridge_plan, key, field, CF_JF_STR, __VA_ARGS__)
static const struct cf_jf cxx_fields[] = { P("version", cxx_version), P("std", cxx_std), P("gate", cxx_gate) };
static const struct cf_jf python_fields[] = {
    P("executable", python_exe), P("version", python_version), P("tag", python_tag), P("ext_suffix", ext_suffix),
};
static const struct cf_jf torch_fields[] = {
    P("version", torch_version),
    CF_JF_AS(struct cf_bridge_plan, "cxx11_abi", cxx11_abi, CF_JF_BOOL, .flags = CF_JF_NULL_IF_NEGATIVE),
    P("cxx11_abi_from", cxx11_abi_from),
    CF_JF_AS(struct cf_bridge_plan, "flavour", flavour, CF_JF_ENUM, .name = flavour_name),
    P("flavour_from", flavour_from),
};
static const struct cf_jf header_fields[] = { P("version", nccl_header_version) };
static const struct cf_jf define_set_fields[] = { P("name", define_set), P("why", define_set_why) };
static const struct cf_jf_table cxx_table = CF_JF_TABLE(struct cf_bridge_plan, cxx_fields),
    python_table = CF_JF_TABLE(struct cf_bridge_plan, python_fields),
    torch_table = CF_JF_TABLE(struct cf_bridge_plan, torch_fields),
    header_table = CF_JF_TABLE(struct cf_bridge_plan, header_fields),
    define_set_table = CF_JF_TABLE(struct cf_bridge_plan, define_set_fields);

enum { ITEM, LIB, DUPLICATE, ABI };
#define OBJECT(k, field, sub_) \
    { .key = k, .type = CF_JF_OBJECT, .sub = sub_, .offset = offsetof(struct cf_bridge_plan, field) }
#define ARRAY(k, field, count, sub_)                                                                  \
    { .key = k, .type = CF_JF_ARRAY, .sub = sub_, .offset = offsetof(struct cf_bridge_plan, field), \
      .count_offset = offsetof(struct cf_bridge_plan, count) }
#define V(key, field) CF_JF_AS(struct cf_bridge_plan, key, field, CF_JF_STRVEC)
static const struct cf_jf plan_fields[] = {
    OBJECT("vendor", vendor_item, ITEM), CF_JF_SLOT("compiler"), CF_JF_SLOT("python"), CF_JF_SLOT("torch"),
    OBJECT("vendor_libs", vendor_libs, ITEM), OBJECT("torch_import", torch_import, ITEM),
    OBJECT("toolkit_root", toolkit_root, ITEM), CF_JF_SLOT("comm_header"), CF_JF_SLOT("proof"),
    CF_JF_SLOT("nccl_versions"), OBJECT("libtorch_abi", abi, ABI), OBJECT("device_count", device_count, ITEM),
    ARRAY("includes", includes, n_includes, ITEM), ARRAY("libraries", libs, n_libs, LIB),
    CF_JF_SLOT("define_set"), ARRAY("defines", defines, n_defines, ITEM), ARRAY("rpath", rpath, n_rpath, ITEM),
    ARRAY("duplicates", duplicates, n_duplicates, DUPLICATE), OBJECT("source", source, ITEM),
    V("more_sources", more_sources), OBJECT("guard", guard, ITEM),
    ARRAY("toolkit_libs", toolkit_libs, n_toolkit_libs, ITEM), P("toolkit_version", toolkit_version),
    P("module", module_name), P("package", package), P("package_dir", package_dir), P("output_name", output_name),
    P("output", output), CF_JF_SLOT("output_dir") /* with output */, CF_JF_SLOT("mkdir"), CF_JF_SLOT("steps"),
    CF_JF_SLOT("compile"), CF_JF_SLOT("link"), P("into", into), CF_JF_SLOT("max_glibc"), P("docker", docker),
    CF_JF_SLOT("docker_compile") /* with docker */, V("bundle", bundle_libs), V("notes", notes),
    V("problems", problems),
};
#undef P
static const struct cf_jf_table *const plan_subs[] = {
    [ITEM] = &item_table, [LIB] = &lib_table, [DUPLICATE] = &duplicate_table, [ABI] = &abi_table
};
static const struct cf_jf_table plan_table = CF_JF_TABLE_SUBS(struct cf_bridge_plan, plan_fields, plan_subs);

static void fill(cJSON *o, const char *slot, cJSON *value)
{
    cJSON_ReplaceItemInObjectCaseSensitive(o, slot, value);
}

/* an item with more of the plan's fields after its value and from */
static cJSON *item_and(const struct cf_bridge_item *it, const struct cf_jf_table *more, const struct cf_bridge_plan *p)
{
    cJSON *o = cf_jf_to_json(&item_table, it);
    cf_jf_add(o, more, p);
    return o;
}

static cJSON *plan_json(const struct cf_bridge_plan *p)
{
    cJSON *o = cf_jf_to_json(&plan_table, p);
    fill(o, "compiler", item_and(&p->cxx, &cxx_table, p));
    fill(o, "python", item_and(&p->python, &python_table, p));
    fill(o, "torch", item_and(&p->torch_dir, &torch_table, p));
    fill(o, "comm_header", item_and(&p->nccl_header, &header_table, p));
    cJSON *proof = cJSON_CreateObject();
    cf_json_put_str(proof, "command", p->proof);
    cJSON_AddNumberToObject(proof, "files", (double)p->proof_files.n);
    cJSON *hs = cJSON_AddObjectToObject(proof, "headers");
    for (size_t i = 0; i < sizeof p->headers / sizeof p->headers[0]; i++) {
        if (!p->headers[i].name)
            continue;
        cJSON *h = cJSON_CreateObject();
        cf_json_put_str(h, "path", p->headers[i].path);
        cf_json_put_str(h, "version", p->headers[i].version);
        cJSON_AddItemToObject(hs, p->headers[i].name, h);
    }
    fill(o, "proof", proof);
    cJSON *nccl = cJSON_CreateObject();
    const struct cf_bridge_header *h = p->headers[0].path ? &p->headers[0] : &p->headers[1];
    cJSON *hdr = cJSON_CreateObject();
    cf_json_put_str(hdr, "value", h->version);
    cf_json_put_str(hdr, "from", h->path);
    cJSON_AddItemToObject(nccl, "header", hdr);
    cJSON_AddItemToObject(nccl, "library", cf_jf_to_json(&item_table, &p->nccl_library));
    cJSON_AddItemToObject(nccl, "libtorch", cf_jf_to_json(&item_table, &p->nccl_libtorch));
    fill(o, "nccl_versions", nccl);
    fill(o, "define_set", cf_jf_to_json(&define_set_table, p));
    if (p->output)
        fill(o, "output_dir", cJSON_CreateString(p->out_dir));
    /* the plan as commands: runnable as given, from any directory; the first
     * (mkdir) creates the directories the others write into (the plan itself
     * writes nothing). steps: every argv in the order to run them. */
    if (p->output && p->source.value && p->guard.value) {
        size_t n;
        struct strvec *cmd = cf_bridge_plan_commands(p, &n); /* sources' compiles, the guard's, the link */
        struct strvec mk = STRVEC_INIT;
        cf_bridge_mkdir_argv(p, &mk);
        cJSON *mkdir = cJSON_CreateObject(), *steps = cJSON_CreateArray(), *co = cJSON_CreateObject(),
              *link = cJSON_CreateObject();
        cJSON_AddItemToObject(mkdir, "argv", cf_json_strvec(&mk));
        cJSON_AddItemToArray(steps, cf_json_strvec(&mk));
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(steps, cf_json_strvec(&cmd[i]));
        cf_strvec_clear(&mk);
        cJSON_AddItemToObject(co, "argv", cf_json_strvec(&cmd[0]));
        /* one per source, the bridge's (argv above) first: a one-source bridge has one */
        cJSON *all = cJSON_AddArrayToObject(co, "argvs");
        for (size_t i = 0; i + 2 < n; i++)
            cJSON_AddItemToArray(all, cf_json_strvec(&cmd[i]));
        cJSON_AddItemToObject(co, "guard_argv", cf_json_strvec(&cmd[n - 2]));
        cJSON_AddItemToObject(link, "argv", cf_json_strvec(&cmd[n - 1]));
        cf_bridge_commands_free(cmd, n);
        fill(o, "mkdir", mkdir);
        fill(o, "steps", steps);
        fill(o, "compile", co);
        fill(o, "link", link);
    }
    if (p->max_glibc) {
        char *g = cf_asprintf("%d.%d", p->max_glibc / 1000, p->max_glibc % 1000);
        fill(o, "max_glibc", cJSON_CreateString(g));
        free(g);
    }
    if (!p->docker) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "docker_compile");
    } else {
        struct strvec inner = STRVEC_INIT, outer = STRVEC_INIT;
        cf_bridge_compile_argv(p, p->source.value ? p->source.value : "SOURCE", "OBJECT", &inner);
        cf_bridge_docker_argv(p, "BUILD_DIR", &inner, &outer);
        fill(o, "docker_compile", cf_json_strvec(&outer));
        cf_strvec_clear(&inner);
        cf_strvec_clear(&outer);
    }
    cJSON_AddBoolToObject(o, "ok", p->problems.n == 0);
    return o;
}

static cJSON *build_json(const struct cf_bridge_build_result *r)
{
    cJSON *o = cf_jf_to_json(&build_table, r);
    if (!r->n_more_objects) /* the plan's other sources' objects, each a hit or not */
        cJSON_DeleteItemFromObjectCaseSensitive(o, "more_objects");
    return o;
}

cJSON *cf_bridge_json(const char *sub, const struct cf_bridge_plan *plan, const struct cf_bridge_build_result *build,
                      const char *wheel_path, const char *platform_tag)
{
    cJSON *doc = cJSON_CreateObject();
    char *schema = cf_asprintf("cclforge.bridge-%s/2", sub);
    cJSON_AddStringToObject(doc, "schema", schema);
    free(schema);
    if (plan)
        cJSON_AddItemToObject(doc, "plan", plan_json(plan));
    if (build)
        cJSON_AddItemToObject(doc, "build", build_json(build));
    if (wheel_path) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "path", wheel_path);
        cJSON_AddStringToObject(w, "platform_tag", platform_tag);
        cJSON_AddItemToObject(doc, "wheel", w);
    }
    return doc;
}
