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
