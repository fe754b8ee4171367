/* The document of `nccl build --json`, cclforge.nccl-build/1
 * (docs/schemas/nccl.md): the plan, and after a build what it did, the
 * verification of the library and, on a failure, the error and the log's
 * tail. Nothing in cclforge reads it back (the store reads its manifests). */
#include "cclforge/json.h"
#include "cclforge/nccl_build.h"

static cJSON *plan_json(const struct cf_nccl_plan *plan)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "vendor", plan->vendor->word);
    cJSON_AddStringToObject(p, "tag", plan->tag_text);
    cJSON_AddStringToObject(p, "tag_origin", plan->tag_origin);
    cJSON_AddItemToObject(p, "archs", cf_arch_list_json(&plan->archs));
    cJSON_AddStringToObject(p, "archs_origin", plan->archs_origin);
    cJSON_AddBoolToObject(p, "ptx", plan->ptx);
    cJSON_AddStringToObject(p, plan->vendor->arch_family == CF_ARCH_AMD ? "gpu_targets" : "nvcc_gencode", plan->gencode);
    cJSON_AddStringToObject(p, "source", plan->source);
    cJSON_AddNumberToObject(p, "jobs", plan->jobs);
    if (plan->only_funcs)
        cJSON_AddStringToObject(p, "only_funcs", plan->only_funcs);
    if (plan->cuda_version)
        cJSON_AddStringToObject(p, "cuda_version", plan->cuda_version);
    cJSON_AddStringToObject(p, "toolkit_home", plan->toolkit_home);
    cJSON_AddStringToObject(p, "toolkit_origin", plan->toolkit_origin);
    cJSON_AddStringToObject(p, "name", plan->target_name);
    cJSON_AddStringToObject(p, "target", plan->target_dir);
    cJSON_AddStringToObject(p, "log", plan->log_path);
    struct strvec cmds = STRVEC_INIT;
    cf_nccl_plan_commands(plan, &cmds);
    cJSON_AddItemToObject(p, "commands", cf_json_strvec(&cmds));
    cf_strvec_clear(&cmds);
    if (plan->dockerfile)
        cJSON_AddStringToObject(p, "dockerfile", plan->dockerfile);
    cJSON_AddItemToObject(p, "warnings", cf_json_strvec(&plan->warnings));
    return p;
}

static cJSON *verify_json(const struct cf_nccl_verify *v)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "library", v->library ? v->library : "");
    cJSON_AddStringToObject(o, "soname", v->soname ? v->soname : "");
    cJSON_AddStringToObject(o, "banner", v->banner ? v->banner : "");
    cJSON_AddItemToObject(o, "sass", cf_json_strvec(&v->sass));
    cJSON_AddItemToObject(o, "ptx", cf_json_strvec(&v->ptx));
    cJSON_AddItemToObject(o, "missing", cf_json_strvec(&v->missing));
    cJSON_AddItemToObject(o, "extra", cf_json_strvec(&v->extra));
    cJSON_AddItemToObject(o, "problems", cf_json_strvec(&v->problems));
    return o;
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
    cJSON_AddBoolToObject(doc, "cache_hit", r->cache_hit);
    cf_json_put_str(doc, "damaged_cache", r->damage);
    cJSON_AddItemToObject(doc, "plan", plan_json(plan));
    if (r->target_dir)
        cJSON_AddStringToObject(doc, "installed", r->target_dir);
    cJSON_AddNumberToObject(doc, "build_seconds", r->build_seconds);
    cJSON_AddNumberToObject(doc, "total_seconds", r->total_seconds);
    if (r->verify.library)
        cJSON_AddItemToObject(doc, "verify", verify_json(&r->verify));
    if (error) {
        cJSON_AddStringToObject(doc, "error", error);
        cJSON_AddStringToObject(doc, "log_tail", cf_sb_str(&r->log_tail));
    }
    return doc;
}
