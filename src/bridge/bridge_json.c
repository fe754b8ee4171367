/* The documents of `bridge plan|build|wheel --json`, cclforge.bridge-<sub>/2
 * (docs/schemas/bridge.md): the plan with where each item came from and its
 * commands, what a build produced and checked, the wheel. Nothing in cclforge
 * reads them back; python/cclforge/build.py reads the plan's. */
#include <stdlib.h>

#include "cclforge/bridge.h"
#include "cclforge/json.h"
#include "cclforge/strbuf.h"

static cJSON *item_json(const struct cf_bridge_item *it)
{
    cJSON *o = cJSON_CreateObject();
    if (it->value)
        cJSON_AddStringToObject(o, "value", it->value);
    else
        cJSON_AddNullToObject(o, "value");
    cJSON_AddStringToObject(o, "from", it->from ? it->from : "");
    return o;
}

static cJSON *items_json(const struct cf_bridge_item *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, item_json(&v[i]));
    return a;
}

static cJSON *duplicates_json(const struct cf_bridge_duplicate *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *d = cJSON_CreateObject();
        cf_json_put_str(d, "soname", v[i].soname);
        cf_json_put_str(d, "vendor", v[i].vendor_path);
        cf_json_put_str(d, "torch", v[i].torch_path);
        cf_json_put_str(d, "used", v[i].used);
        cf_json_put_str(d, "why", v[i].why);
        cJSON_AddItemToArray(a, d);
    }
    return a;
}

static cJSON *plan_json(const struct cf_bridge_plan *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "vendor", item_json(&p->vendor_item));
    cJSON *cxx = item_json(&p->cxx);
    cf_json_put_str(cxx, "version", p->cxx_version);
    cf_json_put_str(cxx, "std", p->cxx_std);
    cf_json_put_str(cxx, "gate", p->cxx_gate);
    cJSON_AddItemToObject(o, "compiler", cxx);
    cJSON *py = item_json(&p->python);
    cf_json_put_str(py, "executable", p->python_exe);
    cf_json_put_str(py, "version", p->python_version);
    cf_json_put_str(py, "tag", p->python_tag);
    cf_json_put_str(py, "ext_suffix", p->ext_suffix);
    cJSON_AddItemToObject(o, "python", py);
    cJSON *torch = item_json(&p->torch_dir);
    cf_json_put_str(torch, "version", p->torch_version);
    if (p->cxx11_abi >= 0)
        cJSON_AddBoolToObject(torch, "cxx11_abi", p->cxx11_abi);
    else
        cJSON_AddNullToObject(torch, "cxx11_abi");
    cf_json_put_str(torch, "cxx11_abi_from", p->cxx11_abi_from);
    cJSON_AddStringToObject(torch, "flavour", p->flavour == CF_BRIDGE_HIPIFIED ? "hipified" : "cuda-named");
    cf_json_put_str(torch, "flavour_from", p->flavour_from);
    cJSON_AddItemToObject(o, "torch", torch);
    cJSON_AddItemToObject(o, "vendor_libs", item_json(&p->vendor_libs));
    cJSON_AddItemToObject(o, "torch_import", item_json(&p->torch_import));
    cJSON_AddItemToObject(o, "toolkit_root", item_json(&p->toolkit_root));
    cJSON *nh = item_json(&p->nccl_header);
    cf_json_put_str(nh, "version", p->nccl_header_version);
    cJSON_AddItemToObject(o, "comm_header", nh);
    cJSON *proof = cJSON_CreateObject();
    cf_json_put_str(proof, "command", p->proof);
    cJSON_AddNumberToObject(proof, "files", (double)p->proof_files.n);
    cJSON *hs = cJSON_AddObjectToObject(proof, "headers");
    for (size_t i = 0; i < sizeof p->headers / sizeof p->headers[0]; i++) {
        if (!p->headers[i].name)
            continue;
        cJSON *h = cJSON_CreateObject();
        cf_json_put_str(h, "path", p->headers[i].path);
        cf_json_put_str(h, "version", p->headers[i].version);
        cJSON_AddItemToObject(hs, p->headers[i].name, h);
    }
    cJSON_AddItemToObject(o, "proof", proof);
    cJSON *nccl = cJSON_CreateObject();
    const struct cf_bridge_header *h = p->headers[0].path ? &p->headers[0] : &p->headers[1];
    cJSON *hdr = cJSON_CreateObject();
    cf_json_put_str(hdr, "value", h->version);
    cf_json_put_str(hdr, "from", h->path);
    cJSON_AddItemToObject(nccl, "header", hdr);
    cJSON_AddItemToObject(nccl, "library", item_json(&p->nccl_library));
    cJSON_AddItemToObject(nccl, "libtorch", item_json(&p->nccl_libtorch));
    cJSON_AddItemToObject(o, "nccl_versions", nccl);
    cJSON *abi = cJSON_CreateObject();
    cJSON_AddNumberToObject(abi, "options_size", (double)p->abi.options_size);
    cf_json_put_str(abi, "options_from", p->abi.options_from);
    cJSON_AddNumberToObject(abi, "process_group_size", (double)p->abi.process_group_size);
    cf_json_put_str(abi, "process_group_from", p->abi.process_group_from);
    cJSON_AddItemToObject(o, "libtorch_abi", abi);
    cJSON_AddItemToObject(o, "device_count", item_json(&p->device_count));
    cJSON_AddItemToObject(o, "includes", items_json(p->includes, p->n_includes));
    cJSON *libs = cJSON_CreateArray();
    for (size_t i = 0; i < p->n_libs; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "name", p->libs[i].name);
        cf_json_put_str(l, "path", p->libs[i].path);
        cf_json_put_str(l, "from", p->libs[i].from);
        cJSON_AddItemToObject(l, "searched", cf_json_strvec(&p->libs[i].searched));
        cJSON_AddItemToArray(libs, l);
    }
    cJSON_AddItemToObject(o, "libraries", libs);
    cJSON *ds = cJSON_CreateObject();
    cf_json_put_str(ds, "name", p->define_set);
    cf_json_put_str(ds, "why", p->define_set_why);
    cJSON_AddItemToObject(o, "define_set", ds);
    cJSON_AddItemToObject(o, "defines", items_json(p->defines, p->n_defines));
    cJSON_AddItemToObject(o, "rpath", items_json(p->rpath, p->n_rpath));
    cJSON_AddItemToObject(o, "duplicates", duplicates_json(p->duplicates, p->n_duplicates));
    cJSON_AddItemToObject(o, "source", item_json(&p->source));
    cJSON_AddItemToObject(o, "more_sources", cf_json_strvec(&p->more_sources));
    cJSON_AddItemToObject(o, "guard", item_json(&p->guard));
    cJSON_AddItemToObject(o, "toolkit_libs", items_json(p->toolkit_libs, p->n_toolkit_libs));
    cf_json_put_str(o, "toolkit_version", p->toolkit_version);
    cf_json_put_str(o, "module", p->module_name);
    cf_json_put_str(o, "package", p->package);
    cf_json_put_str(o, "package_dir", p->package_dir);
    cf_json_put_str(o, "output_name", p->output_name);
    cf_json_put_str(o, "output", p->output);
    cf_json_put_str(o, "output_dir", p->output ? p->out_dir : NULL);
    /* the plan as commands: runnable as given, from any directory; the first
     * (mkdir) creates the directories the others write into (the plan itself
     * writes nothing). steps: every argv in the order to run them. */
    if (p->output && p->source.value && p->guard.value) {
        size_t n;
        struct strvec *cmd = cf_bridge_plan_commands(p, &n); /* sources' compiles, the guard's, the link */
        struct strvec mk = STRVEC_INIT;
        cf_bridge_mkdir_argv(p, &mk);
        cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "mkdir"), "argv", cf_json_strvec(&mk));
        cJSON *steps = cJSON_AddArrayToObject(o, "steps");
        cJSON_AddItemToArray(steps, cf_json_strvec(&mk));
        for (size_t i = 0; i < n; i++)
            cJSON_AddItemToArray(steps, cf_json_strvec(&cmd[i]));
        cf_strvec_clear(&mk);
        cJSON *co = cJSON_AddObjectToObject(o, "compile");
        cJSON_AddItemToObject(co, "argv", cf_json_strvec(&cmd[0]));
        /* one per source, the bridge's (argv above) first: a one-source bridge has one */
        cJSON *all = cJSON_AddArrayToObject(co, "argvs");
        for (size_t i = 0; i + 2 < n; i++)
            cJSON_AddItemToArray(all, cf_json_strvec(&cmd[i]));
        cJSON_AddItemToObject(co, "guard_argv", cf_json_strvec(&cmd[n - 2]));
        cJSON_AddItemToObject(cJSON_AddObjectToObject(o, "link"), "argv", cf_json_strvec(&cmd[n - 1]));
        cf_bridge_commands_free(cmd, n);
    } else {
        cJSON_AddNullToObject(o, "mkdir");
        cJSON_AddNullToObject(o, "steps");
        cJSON_AddNullToObject(o, "compile");
        cJSON_AddNullToObject(o, "link");
    }
    cf_json_put_str(o, "into", p->into);
    if (p->max_glibc) {
        char *g = cf_asprintf("%d.%d", p->max_glibc / 1000, p->max_glibc % 1000);
        cJSON_AddStringToObject(o, "max_glibc", g);
        free(g);
    } else {
        cJSON_AddNullToObject(o, "max_glibc");
    }
    cf_json_put_str(o, "docker", p->docker);
    if (p->docker) {
        struct strvec inner = STRVEC_INIT, outer = STRVEC_INIT;
        cf_bridge_compile_argv(p, p->source.value ? p->source.value : "SOURCE", "OBJECT", &inner);
        cf_bridge_docker_argv(p, "BUILD_DIR", &inner, &outer);
        cJSON_AddItemToObject(o, "docker_compile", cf_json_strvec(&outer));
        cf_strvec_clear(&inner);
        cf_strvec_clear(&outer);
    }
    cJSON_AddItemToObject(o, "bundle", cf_json_strvec(&p->bundle_libs));
    cJSON_AddItemToObject(o, "notes", cf_json_strvec(&p->notes));
    cJSON_AddItemToObject(o, "problems", cf_json_strvec(&p->problems));
    cJSON_AddBoolToObject(o, "ok", p->problems.n == 0);
    return o;
}

static cJSON *build_json(const struct cf_bridge_build_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "output", r->output);
    cf_json_put_str(o, "installed", r->installed);
    cf_json_put_str(o, "log", r->log_path);
    cf_json_put_str(o, "object_cache", r->object_cache);
    cJSON_AddBoolToObject(o, "cache_hit", r->cache_hit);
    if (r->n_more_objects) { /* the plan's other sources' objects, each a hit or not */
        cJSON *more = cJSON_AddArrayToObject(o, "more_objects");
        for (size_t i = 0; i < r->n_more_objects; i++) {
            cJSON *m = cJSON_CreateObject();
            cf_json_put_str(m, "source", r->more_objects[i].source);
            cf_json_put_str(m, "object_cache", r->more_objects[i].cached);
            cJSON_AddBoolToObject(m, "cache_hit", r->more_objects[i].hit);
            cJSON_AddItemToArray(more, m);
        }
    }
    cJSON_AddNumberToObject(o, "compile_seconds", r->compile_seconds);
    cJSON_AddNumberToObject(o, "link_seconds", r->link_seconds);
    cJSON_AddItemToObject(o, "needed", cf_json_strvec(&r->needed));
    cJSON_AddItemToObject(o, "rpath", cf_json_strvec(&r->rpath));
    cJSON_AddItemToObject(o, "glibc_symbols", cf_json_strvec(&r->glibc_symbols));
    cJSON_AddItemToObject(o, "duplicates", duplicates_json(r->duplicates, r->n_duplicates));
    cJSON_AddItemToObject(o, "checks", cf_json_strvec(&r->checks));
    cJSON_AddItemToObject(o, "problems", cf_json_strvec(&r->problems));
    return o;
}

cJSON *cf_bridge_json(const char *sub, const struct cf_bridge_plan *plan, const struct cf_bridge_build_result *build,
                      const char *wheel_path, const char *platform_tag)
{
    cJSON *doc = cJSON_CreateObject();
    char *schema = cf_asprintf("cclforge.bridge-%s/2", sub);
    cJSON_AddStringToObject(doc, "schema", schema);
    free(schema);
    if (plan)
        cJSON_AddItemToObject(doc, "plan", plan_json(plan));
    if (build)
        cJSON_AddItemToObject(doc, "build", build_json(build));
    if (wheel_path) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "path", wheel_path);
        cJSON_AddStringToObject(w, "platform_tag", platform_tag);
        cJSON_AddItemToObject(doc, "wheel", w);
    }
    return doc;
}
