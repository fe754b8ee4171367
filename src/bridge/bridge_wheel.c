/* `bridge wheel`: a finished build packaged as a wheel, with the marker that
 * tells `wheel verify` which module is the bridge and which directories outside
 * the wheel (torch/lib, declared externals) it relies on. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/bridge.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/wheel.h"

int cf_bridge_wheel(const struct cf_bridge_wheel_opts *o, char **wheel_path, char **platform_tag, cf_error *err)
{
    char *json_path = cf_path_join(o->build_dir, "cclforge-build.json");
    struct strbuf text = STRBUF_INIT;
    if (cf_read_file(json_path, 1 << 20, &text, err) < 0) {
        cf_error_prefix(err, "no finished bridge build in %s (run 'cclforge bridge build -o %s' first)", o->build_dir,
                        o->build_dir);
        free(json_path);
        return -1;
    }
    cJSON *doc = cJSON_Parse(cf_sb_str(&text));
    cf_sb_release(&text);
    const char *module = cf_json_str(doc, "module"), *package = cf_json_str(doc, "package"),
               *ext = cf_json_str(doc, "extension"), *tag = cf_json_str(doc, "python_tag"),
               *vendor = cf_json_str(doc, "vendor"), *torch_version = cf_json_str(doc, "torch_version"),
               *package_dir = cf_json_str(doc, "package_dir");
    if (!module || !package || !ext || !tag || !*tag) {
        cJSON_Delete(doc);
        int rc = cf_error_set(err, CF_ERR_FORMAT, "%s lacks module/package/extension/python_tag", json_path);
        free(json_path);
        return rc;
    }
    free(json_path);
    char *pdir = cf_strdup(package_dir ? package_dir : package);
    for (char *c = pdir; *c; c++)
        if (*c == '.')
            *c = '/';

    struct strvec names = STRVEC_INIT, paths = STRVEC_INIT, externals = STRVEC_INIT;
    cf_strvec_pushf(&names, "%s/__init__.py", pdir);
    cf_strvec_pushf(&paths, "%s/%s/__init__.py", o->build_dir, pdir);
    cf_strvec_pushf(&names, "%s/%s", pdir, ext);
    cf_strvec_pushf(&paths, "%s/%s/%s", o->build_dir, pdir, ext);
    struct strvec bundled = STRVEC_INIT;
    cf_json_get_strvec(doc, "bundled", &bundled);
    for (size_t i = 0; i < bundled.n; i++) {
        /* never the GPU driver: the build refused it already; kept out here too */
        cf_strvec_pushf(&names, "%s/lib/%s", pdir, bundled.v[i]);
        cf_strvec_pushf(&paths, "%s/%s/lib/%s", o->build_dir, pdir, bundled.v[i]);
    }
    cf_strvec_clear(&bundled);
    cf_json_get_strvec(doc, "externals", &externals);

    struct cf_wheel_member *members = cf_xcalloc(names.n, sizeof *members);
    for (size_t i = 0; i < names.n; i++) {
        members[i].archive_name = names.v[i];
        members[i].source_path = paths.v[i];
    }
    /* the marker: module, vendor and externals, in a stable key order */
    cJSON *marker = cJSON_CreateObject();
    char *dotted = cf_asprintf("%s.%s", package, module);
    cJSON_AddStringToObject(marker, "schema", "cclforge.bridge-wheel/2");
    cJSON_AddStringToObject(marker, "module", dotted);
    cJSON_AddStringToObject(marker, "vendor", vendor ? vendor : "unknown");
    cJSON *ext_arr = cJSON_AddArrayToObject(marker, "externals");
    for (size_t i = 0; i < externals.n; i++)
        cJSON_AddItemToArray(ext_arr, cJSON_CreateString(externals.v[i]));
    /* what the host's toolkit must provide, and the toolkit seen at build */
    cJSON *tl = cJSON_GetObjectItemCaseSensitive(doc, "toolkit_libs");
    cJSON_AddItemToObject(marker, "toolkit_libs", tl ? cJSON_Duplicate(tl, 1) : cJSON_CreateArray());
    cJSON *tk = cJSON_GetObjectItemCaseSensitive(doc, "toolkit");
    if (tk) {
        cJSON *t = cJSON_AddObjectToObject(marker, "toolkit");
        cf_json_put_str(t, "vendor", cf_json_str(tk, "vendor"));
        cf_json_put_str(t, "version", cf_json_str(tk, "version"));
    }
    char *marker_text = cJSON_Print(marker);
    cJSON_Delete(marker);
    free(dotted);

    char *requires = NULL;
    if (torch_version) {
        size_t len = strcspn(torch_version, "+");
        requires = cf_asprintf("torch==%.*s", (int)len, torch_version);
    }
    const char *req[1] = { requires };
    struct cf_wheel_spec spec = { 0 };
    spec.dist_name = o->dist_name ? o->dist_name : "cclforge-nccl-bridge";
    spec.version = o->version ? o->version : "0.1.0";
    spec.summary = "c10d::ProcessGroupNCCL of a vendor libtorch as a torch.distributed backend (built by cclforge)";
    spec.python_tag = tag;
    spec.platform_tag = o->platform_tag;
    spec.requires_dist = req;
    spec.n_requires_dist = requires ? 1 : 0;
    spec.members = members;
    spec.n_members = names.n;
    spec.declared_externals = (const char *const *)externals.v;
    spec.n_declared_externals = externals.n;
    spec.extra_dist_info_name = "cclforge.json";
    spec.extra_dist_info_text = marker_text;
    int rc = cf_wheel_write(&spec, o->wheel_dir, wheel_path, platform_tag, err);
    free(requires);
    free(marker_text);
    free(members);
    cf_strvec_clear(&names);
    cf_strvec_clear(&paths);
    cf_strvec_clear(&externals);
    cJSON_Delete(doc);
    free(pdir);
    return rc;
}
