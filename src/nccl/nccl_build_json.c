/* The document of `nccl build --json`, cclforge.nccl-build/1
 * (docs/schemas/nccl.md): the plan, and after a build what it did, the
 * verification of the library and, on a failure, the error and the log's
 * tail. Nothing in cclforge reads it back (the store reads its manifests).
 * A struct written field by field is a table (cclforge/json_fields.h). */
#include "cclforge/json.h"
#include "cclforge/json_fields.h"
#include "cclforge/nccl_build.h"

/* a string left out, not null, when there is none */
#define TEXT(S, key, field) CF_JF_AS(S, key, field, CF_JF_STR, .flags = CF_JF_OMIT_NULL)
#define P(key, field) TEXT(struct cf_nccl_plan, key, field)
/* the plan up to its GPU code flags, whose key is the vendor's, and after them */
static const struct cf_jf plan_head_fields[] = {
    CF_JF_SLOT("vendor"), P("tag", tag_text), P("tag_origin", tag_origin), CF_JF_SLOT("archs"),
    P("archs_origin", archs_origin), CF_JF(struct cf_nccl_plan, ptx, CF_JF_BOOL),
};
static const struct cf_jf plan_tail_fields[] = {
    P("source", source), CF_JF(struct cf_nccl_plan, jobs, CF_JF_INT), P("only_funcs", only_funcs),
    P("cuda_version", cuda_version), P("toolkit_home", toolkit_home), P("toolkit_origin", toolkit_origin),
    P("name", target_name), P("target", target_dir), P("log", log_path), CF_JF_SLOT("commands"),
    P("dockerfile", dockerfile), CF_JF(struct cf_nccl_plan, warnings, CF_JF_STRVEC),
};
static const struct cf_jf_table plan_head_table = CF_JF_TABLE(struct cf_nccl_plan, plan_head_fields),
                                plan_tail_table = CF_JF_TABLE(struct cf_nccl_plan, plan_tail_fields);
#define V(key, field, type, ...) CF_JF_AS(struct cf_nccl_verify, key, field, type, __VA_ARGS__)
static const struct cf_jf verify_fields[] = {
    V("library", library, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL),
    V("soname", soname, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL),
    V("banner", banner, CF_JF_STR, .flags = CF_JF_EMPTY_IF_NULL), V("sass", sass, CF_JF_STRVEC),
    V("ptx", ptx, CF_JF_STRVEC), V("missing", missing, CF_JF_STRVEC), V("extra", extra, CF_JF_STRVEC),
    V("problems", problems, CF_JF_STRVEC),
};
static const struct cf_jf_table verify_table = CF_JF_TABLE(struct cf_nccl_verify, verify_fields);
#define R(key, field, type, ...) CF_JF_AS(struct cf_nccl_build_result, key, field, type, __VA_ARGS__)
static const struct cf_jf result_fields[] = {
    R("cache_hit", cache_hit, CF_JF_BOOL), R("damaged_cache", damage, CF_JF_STR), CF_JF_SLOT("plan"),
    R("installed", target_dir, CF_JF_STR, .flags = CF_JF_OMIT_NULL), R("build_seconds", build_seconds, CF_JF_DOUBLE),
    R("total_seconds", total_seconds, CF_JF_DOUBLE),
};
static const struct cf_jf_table result_table = CF_JF_TABLE(struct cf_nccl_build_result, result_fields);

static cJSON *plan_json(const struct cf_nccl_plan *plan)
{
    cJSON *p = cf_jf_to_json(&plan_head_table, plan);
    cJSON_ReplaceItemInObjectCaseSensitive(p, "vendor", cJSON_CreateString(plan->vendor->word));
    cJSON_ReplaceItemInObjectCaseSensitive(p, "archs", cf_arch_list_json(&plan->archs));
    cJSON_AddStringToObject(p, plan->vendor->arch_family == CF_ARCH_AMD ? "gpu_targets" : "nvcc_gencode", plan->gencode);
    cf_jf_add(p, &plan_tail_table, plan);
    struct strvec cmds = STRVEC_INIT;
    cf_nccl_plan_commands(plan, &cmds);
    cJSON_ReplaceItemInObjectCaseSensitive(p, "commands", cf_json_strvec(&cmds));
    cf_strvec_clear(&cmds);
    return p;
}

cJSON *cf_nccl_build_json(const struct cf_nccl_plan *plan, const struct cf_nccl_build_result *r, const char *error)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.nccl-build/1");
    if (!r) {
        cJSON_AddBoolToObject(doc, "dry_run", 1);
        cJSON_AddItemToObject(doc, "plan", plan_json(plan));
        return doc;
    }
    cJSON_AddBoolToObject(doc, "ok", error == NULL);
    cf_jf_add(doc, &result_table, r);
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "plan", plan_json(plan));
    if (r->verify.library)
        cJSON_AddItemToObject(doc, "verify", cf_jf_to_json(&verify_table, &r->verify));
    if (error) {
        cJSON_AddStringToObject(doc, "error", error);
        cJSON_AddStringToObject(doc, "log_tail", cf_sb_str(&r->log_tail));
    }
    return doc;
}
