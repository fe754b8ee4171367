/* cclforge bridge plan|build|wheel: flags in, one library call, text or JSON out. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/bridge.h"
#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/strbuf.h"
#include "cli/term.h"
#include "cli/builtin.h"
#include "cli/cli.h"

static const char usage_text[] =
    "usage: cclforge bridge plan  [options] [--json]\n"
    "       cclforge bridge build [options] [-o DIR] [--json]\n"
    "       cclforge bridge wheel [options] [-o DIR] [--wheel-dir DIR] [--json]\n"
    "\n"
    "Plan, build and package the native ProcessGroupNCCL bridge (a Python extension\n"
    "exporting make_nccl_backend) for a vendor libtorch.\n"
    "\n"
    "  plan    the resolved configuration, each item with where it came from\n"
    "  build   compile and link <name><EXT_SUFFIX> into DIR/<package>/, then check it:\n"
    "          every NEEDED resolvable in the installed layout, no absolute RPATH,\n"
    "          PyInit_<name> exported\n"
    "  wheel   a reproducible wheel of a build (reuses DIR when it holds one)\n"
    "\n"
    "options:\n"
    "  --vendor nvidia|rocm|dtk   default: from the libtorch (libtorch_cuda / libtorch_hip) and ROCM_PATH\n"
    "  --libtorch DIR             a libtorch root or site-packages/torch (default: LIBTORCH, then the\n"
    "                             Python's torch)\n"
    "  --python PY                the interpreter to build for (default python3)\n"
    "  --cxx CXX                  C++ compiler (default: CXX, then g++); GCC >= 9, >= 10 for C++20 torch\n"
    "  --toolkit DIR              CUDA / ROCm / DTK root (default: CUDA_HOME, CUDA_PATH / ROCM_PATH, ...)\n"
    "  --nccl-home DIR            NCCL with include/nccl.h and lib/ (default: NCCL_HOME, pip's nvidia/nccl\n"
    "                             beside torch, the CUDA toolkit)\n"
    "  --name NAME                module name (default " CF_BRIDGE_DEFAULT_MODULE "); PyInit_NAME follows it\n"
    "  --package PKG              package directory (default " CF_BRIDGE_DEFAULT_PACKAGE ")\n"
    "  --source FILE              bridge source (default: CCLFORGE_BRIDGE_SOURCE, then beside cclforge)\n"
    "  --external-rpath DIR       an absolute directory the target hosts provide (repeatable)\n"
    "  --bundle FILE              a vendor library to ship in <package>/lib (repeatable; never libcuda)\n"
    "  --include DIR              one more include root after the vendor's (repeatable)\n"
    "  -o, --out DIR              build directory (default bridge-build)\n"
    "  --wheel-dir DIR            where the wheel goes (default dist)\n"
    "  --dist-name NAME           wheel distribution name (default cclforge-nccl-bridge)\n"
    "  --dist-version V           wheel version (default 0.1.0)\n"
    "  --platform-tag TAG         override the computed platform tag\n"
    "  --json                     machine-readable output (schema cclforge.bridge-<sub>/1)\n"
    "  -h, --help                 this text\n"
    "\n"
    "Exit status: 0 fine, 1 problems in the plan or a failed build, 2 usage error.\n"
    "Examples:\n"
    "  cclforge bridge plan --libtorch /opt/dtk/libtorch --vendor dtk\n"
    "  cclforge bridge wheel --python python3.11 -o bridge-build --wheel-dir dist\n";

enum {
    OPT_VENDOR = 256, OPT_LIBTORCH, OPT_PYTHON, OPT_CXX, OPT_TOOLKIT, OPT_NCCL_HOME, OPT_NAME, OPT_PACKAGE, OPT_SOURCE,
    OPT_EXT_RPATH, OPT_BUNDLE, OPT_INCLUDE, OPT_WHEEL_DIR, OPT_DIST_NAME, OPT_DIST_VERSION, OPT_PLATFORM_TAG, OPT_JSON
};

static const struct option long_options[] = {
    { "vendor", required_argument, 0, OPT_VENDOR },
    { "libtorch", required_argument, 0, OPT_LIBTORCH },
    { "python", required_argument, 0, OPT_PYTHON },
    { "cxx", required_argument, 0, OPT_CXX },
    { "toolkit", required_argument, 0, OPT_TOOLKIT },
    { "nccl-home", required_argument, 0, OPT_NCCL_HOME },
    { "name", required_argument, 0, OPT_NAME },
    { "package", required_argument, 0, OPT_PACKAGE },
    { "source", required_argument, 0, OPT_SOURCE },
    { "external-rpath", required_argument, 0, OPT_EXT_RPATH },
    { "bundle", required_argument, 0, OPT_BUNDLE },
    { "include", required_argument, 0, OPT_INCLUDE },
    { "out", required_argument, 0, 'o' },
    { "wheel-dir", required_argument, 0, OPT_WHEEL_DIR },
    { "dist-name", required_argument, 0, OPT_DIST_NAME },
    { "dist-version", required_argument, 0, OPT_DIST_VERSION },
    { "platform-tag", required_argument, 0, OPT_PLATFORM_TAG },
    { "json", no_argument, 0, OPT_JSON },
    { "help", no_argument, 0, 'h' },
    { 0, 0, 0, 0 },
};

struct args {
    struct cf_bridge_opts opts;
    struct strvec ext_rpath, bundle, includes;
    const char *out, *wheel_dir, *dist_name, *dist_version, *platform_tag;
    int json;
};

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
    cJSON_AddItemToObject(o, "torch", torch);
    cJSON_AddItemToObject(o, "toolkit_root", item_json(&p->toolkit_root));
    cJSON *nh = item_json(&p->nccl_header);
    cf_json_put_str(nh, "version", p->nccl_header_version);
    cJSON_AddItemToObject(o, "comm_header", nh);
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
    cJSON_AddItemToObject(o, "defines", items_json(p->defines, p->n_defines));
    cJSON_AddItemToObject(o, "rpath", items_json(p->rpath, p->n_rpath));
    cJSON_AddItemToObject(o, "source", item_json(&p->source));
    cf_json_put_str(o, "module", p->module_name);
    cf_json_put_str(o, "package", p->package);
    cf_json_put_str(o, "output", p->output_name);
    cJSON_AddItemToObject(o, "bundle", cf_json_strvec(&p->bundle_libs));
    cJSON_AddItemToObject(o, "problems", cf_json_strvec(&p->problems));
    cJSON_AddBoolToObject(o, "ok", p->problems.n == 0);
    return o;
}

static void row(const char *label, const char *value, const char *from)
{
    printf("  %-10s %s", label, value ? cli_safe(value) : "(none)");
    if (from && *from)
        printf("  %s[%s]%s", cf_term_color(stdout, CF_DIM), cli_safe(from), cf_term_color(stdout, CF_RESET));
    putchar('\n');
}

static void print_plan(const struct cf_bridge_plan *p)
{
    printf("%sbridge plan%s: vendor %s, module %s.%s\n", cf_term_color(stdout, CF_BOLD),
           cf_term_color(stdout, CF_RESET), cf_vendor_get(p->vendor)->word, cli_safe(p->package),
           cli_safe(p->module_name));
    row("vendor", p->vendor_item.value, p->vendor_item.from);
    if (p->cxx.value) {
        char *v = cf_asprintf("%s %s, -std=%s, gate %s", p->cxx.value, p->cxx_version ? p->cxx_version : "?",
                              p->cxx_std ? p->cxx_std : "c++17", p->cxx_gate ? p->cxx_gate : "?");
        row("compiler", v, p->cxx.from);
        free(v);
    } else {
        row("compiler", NULL, NULL);
    }
    char *py = cf_asprintf("%s %s %s %s", p->python.value ? p->python.value : "?",
                           p->python_version ? p->python_version : "?", p->python_tag ? p->python_tag : "?",
                           p->ext_suffix ? p->ext_suffix : "?");
    row("python", py, p->python.from);
    free(py);
    char *torch = cf_asprintf("%s (torch %s, _GLIBCXX_USE_CXX11_ABI=%d)", p->torch_dir.value ? p->torch_dir.value : "-",
                              p->torch_version ? p->torch_version : "?", p->cxx11_abi == 0 ? 0 : 1);
    row("libtorch", p->torch_dir.value ? torch : NULL, p->torch_dir.from);
    free(torch);
    row("toolkit", p->toolkit_root.value, p->toolkit_root.from);
    char *hdr = cf_asprintf("%s (%s)", p->nccl_header.value ? p->nccl_header.value : "-",
                            p->nccl_header_version ? p->nccl_header_version : "version ?");
    row(cf_basename(cf_vendor_get(p->vendor)->comm->headers[0]), p->nccl_header.value ? hdr : NULL, p->nccl_header.from);
    free(hdr);
    for (size_t i = 0; i < p->n_includes; i++)
        row("include", p->includes[i].value, p->includes[i].from);
    for (size_t i = 0; i < p->n_libs; i++) {
        char *v = cf_asprintf("-l%s -> %s", p->libs[i].name, p->libs[i].path ? p->libs[i].path : "NOT FOUND");
        row("library", v, p->libs[i].from);
        free(v);
    }
    for (size_t i = 0; i < p->n_defines; i++)
        row("define", p->defines[i].value, p->defines[i].from);
    for (size_t i = 0; i < p->n_rpath; i++)
        row("rpath", p->rpath[i].value, p->rpath[i].from);
    for (size_t i = 0; i < p->bundle_libs.n; i++)
        row("bundle", p->bundle_libs.v[i], "--bundle");
    row("source", p->source.value, p->source.from);
    char *out = p->output_name ? cf_asprintf("%s/%s", p->package, p->output_name) : NULL;
    row("output", out, NULL);
    free(out);
    if (p->problems.n) {
        printf("%sproblems%s (%zu):\n", cf_term_color(stdout, CF_RED), cf_term_color(stdout, CF_RESET), p->problems.n);
        for (size_t i = 0; i < p->problems.n; i++)
            printf("  - %s\n", cli_safe(p->problems.v[i]));
    } else {
        printf("%sok%s: nothing missing\n", cf_term_color(stdout, CF_GREEN), cf_term_color(stdout, CF_RESET));
    }
}

static cJSON *build_json(const struct cf_bridge_build_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cf_json_put_str(o, "output", r->output);
    cf_json_put_str(o, "log", r->log_path);
    cJSON_AddNumberToObject(o, "compile_seconds", r->compile_seconds);
    cJSON_AddNumberToObject(o, "link_seconds", r->link_seconds);
    cJSON_AddItemToObject(o, "needed", cf_json_strvec(&r->needed));
    cJSON_AddItemToObject(o, "rpath", cf_json_strvec(&r->rpath));
    cJSON_AddItemToObject(o, "checks", cf_json_strvec(&r->checks));
    cJSON_AddItemToObject(o, "problems", cf_json_strvec(&r->problems));
    return o;
}

static void print_build(const struct cf_bridge_build_result *r)
{
    printf("built %s (compile %.1fs, link %.1fs; log %s)\n", cli_safe(r->output), r->compile_seconds, r->link_seconds,
           cli_safe(r->log_path));
    for (size_t i = 0; i < r->checks.n; i++)
        printf("  %s\n", cli_safe(r->checks.v[i]));
}

static int parse(int argc, char **argv, const char *cmd, struct args *a)
{
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+o:h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_VENDOR: a->opts.vendor = optarg; break;
        case OPT_LIBTORCH: a->opts.libtorch = optarg; break;
        case OPT_PYTHON: a->opts.python = optarg; break;
        case OPT_CXX: a->opts.cxx = optarg; break;
        case OPT_TOOLKIT: a->opts.toolkit_root = optarg; break;
        case OPT_NCCL_HOME: a->opts.nccl_home = optarg; break;
        case OPT_NAME: a->opts.module_name = optarg; break;
        case OPT_PACKAGE: a->opts.package = optarg; break;
        case OPT_SOURCE: a->opts.source = optarg; break;
        case OPT_EXT_RPATH: cf_strvec_push(&a->ext_rpath, optarg); break;
        case OPT_BUNDLE: cf_strvec_push(&a->bundle, optarg); break;
        case OPT_INCLUDE: cf_strvec_push(&a->includes, optarg); break;
        case 'o': a->out = optarg; break;
        case OPT_WHEEL_DIR: a->wheel_dir = optarg; break;
        case OPT_DIST_NAME: a->dist_name = optarg; break;
        case OPT_DIST_VERSION: a->dist_version = optarg; break;
        case OPT_PLATFORM_TAG: a->platform_tag = optarg; break;
        case OPT_JSON: a->json = 1; break;
        default:
            return cli_usage(cmd, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    a->opts.external_rpath = (const char *const *)a->ext_rpath.v;
    a->opts.n_external_rpath = a->ext_rpath.n;
    a->opts.bundle_libs = (const char *const *)a->bundle.v;
    a->opts.n_bundle_libs = a->bundle.n;
    a->opts.extra_includes = (const char *const *)a->includes.v;
    a->opts.n_extra_includes = a->includes.n;
    return 0;
}

static int run_wheel(struct args *a, cJSON *doc)
{
    cf_error err = CF_ERROR_INIT;
    struct cf_bridge_wheel_opts wo = { 0 };
    wo.build_dir = a->out ? a->out : "bridge-build";
    wo.wheel_dir = a->wheel_dir ? a->wheel_dir : "dist";
    wo.dist_name = a->dist_name;
    wo.version = a->dist_version;
    wo.platform_tag = a->platform_tag;
    char *path = NULL, *tag = NULL;
    if (cf_bridge_wheel(&wo, &path, &tag, &err) < 0) {
        cJSON_Delete(doc);
        return cli_fail("bridge", &err);
    }
    if (a->json) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "path", path);
        cJSON_AddStringToObject(w, "platform_tag", tag);
        cJSON_AddItemToObject(doc, "wheel", w);
        cli_print_json(doc);
    } else {
        cJSON_Delete(doc);
        printf("wheel %s (platform tag %s)\n", cli_safe(path), cli_safe(tag));
    }
    free(path);
    free(tag);
    return EXIT_FINE;
}

static int has_build(const char *dir)
{
    char *p = cf_asprintf("%s/cclforge-build.json", dir);
    int found = cf_is_file(p);
    free(p);
    return found;
}

int cmd_bridge(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_FINE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "plan") && strcmp(sub, "build") && strcmp(sub, "wheel"))
        return cli_usage("bridge", "unknown subcommand '%s' (plan, build or wheel)", sub);
    if (cli_wants_help(argc - 1, argv + 1)) {
        fputs(usage_text, stdout);
        return EXIT_FINE;
    }
    struct args a = { 0 };
    char *cmd = cf_asprintf("bridge %s", sub);
    int rc = parse(argc - 1, argv + 1, cmd, &a);
    free(cmd);
    if (rc)
        goto done;
    char *schema = cf_asprintf("cclforge.bridge-%s/1", sub);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", schema);
    free(schema);

    /* a wheel of an existing build needs no plan */
    if (!strcmp(sub, "wheel") && has_build(a.out ? a.out : "bridge-build")) {
        rc = run_wheel(&a, doc);
        goto done;
    }
    struct cf_bridge_plan plan;
    cf_error err = CF_ERROR_INIT;
    if (cf_bridge_plan_make(&a.opts, &plan, &err) < 0) {
        cJSON_Delete(doc);
        cf_bridge_plan_release(&plan);
        rc = cli_fail("bridge", &err);
        goto done;
    }
    cJSON_AddItemToObject(doc, "plan", plan_json(&plan));
    if (!strcmp(sub, "plan")) {
        if (a.json)
            cli_print_json(doc);
        else {
            cJSON_Delete(doc);
            print_plan(&plan);
        }
        rc = plan.problems.n ? EXIT_PROBLEMS : EXIT_FINE;
        cf_bridge_plan_release(&plan);
        goto done;
    }
    if (plan.problems.n) {
        if (a.json)
            cli_print_json(doc);
        else {
            cJSON_Delete(doc);
            print_plan(&plan);
        }
        cli_error("bridge", "the plan has %zu problem(s); nothing was built", plan.problems.n);
        cf_bridge_plan_release(&plan);
        rc = EXIT_PROBLEMS;
        goto done;
    }
    struct cf_bridge_build_result br;
    if (!a.json && cf_term_is_tty(stderr))
        fprintf(stderr, "compiling %s against %s (this takes a minute or more)...\n", cli_safe(plan.source.value),
                cli_safe(plan.torch_dir.value));
    int brc = cf_bridge_build(&plan, a.out ? a.out : "bridge-build", &br, &err);
    cJSON_AddItemToObject(doc, "build", build_json(&br));
    cf_bridge_plan_release(&plan);
    if (brc < 0) {
        if (a.json)
            cli_print_json(doc);
        else
            cJSON_Delete(doc);
        cf_bridge_build_result_release(&br);
        rc = cli_fail("bridge", &err);
        goto done;
    }
    if (!strcmp(sub, "build")) {
        if (a.json)
            cli_print_json(doc);
        else {
            cJSON_Delete(doc);
            print_build(&br);
        }
        cf_bridge_build_result_release(&br);
        rc = EXIT_FINE;
        goto done;
    }
    if (!a.json)
        print_build(&br);
    cf_bridge_build_result_release(&br);
    rc = run_wheel(&a, doc);
done:
    cf_strvec_clear(&a.ext_rpath);
    cf_strvec_clear(&a.bundle);
    cf_strvec_clear(&a.includes);
    return rc;
}
