/* The document of `wheel graft --json`, cclforge.wheel-graft/1
 * (docs/schemas/bridge.md): the wheel written, its tag and why, the module
 * and the members added, replaced and dropped. Nothing in cclforge reads it
 * back (the marker inside the wheel is another shape, written by the graft). */
#include "cclforge/json.h"
#include "cclforge/wheel.h"

cJSON *cf_wheel_graft_json(const struct cf_wheel_graft_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.wheel-graft/1");
    cf_json_put_str(doc, "wheel", r->wheel);
    cf_json_put_str(doc, "tag", r->tag);
    cf_json_put_str(doc, "module", r->module);
    cf_json_put_str(doc, "tag_why", r->why);
    cf_json_put_strvec(doc, "added", &r->added);
    cf_json_put_strvec(doc, "replaced", &r->replaced);
    cf_json_put_strvec(doc, "dropped", &r->dropped);
    return doc;
}
