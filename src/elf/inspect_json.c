/* The cclforge.inspect/1 document (docs/schemas/inspect.md) of an inspect
 * result: every node with where and why it was found, every object with its
 * comm-library and GPU-code facts and lint, the search lists, the symbol
 * check, the problems and the scan cache's counts. Nothing reads it back.
 * A struct written field by field is a table (cclforge/json_fields.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cclforge/cpufacts.h"
#include "cclforge/glibc.h"
#include "cclforge/inspect.h"
#include "cclforge/json.h"
#include "cclforge/json_fields.h"

/* the enums' names, as a table's ENUM field asks for them */
#define NAME_OF(fn, type) static const char *fn##_int(int v) { return fn((type)v); }
NAME_OF(cf_rpath_kind_name, enum cf_rpath_finding_kind)
NAME_OF(cf_lint_severity_name, enum cf_lint_severity)
NAME_OF(cf_inspect_problem_kind_name, enum cf_inspect_problem_kind)
static const char *symcheck_kind_name(int v)
{
    return v == CF_SYMCHECK_UNDEFINED ? "undefined-symbol" : "version-not-found";
}
#define ENUM(S, key, field, fn) CF_JF_AS(S, key, field, CF_JF_ENUM, .name = fn)
#define STR(S, key, field) CF_JF_AS(S, key, field, CF_JF_STR)
/* a string left out, not null, when there is none */
#define TEXT(S, key, field) CF_JF_AS(S, key, field, CF_JF_STR, .flags = CF_JF_OMIT_NULL)

#define O(key, field, type) CF_JF_AS(struct cf_ldso_object, key, field, type)
static const struct cf_jf object_fields[] = {
    CF_JF_SLOT("index"), TEXT(struct cf_ldso_object, "path", path), O("soname", soname, CF_JF_STR),
    O("rpath", rpath, CF_JF_STR), O("runpath", runpath, CF_JF_STR), O("node", node, CF_JF_LONG),
    O("loader", loader, CF_JF_LONG), O("is_interp", is_interp, CF_JF_BOOL),
};
static const struct cf_jf_table object_table = CF_JF_TABLE(struct cf_ldso_object, object_fields);
#define F(key, field) TEXT(struct cf_rpath_finding, key, field)
static const struct cf_jf lint_fields[] = {
    ENUM(struct cf_rpath_finding, "kind", kind, cf_rpath_kind_name_int),
    ENUM(struct cf_rpath_finding, "severity", severity, cf_lint_severity_name_int), F("tag", tag), F("entry", entry),
    STR(struct cf_rpath_finding, "expanded", expanded), F("message", message),
};
static const struct cf_jf_table lint_table = CF_JF_TABLE(struct cf_rpath_finding, lint_fields);
#define P(key, field) STR(struct cf_symcheck_problem, key, field)
static const struct cf_jf symbol_problem_fields[] = {
    CF_JF_AS(struct cf_symcheck_problem, "kind", kind, CF_JF_ENUM, .name = symcheck_kind_name), P("symbol", symbol),
    P("version", version), P("object", object), P("provider", provider),
    TEXT(struct cf_symcheck_problem, "message", message),
};
static const struct cf_jf_table symbol_problem_table = CF_JF_TABLE(struct cf_symcheck_problem, symbol_problem_fields);
#define Y(key, field) CF_JF_AS(struct cf_symcheck_result, key, field, CF_JF_SIZE)
static const struct cf_jf symbols_fields[] = {
    Y("undefined", n_undefined), Y("versions_not_found", n_versions), Y("references", n_references),
    Y("definitions", n_definitions), CF_JF_ARR(struct cf_symcheck_result, problems, n_problems, 0),
};
static const struct cf_jf_table *const symbols_subs[] = { &symbol_problem_table };
static const struct cf_jf_table symbols_table =
    CF_JF_TABLE_SUBS(struct cf_symcheck_result, symbols_fields, symbols_subs);
static const struct cf_jf problem_fields[] = {
    ENUM(struct cf_inspect_problem, "kind", kind, cf_inspect_problem_kind_name_int),
    ENUM(struct cf_inspect_problem, "severity", severity, cf_lint_severity_name_int),
    CF_JF_AS(struct cf_inspect_problem, "object", object, CF_JF_LONG), STR(struct cf_inspect_problem, "path", path),
    TEXT(struct cf_inspect_problem, "message", message),
};
static const struct cf_jf_table problem_table = CF_JF_TABLE(struct cf_inspect_problem, problem_fields);
#define OPT(key, field, type) CF_JF_AS(struct cf_inspect_opts, key, field, type)
static const struct cf_jf options_fields[] = {
    OPT("root", root, CF_JF_STR), OPT("glibc", glibc, CF_JF_STR), OPT("cpu", cpu, CF_JF_STR),
    OPT("ld_library_path", ld_library_path, CF_JF_STR),
    OPT("ignore_ld_library_path", ignore_ld_library_path, CF_JF_BOOL), OPT("undefined", undefined, CF_JF_BOOL),
    OPT("within", within, CF_JF_STR), OPT("explain", explain, CF_JF_BOOL),
};
static const struct cf_jf_table options_table = CF_JF_TABLE(struct cf_inspect_opts, options_fields);
#define C(key, field) CF_JF_AS(struct cf_inspect_result, key, field, CF_JF_SIZE)
static const struct cf_jf cache_fields[] = {
    STR(struct cf_inspect_result, "dir", cache_dir), C("memory_hits", cache_memory_hits),
    C("disk_hits", cache_disk_hits), C("misses", cache_misses), C("stored", cache_stored), C("evicted", cache_evicted),
};
static const struct cf_jf_table cache_table = CF_JF_TABLE(struct cf_inspect_result, cache_fields);

static cJSON *json_str_or_null(const char *s) { return s ? cJSON_CreateString(s) : cJSON_CreateNull(); }

static cJSON *json_considered(const struct cf_ldso_node *n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n->n_considered; i++) {
        const struct cf_ldso_candidate *k = &n->considered[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", k->path);
        cJSON_AddStringToObject(o, "source", cf_ldso_reason_name(k->source));
        cJSON_AddBoolToObject(o, "used", k->reject == CF_LDSO_REJ_NONE);
        cJSON_AddItemToObject(o, "result", cJSON_CreateString(cf_ldso_reject_name(k->reject)));
        cJSON_AddItemToObject(o, "detail", json_str_or_null(k->detail));
        if (k->list >= 0) {
            cJSON_AddNumberToObject(o, "search_list", (double)k->list);
            cJSON_AddNumberToObject(o, "from", (double)k->from);
            cJSON_AddNumberToObject(o, "to", (double)k->to);
        } else {
            cJSON_AddNullToObject(o, "search_list");
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *json_node(const struct cf_ldso_result *c, const struct cf_ldso_node *n, long index)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", (double)index);
    cJSON_AddStringToObject(o, "needed", n->needed);
    cJSON_AddItemToObject(o, "expanded", json_str_or_null(n->expanded));
    cJSON_AddItemToObject(o, "path", json_str_or_null(n->path));
    cJSON_AddStringToObject(o, "reason", cf_ldso_reason_name(n->reason));
    char *why = cf_ldso_describe_reason(n);
    cJSON_AddStringToObject(o, "why", why);
    free(why);
    cJSON_AddItemToObject(o, "via", json_str_or_null(n->via));
    cJSON_AddNumberToObject(o, "depth", n->depth);
    cJSON_AddNumberToObject(o, "parent_object", (double)n->parent);
    cJSON_AddNumberToObject(o, "parent_node", n->parent >= 0 && c ? (double)c->objects[n->parent].node : -1.0);
    cJSON_AddNumberToObject(o, "object", (double)n->object);
    cJSON_AddItemToObject(o, "error", json_str_or_null(n->error));
    cJSON_AddItemToObject(o, "considered", json_considered(n));
    return o;
}

static cJSON *json_arch_list(const struct cf_arch *archs, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(archs[i].name));
    return arr;
}

static cJSON *json_banner(const struct cf_commlib_banner *b)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "library", cf_commlib_name(b->lib));
    char version[64];
    snprintf(version, sizeof version, "%u.%u.%u%s", b->major, b->minor, b->patch, b->suffix);
    cJSON_AddStringToObject(o, "version", version);
    cJSON_AddNumberToObject(o, "version_code", b->version_code);
    cJSON_AddStringToObject(o, "suffix", b->suffix);
    if (b->toolkit[0]) {
        char tk[32];
        snprintf(tk, sizeof tk, "%u.%u", b->toolkit_major, b->toolkit_minor);
        cJSON_AddStringToObject(o, "toolkit", b->toolkit);
        cJSON_AddStringToObject(o, "toolkit_version", tk);
    } else {
        cJSON_AddNullToObject(o, "toolkit");
        cJSON_AddNullToObject(o, "toolkit_version");
    }
    cJSON_AddStringToObject(o, "text", b->text);
    cJSON_AddNumberToObject(o, "offset", (double)b->offset);
    return o;
}

static cJSON *json_object(const struct cf_ldso_object *lo, const struct cf_inspect_object *io, long index)
{
    cJSON *o = cf_jf_to_json(&object_table, lo);
    cJSON_ReplaceItemInObjectCaseSensitive(o, "index", cJSON_CreateNumber((double)index));
    cJSON_AddItemToObject(o, "error", json_str_or_null(io->error));

    const struct cf_commlib_identity *id = &io->commlib;
    if (io->commlib_scanned) {
        cJSON *comm = cJSON_CreateObject();
        cJSON_AddStringToObject(comm, "is_library", cf_commlib_name(id->library));
        cJSON_AddBoolToObject(comm, "found", id->found);
        cJSON_AddBoolToObject(comm, "embeds_copy", id->found && id->embeds_copy);
        cJSON_AddItemToObject(comm, "banner", id->found ? json_banner(&id->banner) : cJSON_CreateNull());
        cJSON *vers = cJSON_AddArrayToObject(comm, "banners");
        for (size_t i = 0; i < id->n_banners; i++)
            cJSON_AddItemToArray(vers, json_banner(&id->banners[i]));
        cJSON_AddNumberToObject(comm, "bytes_scanned", (double)id->bytes_scanned);
        cJSON_AddNumberToObject(comm, "fatbins_skipped", (double)id->fatbins_skipped);
        cJSON_AddNumberToObject(comm, "bytes_skipped", (double)id->bytes_skipped);
        cJSON_AddItemToObject(o, "comm", comm);
    } else {
        cJSON_AddNullToObject(o, "comm");
    }

    if (io->gpu_scanned) {
        const struct cf_gpucode_inventory *g = &io->gpu;
        cJSON *gpu = cJSON_CreateObject();
        cJSON_AddItemToObject(gpu, "sass", json_arch_list(g->sass, g->n_sass));
        cJSON_AddItemToObject(gpu, "ptx", json_arch_list(g->ptx, g->n_ptx));
        cJSON_AddItemToObject(gpu, "ltoir", json_arch_list(g->ltoir, g->n_ltoir));
        cJSON *amd = cJSON_AddArrayToObject(gpu, "amd_targets");
        for (size_t i = 0; i < g->amd_targets.n; i++)
            cJSON_AddItemToArray(amd, cJSON_CreateString(g->amd_targets.v[i]));
        cJSON_AddNumberToObject(gpu, "fatbin_entries", (double)g->fatbin_entries);
        cJSON_AddNumberToObject(gpu, "bundles", (double)g->bundles);
        cJSON_AddNumberToObject(gpu, "compressed_bundles", (double)g->compressed_bundles);
        cJSON_AddItemToObject(gpu, "problem", json_str_or_null(g->problem));
        cJSON_AddNumberToObject(gpu, "embedded_containers", (double)g->embedded_containers);
        cJSON *secs = cJSON_AddArrayToObject(gpu, "sections");
        for (size_t i = 0; i < g->n_sections; i++) {
            const struct cf_gpucode_section *gs = &g->sections[i];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", gs->name);
            cJSON_AddBoolToObject(x, "embedded", gs->embedded);
            cJSON_AddNumberToObject(x, "containers", (double)gs->containers);
            cJSON_AddNumberToObject(x, "entries", (double)gs->entries);
            cJSON_AddItemToObject(x, "sass", json_arch_list(gs->sass, gs->n_sass));
            cJSON_AddItemToObject(x, "ptx", json_arch_list(gs->ptx, gs->n_ptx));
            cJSON_AddItemToObject(x, "ltoir", json_arch_list(gs->ltoir, gs->n_ltoir));
            cJSON_AddItemToArray(secs, x);
        }
        cJSON_AddItemToObject(o, "gpu", gpu);
    } else {
        cJSON_AddNullToObject(o, "gpu");
    }

    cJSON_AddItemToObject(o, "lint", cf_jf_array_to_json(&lint_table, io->lint.findings, io->lint.n));
    cJSON_AddBoolToObject(o, "lint_within", io->lint_within);
    cJSON_AddBoolToObject(o, "from_cache", io->from_cache);
    return o;
}

static cJSON *json_cpu(const struct cf_cpu_facts *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "x86", f->x86);
    cJSON_AddStringToObject(o, "vendor", cf_cpu_vendor_name(f->vendor));
    cJSON_AddNumberToObject(o, "isa_level", cf_cpu_isa_level(f));
    cJSON_AddNumberToObject(o, "family", f->family);
    cJSON_AddNumberToObject(o, "model", f->model);
    cJSON *usable = cJSON_AddArrayToObject(o, "usable");
    for (int k = 0; k < CF_CPU_FEATURE_COUNT; k++)
        if (cf_cpu_has(f, (enum cf_cpu_feature)k))
            cJSON_AddItemToArray(usable, cJSON_CreateString(cf_cpu_feature_name((enum cf_cpu_feature)k)));
    cJSON_AddStringToObject(o, "source", f->source);
    return o;
}

/* Which glibc release and CPU the resolution followed, and what they made of it. */
static cJSON *json_loader_facts(const struct cf_ldso_result *c)
{
    cJSON *o = cJSON_CreateObject();
    char v[32];
    snprintf(v, sizeof v, "%u.%u", c->facts.glibc.major, c->facts.glibc.minor);
    cJSON_AddStringToObject(o, "glibc", v);
    cJSON_AddStringToObject(o, "glibc_source", c->facts.glibc_source);
    cJSON *rules = cJSON_AddArrayToObject(o, "glibc_rules");
    for (int r = 0; r < CF_GLIBC_RULE_COUNT; r++)
        if (cf_glibc_follows(c->facts.glibc, (enum cf_glibc_rule)r))
            cJSON_AddItemToArray(rules, cJSON_CreateString(cf_glibc_rule_name((enum cf_glibc_rule)r)));
    cJSON_AddItemToObject(o, "cpu", json_cpu(&c->facts.cpu));
    cf_json_put_strvec(o, "hwcaps", &c->hwcaps);
    cf_json_put_strvec(o, "legacy_hwcaps", &c->legacy_hwcaps);
    return o;
}

static cJSON *json_target(const struct cf_inspect_target *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", t->file);
    cJSON_AddItemToObject(o, "located_as", json_str_or_null(t->located_as));
    cJSON_AddItemToObject(o, "error", json_str_or_null(t->error));
    cJSON_AddBoolToObject(o, "static", t->is_static);
    const struct cf_ldso_result *c = &t->closure;
    if (!t->error) {
        cJSON *loader = cJSON_AddObjectToObject(o, "loader");
        cJSON_AddNumberToObject(loader, "elf_class", c->elf_class);
        cJSON_AddNumberToObject(loader, "machine", c->machine);
        cJSON_AddItemToObject(loader, "interp", json_str_or_null(c->interp));
        cJSON_AddItemToObject(loader, "lib", json_str_or_null(c->dst_lib));
        cJSON_AddItemToObject(loader, "platform", json_str_or_null(c->dst_platform));
        cJSON_AddItemToObject(loader, "facts", json_loader_facts(c));
    } else {
        cJSON_AddNullToObject(o, "loader");
    }
    cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
    for (size_t i = 0; i < c->n_nodes; i++)
        cJSON_AddItemToArray(nodes, json_node(c, &c->nodes[i], (long)i));
    cJSON *objects = cJSON_AddArrayToObject(o, "objects");
    for (size_t i = 0; i < c->n_objects; i++)
        cJSON_AddItemToArray(objects, json_object(&c->objects[i], &t->objects[i], (long)i));
    cJSON *lists = cJSON_AddArrayToObject(o, "search_lists");
    for (size_t i = 0; i < c->n_lists; i++) {
        const struct cf_ldso_search_list *l = &c->lists[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "source", cf_ldso_reason_name(l->source));
        cJSON_AddNumberToObject(x, "object", (double)l->via);
        cf_json_put_strvec(x, "directories", &l->dirs);
        cJSON *missing = cJSON_AddArrayToObject(x, "missing");
        for (size_t d = 0; d < l->dirs.n; d++)
            if (l->missing[d])
                cJSON_AddItemToArray(missing, cJSON_CreateNumber((double)d));
        cJSON_AddItemToArray(lists, x);
    }
    cJSON_AddItemToObject(o, "symbols",
                          t->symcheck_done ? cf_jf_to_json(&symbols_table, &t->symcheck) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "problems", cf_jf_array_to_json(&problem_table, t->problems, t->n_problems));
    cJSON *sum = cJSON_AddObjectToObject(o, "summary");
    cJSON_AddNumberToObject(sum, "objects", (double)c->n_objects);
    cJSON_AddNumberToObject(sum, "missing", (double)cf_inspect_count(t, CF_INSPECT_MISSING));
    cJSON_AddNumberToObject(sum, "nccl_copies", (double)t->nccl_copies);
    cJSON_AddNumberToObject(sum, "errors", (double)t->n_errors);
    cJSON_AddNumberToObject(sum, "warnings", (double)t->n_warnings);
    return o;
}

cJSON *cf_inspect_json(const struct cf_inspect_opts *opts, const struct cf_inspect_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.inspect/1");
    cJSON_AddStringToObject(doc, "mode", r->default_mode ? "default" : "files");
    cJSON *o = cf_jf_to_json(&options_table, opts);
    cJSON_AddItemToObject(doc, "options", o);
    cJSON_AddBoolToObject(o, "gpu", !opts->no_gpu); /* the scans made, where opts holds those left out */
    cJSON_AddBoolToObject(o, "banner", !opts->no_banner);
    cJSON_AddBoolToObject(o, "cache", !opts->no_cache);
    cJSON *lookups = cJSON_AddArrayToObject(doc, "lookups");
    for (size_t i = 0; i < r->n_lookups; i++) {
        cJSON *n = json_node(NULL, &r->lookups[i].node, -1);
        cJSON_DeleteItemFromObject(n, "index");
        cJSON_AddStringToObject(n, "name", r->lookups[i].name);
        cJSON_AddItemToArray(lookups, n);
    }
    cJSON *targets = cJSON_AddArrayToObject(doc, "targets");
    for (size_t i = 0; i < r->n_targets; i++)
        cJSON_AddItemToArray(targets, json_target(&r->targets[i]));
    cJSON_AddItemToObject(doc, "scan_cache", cf_jf_to_json(&cache_table, r));
    cJSON *sum = cJSON_AddObjectToObject(doc, "summary");
    cJSON_AddNumberToObject(sum, "targets", (double)r->n_targets);
    cJSON_AddNumberToObject(sum, "errors", (double)r->n_errors);
    cJSON_AddNumberToObject(sum, "warnings", (double)r->n_warnings);
    cJSON_AddBoolToObject(sum, "ok", r->n_errors == 0);
    return doc;
}
