/* The documents of the NCCL build store's views: `nccl list --json`
 * (cclforge.nccl-list/1) and `nccl env --format json` (cclforge.nccl-env/1),
 * docs/schemas/nccl.md. Nothing in cclforge reads them back. A build is
 * written from a table of its fields (cclforge/json_fields.h). */
#include "cclforge/json.h"
#include "cclforge/json_fields.h"
#include "cclforge/nccl_build.h"

#define I(key, field, type, ...) CF_JF_AS(struct cf_nccl_install, key, field, type, __VA_ARGS__)
#define TEXT(key, field) I(key, field, CF_JF_STR, .flags = CF_JF_OMIT_NULL)
static const struct cf_jf install_fields[] = {
    TEXT("name", name), TEXT("dir", dir), TEXT("tag", tag), TEXT("version", version),
    I("version_code", version_code, CF_JF_INT), CF_JF_SLOT("archs") /* a list, kept as "sm_75;sm_90" */,
    I("ptx", ptx, CF_JF_BOOL), I("cuda_version", cuda_version, CF_JF_STR),
    I("build_seconds", build_seconds, CF_JF_DOUBLE), I("active", active, CF_JF_BOOL), I("damage", damage, CF_JF_STR),
};
static const struct cf_jf_table install_table = CF_JF_TABLE(struct cf_nccl_install, install_fields);

cJSON *cf_nccl_list_json(const char *root, const struct cf_nccl_install_list *l)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.nccl-list/1");
    cJSON_AddStringToObject(doc, "root", root);
    cJSON *builds = cf_jf_array_to_json(&install_table, l->v, l->n), *b = builds->child;
    for (size_t i = 0; i < l->n; i++, b = b->next) {
        struct strvec archs = STRVEC_INIT;
        cf_strvec_split(&archs, l->v[i].archs, ";", 0);
        cJSON_ReplaceItemInObjectCaseSensitive(b, "archs", cf_json_strvec(&archs));
        cf_strvec_clear(&archs);
    }
    cJSON_AddItemToObject(doc, "builds", builds);
    return doc;
}

cJSON *cf_nccl_env_json(const struct cf_nccl_env *e)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.nccl-env/1");
    cJSON_AddStringToObject(doc, "build", e->build.name);
    cJSON *env = cJSON_AddObjectToObject(doc, "env");
    cJSON_AddStringToObject(env, "NCCL_HOME", e->nccl_home);
    cJSON_AddStringToObject(env, "LD_LIBRARY_PATH", e->ld_library_path);
    cJSON_AddStringToObject(env, "LD_PRELOAD", e->ld_preload);
    if (e->coverage_checked) {
        cJSON *cov = cJSON_AddObjectToObject(doc, "coverage");
        cJSON_AddItemToObject(cov, "host_archs", cf_json_strvec(&e->host_archs));
        cJSON_AddItemToObject(cov, "uncovered", cf_json_strvec(&e->uncovered));
        cJSON_AddItemToObject(cov, "ptx_jit_only", cf_json_strvec(&e->jit_only));
        cJSON_AddBoolToObject(cov, "covered", e->uncovered.n == 0);
    }
    return doc;
}
