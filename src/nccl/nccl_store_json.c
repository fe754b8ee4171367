/* The documents of the NCCL build store's views: `nccl list --json`
 * (cclforge.nccl-list/1) and `nccl env --format json` (cclforge.nccl-env/1),
 * docs/schemas/nccl.md. Nothing in cclforge reads them back. */
#include "cclforge/json.h"
#include "cclforge/nccl_build.h"

cJSON *cf_nccl_list_json(const char *root, const struct cf_nccl_install_list *l)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.nccl-list/1");
    cJSON_AddStringToObject(doc, "root", root);
    cJSON *arr = cJSON_AddArrayToObject(doc, "builds");
    for (size_t i = 0; i < l->n; i++) {
        cJSON *b = cJSON_CreateObject();
        cJSON_AddStringToObject(b, "name", l->v[i].name);
        cJSON_AddStringToObject(b, "dir", l->v[i].dir);
        cJSON_AddStringToObject(b, "tag", l->v[i].tag);
        cJSON_AddStringToObject(b, "version", l->v[i].version);
        cJSON_AddNumberToObject(b, "version_code", l->v[i].version_code);
        struct strvec archs = STRVEC_INIT;
        cf_strvec_split(&archs, l->v[i].archs, ";", 0);
        cJSON_AddItemToObject(b, "archs", cf_json_strvec(&archs));
        cf_strvec_clear(&archs);
        cJSON_AddBoolToObject(b, "ptx", l->v[i].ptx);
        cf_json_put_str(b, "cuda_version", l->v[i].cuda_version);
        cJSON_AddNumberToObject(b, "build_seconds", l->v[i].build_seconds);
        cJSON_AddBoolToObject(b, "active", l->v[i].active);
        cf_json_put_str(b, "damage", l->v[i].damage);
        cJSON_AddItemToArray(arr, b);
    }
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
