/* The document of `wheel verify --json`, cclforge.wheel-verify/1
 * (docs/schemas/wheel-verify.md): the wheel's tags, what its native code
 * needs, every check with its status, and what --install and --smoke saw; a
 * usage error of the command is one such document too. Nothing in cclforge
 * reads it back. */
#include <stdio.h>

#include "cclforge/json.h"
#include "cclforge/json_fields.h"
#include "cclforge/wheel.h"

/* --json's status: a not-applicable check is neither ok nor skipped */
static const char *status_json(int ok)
{
    return ok > 0 ? "ok" : ok == 0 ? "fail" : ok == CF_WHEEL_NA ? "n/a" : "skip";
}

static const struct cf_jf check_fields[] = {
    CF_JF_AS(struct cf_wheel_check, "name", name, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
    CF_JF_AS(struct cf_wheel_check, "status", ok, CF_JF_ENUM, .name = status_json),
    CF_JF_AS(struct cf_wheel_check, "detail", detail, CF_JF_STR, .flags = CF_JF_OMIT_NULL),
};
static const struct cf_jf_table check_table = CF_JF_TABLE(struct cf_wheel_check, check_fields);

static cJSON *glibc_json(int code)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d", code / 1000, code % 1000);
    return cJSON_CreateString(buf);
}

cJSON *cf_wheel_verify_json(const struct cf_wheel_verify_result *r, const char *error)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "cclforge.wheel-verify/1");
    cJSON_AddStringToObject(o, "wheel", r->wheel ? r->wheel : "");
    if (error)
        cJSON_AddStringToObject(o, "error", error);
    cJSON *tags = cJSON_AddObjectToObject(o, "tags");
    cf_json_put_str(tags, "dist", r->dist);
    cf_json_put_str(tags, "version", r->version);
    cf_json_put_str(tags, "python", r->python_tag);
    cf_json_put_str(tags, "abi", r->abi_tag);
    cf_json_put_str(tags, "platform", r->platform_tag);
    if (r->glibc_ceiling)
        cJSON_AddItemToObject(o, "glibc_ceiling", glibc_json(r->glibc_ceiling));
    else
        cJSON_AddNullToObject(o, "glibc_ceiling");
    if (r->glibc_needed)
        cJSON_AddItemToObject(o, "glibc_needed", glibc_json(r->glibc_needed));
    else
        cJSON_AddNullToObject(o, "glibc_needed");
    cf_json_put_str(o, "policy_needed", r->policy_needed);
    cJSON_AddNumberToObject(o, "members", (double)r->members);
    cJSON_AddNumberToObject(o, "uncompressed_bytes", (double)r->uncompressed);
    cf_json_put_str(o, "inflate", r->inflate_engine);
    cf_json_put_strvec(o, "extensions", &r->extensions);
    cJSON_AddItemToObject(o, "checks", cf_jf_array_to_json(&check_table, r->checks, r->n_checks));
    if (r->module)
        cJSON_AddStringToObject(o, "module", r->module);
    if (r->module_file)
        cJSON_AddStringToObject(o, "module_file", r->module_file);
    if (r->venv)
        cJSON_AddStringToObject(o, "venv", r->venv);
    cf_json_put_strvec(o, "smoke", &r->smoke_lines);
    cf_json_put_strvec(o, "imported", &r->imported);
    cf_json_put_strvec(o, "import_failed", &r->import_failed);
    cJSON_AddNumberToObject(o, "failed", r->failed + (error != NULL));
    cJSON_AddBoolToObject(o, "ok", r->failed == 0 && !error);
    return o;
}

cJSON *cf_wheel_verify_usage_json(const char *message)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "cclforge.wheel-verify/1");
    cJSON_AddStringToObject(o, "error", message);
    cJSON_AddBoolToObject(o, "usage_error", 1);
    cJSON_AddBoolToObject(o, "ok", 0);
    return o;
}
