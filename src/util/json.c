/* Small cJSON helpers (cclforge/json.h). */
#include "cclforge/json.h"

void cf_json_put_str(cJSON *o, const char *key, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *cf_json_strvec(const struct strvec *sv)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < sv->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(sv->v[i]));
    return a;
}

void cf_json_put_strvec(cJSON *o, const char *key, const struct strvec *sv)
{
    cJSON_AddItemToObject(o, key, cf_json_strvec(sv));
}

/* The value at key: NULL when o is no object, the key is absent, or null. */
static const cJSON *value_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* The value at key when it has the type `is` tests; *rc as the getters return. */
static const cJSON *typed_at(const cJSON *o, const char *key, cJSON_bool (*is)(const cJSON *), int *rc)
{
    const cJSON *v = value_at(o, key);
    *rc = !v ? 0 : is(v) ? 1 : -1;
    return *rc > 0 ? v : NULL;
}

int cf_json_get_str(const cJSON *o, const char *key, const char **out)
{
    int rc;
    const cJSON *v = typed_at(o, key, cJSON_IsString, &rc);
    if (v)
        *out = v->valuestring;
    return rc;
}

int cf_json_get_num(const cJSON *o, const char *key, double *out)
{
    int rc;
    const cJSON *v = typed_at(o, key, cJSON_IsNumber, &rc);
    if (v)
        *out = v->valuedouble;
    return rc;
}

int cf_json_get_bool(const cJSON *o, const char *key, int *out)
{
    int rc;
    const cJSON *v = typed_at(o, key, cJSON_IsBool, &rc);
    if (v)
        *out = cJSON_IsTrue(v);
    return rc;
}

int cf_json_get_strvec(const cJSON *o, const char *key, struct strvec *out)
{
    int rc;
    const cJSON *v = typed_at(o, key, cJSON_IsArray, &rc), *it;
    if (!v)
        return rc;
    cJSON_ArrayForEach(it, v)
    {
        if (!cJSON_IsString(it))
            return -1;
    }
    cJSON_ArrayForEach(it, v)
    {
        cf_strvec_push(out, it->valuestring);
    }
    return 1;
}

const char *cf_json_str(const cJSON *o, const char *key)
{
    const char *s = NULL;
    return cf_json_get_str(o, key, &s) > 0 ? s : NULL;
}

double cf_json_num(const cJSON *o, const char *key, double dflt)
{
    double d = dflt;
    return cf_json_get_num(o, key, &d) > 0 ? d : dflt;
}
