/* The libraries the host's toolkit must provide to the bridges installed
 * beside a torch: each bridge wheel's .dist-info/cclforge.json (`bridge
 * wheel`'s marker: module, toolkit_libs, toolkit) in that site-packages, each
 * library looked up as this host's loader would (host_lib.c). Untrusted JSON:
 * sonames with a '/' are ignored, and a site holds at most so many markers. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "survey/survey_internal.h"

enum { MAX_MARKERS = 256 };

static void one_marker(const char *path, struct cf_libtorch *t)
{
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, 1 << 20, &text, &err) < 0) {
        cf_error_clear(&err);
        return;
    }
    cJSON *doc = cJSON_Parse(cf_sb_str(&text));
    cf_sb_release(&text);
    const char *module = cf_json_str(doc, "module");
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(doc, "toolkit");
    const char *vendor = cf_json_str(tk, "vendor"), *version = cf_json_str(tk, "version");
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(doc, "toolkit_libs"))
    {
        if (!cJSON_IsString(it) || strchr(it->valuestring, '/') || !*it->valuestring)
            continue;
        const char *so = it->valuestring;
        struct cf_host_lib h;
        if (cf_host_lib_locate(so, vendor, &h, &err) < 0) {
            cf_error_clear(&err);
            continue;
        }
        char *built = cf_asprintf("%s toolkit %s at build", vendor ? vendor : "the vendor's",
                                  version ? version : "(version ?)");
        if (h.path)
            cf_strvec_pushf(&t->bridge_toolkit_found, "%s -> %s (%s) for %s (%s)", so, h.path, h.how,
                            module ? module : path, built);
        else if (h.in_toolkit)
            cf_strvec_pushf(&t->bridge_toolkit_missing,
                            "%s for %s (%s): in the toolkit %s names (%s) but not where the loader looks (%s)", so,
                            module ? module : path, built, h.toolkit_var, h.in_toolkit, h.considered);
        else
            cf_strvec_pushf(&t->bridge_toolkit_missing, "%s for %s (%s): not on this host (the loader looked in: %s)",
                            so, module ? module : path, built, h.considered && *h.considered ? h.considered : "nothing");
        free(built);
        cf_host_lib_release(&h);
    }
    cJSON_Delete(doc);
}

void cf_survey_bridge_needs(const char *site, struct cf_libtorch *t)
{
    DIR *d = opendir(site);
    struct dirent *de;
    int n = 0;
    while (d && n < MAX_MARKERS && (de = readdir(d))) {
        if (!cf_ends_with(de->d_name, ".dist-info"))
            continue;
        char *marker = cf_asprintf("%s/%s/cclforge.json", site, de->d_name);
        if (cf_is_file(marker)) {
            one_marker(marker, t);
            n++;
        }
        free(marker);
    }
    if (d)
        closedir(d);
}
