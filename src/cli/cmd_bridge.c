/* cclforge bridge plan|build|wheel: flags in, one library call, text or JSON out. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/bridge.h"
#include "cclforge/fs.h"
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
    "  plan    also proves the headers: the compiler's preprocessor says which nccl.h\n"
    "          really resolves; it must match the NCCL linked and libtorch's; and gives\n"
    "          the compile, ABI-guard and link commands, runnable as given (-o DIR)\n"
    "  build   compile and link <name><EXT_SUFFIX> into DIR/<package dir>/, then check it\n"
    "          in its installed layout (import torch first, then the extension): every\n"
    "          NEEDED and undefined symbol resolved, $ORIGIN RPATHs only, PyInit_<name>\n"
    "  wheel   a reproducible wheel of a build (reuses DIR when it holds one)\n"
    "\n"
    "options:\n"
    "  --vendor nvidia|rocm|dtk   default: from the vendor libraries (libtorch_cuda / libtorch_hip) and\n"
    "                             DTK_HOME / ROCM_PATH\n"
    "  --libtorch DIR             torch's headers and the vendor libraries from one place: a libtorch\n"
    "                             root or site-packages/torch (default: LIBTORCH, then the Python's torch)\n"
    "  --torch-headers DIR        torch's headers alone (a CPU torch package or its include/)\n"
    "  --vendor-libs DIR          the vendor libraries alone (libc10_hip.so, libtorch_hip.so, librccl.so.1)\n"
    "  --python PY                the interpreter to build for (default python3)\n"
    "  --cxx CXX                  C++ compiler (default: CXX, then g++); GCC >= 9, >= 10 for C++20 torch\n"
    "  --toolkit DIR              CUDA / ROCm / DTK root (default: CUDA_HOME, CUDA_PATH / DTK_HOME, ROCM_PATH, ...)\n"
    "  --nccl-home DIR            NCCL with include/nccl.h and lib/ (default: NCCL_HOME, pip's nvidia/nccl\n"
    "                             beside torch, the CUDA toolkit)\n"
    "  --name NAME                module name (default " CF_BRIDGE_DEFAULT_MODULE "); PyInit_NAME follows it\n"
    "  --package PKG              dotted package it lives in (default " CF_BRIDGE_DEFAULT_PACKAGE ")\n"
    "  --rpath ENTRY              an $ORIGIN-relative RPATH entry of the installed extension, inside the\n"
    "                             package tree or site-packages, e.g. '$ORIGIN/../../lib_dcu' (repeatable)\n"
    "  --bundle FILE              a vendor library to ship in <package>/lib (repeatable; never libcuda)\n"
    "  --include DIR              an include root searched first (repeatable)\n"
    "  --define NAME[=VALUE]      add to or replace in the chosen define set (repeatable)\n"
    "  --undefine NAME            drop from the chosen define set (repeatable)\n"
    "  --source FILE              bridge source: cclforge's or the plugin's own (repeatable: a bridge of\n"
    "                             several .cpp files, one of which defines make_nccl_backend; each compiled\n"
    "                             with the same flags; cclforge's ABI guard is linked into every bridge)\n"
    "                             (default: CCLFORGE_BRIDGE_SOURCE, then beside cclforge)\n"
    "  --into DIR                 build: check the extension in the layout of DIR (a source or staging tree),\n"
    "                             then place it (and --bundle libraries) at DIR/<package dir>/; a failed\n"
    "                             build leaves DIR as it was\n"
    "  --max-glibc V              fail when the result needs a GLIBC_ version above V (2.28 or a manylinux tag)\n"
    "  --docker IMAGE             compile and link inside IMAGE (docker run, inputs mounted read-only)\n"
    "  --toolkit-lib SONAME       a library the host's toolkit provides (e.g. librccl.so.1 in <DTK>/lib): no\n"
    "                             RPATH to it, recorded in the wheel, checked by wheel verify and doctor\n"
    "                             (repeatable; default: the vendor's comm library and runtime when the\n"
    "                             vendor directory does not ship them)\n"
    "  -o, --out DIR              build directory (default bridge-build; plan: where its commands write)\n"
    "  --wheel-dir DIR            where the wheel goes (default dist)\n"
    "  --dist-name NAME           wheel distribution name (default cclforge-nccl-bridge)\n"
    "  --dist-version V           wheel version (default 0.1.0)\n"
    "  --platform-tag TAG         override the computed platform tag\n"
    "  --json                     machine-readable output (schema cclforge.bridge-<sub>/2)\n"
    "  -h, --help                 this text\n"
    CLI_HELP_COLOR("             ")
    "\n"
    "Exit status: 0 fine, 1 problems in the plan or a failed build, 2 usage error.\n"
    "Examples:\n"
    "  cclforge bridge plan --libtorch /opt/dtk/libtorch --vendor dtk\n"
    "  cclforge bridge build --vendor dtk --torch-headers $SITE/torch --vendor-libs src/torch_fl/lib_dcu \\\n"
    "      --package torch_fl.comm._nccl_ext --name _flagos_nccl --rpath '$ORIGIN/../../lib_dcu' --into src\n"
    "  cclforge bridge wheel --python python3.11 -o bridge-build --wheel-dir dist\n";

enum {
    OPT_VENDOR = 256, OPT_LIBTORCH, OPT_TORCH_HEADERS, OPT_VENDOR_LIBS, OPT_PYTHON, OPT_CXX, OPT_TOOLKIT, OPT_NCCL_HOME,
    OPT_NAME, OPT_PACKAGE, OPT_SOURCE, OPT_RPATH, OPT_BUNDLE, OPT_INCLUDE, OPT_DEFINE, OPT_UNDEFINE, OPT_INTO,
    OPT_MAX_GLIBC, OPT_DOCKER, OPT_TOOLKIT_LIB, OPT_WHEEL_DIR, OPT_DIST_NAME, OPT_DIST_VERSION, OPT_PLATFORM_TAG, OPT_JSON
};

static const struct option long_options[] = {
    { "vendor", required_argument, NULL, OPT_VENDOR },
    { "libtorch", required_argument, NULL, OPT_LIBTORCH },
    { "torch-headers", required_argument, NULL, OPT_TORCH_HEADERS },
    { "vendor-libs", required_argument, NULL, OPT_VENDOR_LIBS },
    { "python", required_argument, NULL, OPT_PYTHON },
    { "cxx", required_argument, NULL, OPT_CXX },
    { "toolkit", required_argument, NULL, OPT_TOOLKIT },
    { "nccl-home", required_argument, NULL, OPT_NCCL_HOME },
    { "name", required_argument, NULL, OPT_NAME },
    { "package", required_argument, NULL, OPT_PACKAGE },
    { "source", required_argument, NULL, OPT_SOURCE },
    { "rpath", required_argument, NULL, OPT_RPATH },
    { "bundle", required_argument, NULL, OPT_BUNDLE },
    { "include", required_argument, NULL, OPT_INCLUDE },
    { "define", required_argument, NULL, OPT_DEFINE },
    { "undefine", required_argument, NULL, OPT_UNDEFINE },
    { "into", required_argument, NULL, OPT_INTO },
    { "max-glibc", required_argument, NULL, OPT_MAX_GLIBC },
    { "docker", required_argument, NULL, OPT_DOCKER },
    { "toolkit-lib", required_argument, NULL, OPT_TOOLKIT_LIB },
    { "out", required_argument, NULL, 'o' },
    { "wheel-dir", required_argument, NULL, OPT_WHEEL_DIR },
    { "dist-name", required_argument, NULL, OPT_DIST_NAME },
    { "dist-version", required_argument, NULL, OPT_DIST_VERSION },
    { "platform-tag", required_argument, NULL, OPT_PLATFORM_TAG },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct args {
    struct cf_bridge_opts opts;
    struct strvec rpath, bundle, includes, defines, undefines, toolkit_libs, more_sources;
    const char *out, *wheel_dir, *dist_name, *dist_version, *platform_tag;
    int json;
};

/* A list flag's values as the library's (words, count) pair; the strvec keeps them. */
static void lend(const struct strvec *sv, const char *const **words, size_t *n)
{
    *words = (const char *const *)sv->v;
    *n = sv->n;
}

static void row(const char *label, const char *value, const char *from)
{
    printf("  %-10s %s", label, value ? cli_safe(value) : "(none)");
    if (from && *from)
        printf("  %s[%s]%s", cf_term_color(stdout, CF_DIM), cli_safe(from), cf_term_color(stdout, CF_RESET));
    putchar('\n');
}

static void rowf(const char *label, const char *from, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rowf(const char *label, const char *from, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct strbuf sb = STRBUF_INIT;
    cf_sb_addvf(&sb, fmt, ap);
    va_end(ap);
    row(label, sb.buf, from);
    cf_sb_release(&sb);
}

/* One argv word as a POSIX shell reads it back: bare when safe, else in single quotes. */
static void shell_word(struct strbuf *sb, const char *w)
{
    if (sb->len)
        cf_sb_adds(sb, " ");
    if (*w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == strlen(w)) {
        cf_sb_adds(sb, w);
        return;
    }
    cf_sb_adds(sb, "'");
    for (const char *c = w; *c; c++)
        cf_sb_adds(sb, *c == '\'' ? "'\\''" : (char[]){ *c, 0 });
    cf_sb_adds(sb, "'");
}

static void print_plan(const struct cf_bridge_plan *p)
{
    printf("%sbridge plan%s: vendor %s, module %s.%s\n", cf_term_color(stdout, CF_BOLD),
           cf_term_color(stdout, CF_RESET), cf_vendor_get(p->vendor)->word, cli_safe(p->package),
           cli_safe(p->module_name));
    row("vendor", p->vendor_item.value, p->vendor_item.from);
    if (p->cxx.value)
        rowf("compiler", p->cxx.from, "%s %s, -std=%s, gate %s", p->cxx.value, p->cxx_version ? p->cxx_version : "?",
             p->cxx_std ? p->cxx_std : "c++17", p->cxx_gate ? p->cxx_gate : "?");
    else
        row("compiler", NULL, NULL);
    rowf("python", p->python.from, "%s %s %s %s", p->python.value ? p->python.value : "?",
         p->python_version ? p->python_version : "?", p->python_tag ? p->python_tag : "?",
         p->ext_suffix ? p->ext_suffix : "?");
    if (p->torch_dir.value)
        rowf("headers", p->torch_dir.from, "%s (torch %s, %s, _GLIBCXX_USE_CXX11_ABI=%d)", p->torch_dir.value,
             p->torch_version ? p->torch_version : "?", p->flavour == CF_BRIDGE_HIPIFIED ? "hipified" : "CUDA-named",
             p->cxx11_abi == 0 ? 0 : 1);
    else
        row("headers", NULL, NULL);
    row("vendor lib", p->vendor_libs.value, p->vendor_libs.from);
    row("imports", p->torch_import.value, p->torch_import.from);
    row("toolkit", p->toolkit_root.value, p->toolkit_root.from);
    for (size_t i = 0; i < p->n_includes; i++)
        row(i ? "" : "include", p->includes[i].value, p->includes[i].from);
    row("defines", p->define_set, p->define_set_why);
    for (size_t i = 0; i < p->n_defines; i++)
        row("", p->defines[i].value, p->defines[i].from);
    row("proof", p->proof, NULL);
    for (size_t i = 0; i < sizeof p->headers / sizeof p->headers[0]; i++)
        if (p->headers[i].path)
            rowf("", NULL, "%s -> %s (%s)", p->headers[i].name, p->headers[i].path,
                 p->headers[i].version ? p->headers[i].version : "version ?");
    const struct cf_bridge_header *h = p->headers[0].path ? &p->headers[0] : &p->headers[1];
    rowf("NCCL", NULL, "header %s, library %s, libtorch %s", h->version ? h->version : "?",
         p->nccl_library.value ? p->nccl_library.value : "?", p->nccl_libtorch.value ? p->nccl_libtorch.value : "?");
    row("", p->nccl_library.value ? "library" : NULL, p->nccl_library.from);
    row("", p->nccl_libtorch.value ? "libtorch" : NULL, p->nccl_libtorch.from);
    if (p->abi.options_size > 0 || p->abi.process_group_size > 0)
        rowf("libtorch", NULL, "sizeof ProcessGroupNCCL::Options %ld, ProcessGroupNCCL %ld", p->abi.options_size,
             p->abi.process_group_size);
    else
        row("libtorch", "sizes unknown", p->abi.options_from);
    row("devices", p->device_count.value ? (strcmp(p->device_count.value, "hip") ? "c10::cuda::device_count()"
                                                                                 : "c10::hip::device_count()")
                                         : NULL,
        p->device_count.from);
    for (size_t i = 0; i < p->n_libs; i++)
        rowf(i ? "" : "library", p->libs[i].from, "-l%s -> %s", p->libs[i].name,
             p->libs[i].path ? p->libs[i].path : "NOT FOUND");
    for (size_t i = 0; i < p->n_rpath; i++)
        row(i ? "" : "rpath", p->rpath[i].value, p->rpath[i].from);
    for (size_t i = 0; i < p->n_duplicates; i++)
        rowf(i ? "" : "both have", p->duplicates[i].why, "%s: %s and %s; at import: %s", p->duplicates[i].soname,
             p->duplicates[i].vendor_path, p->duplicates[i].torch_path,
             p->duplicates[i].used ? p->duplicates[i].used : "decided by bridge build");
    for (size_t i = 0; i < p->bundle_libs.n; i++)
        row("bundle", p->bundle_libs.v[i], "--bundle");
    row("source", p->source.value, p->source.from);
    for (size_t i = 0; i < p->more_sources.n; i++)
        row("", p->more_sources.v[i], "--source");
    if (p->output_name)
        rowf("output", p->into ? "--into" : NULL, "%s/%s/%s", p->into ? p->into : "<out>", p->package_dir,
             p->output_name);
    for (size_t i = 0; i < p->n_toolkit_libs; i++)
        row(i ? "" : "host lib", p->toolkit_libs[i].value, p->toolkit_libs[i].from);
    if (p->output && p->source.value && p->guard.value) {
        size_t n;
        struct strvec *v = cf_bridge_plan_commands(p, &n);
        struct strvec mk = STRVEC_INIT;
        struct strbuf mks = STRBUF_INIT;
        cf_bridge_mkdir_argv(p, &mk);
        for (size_t i = 0; i < mk.n; i++)
            shell_word(&mks, mk.v[i]);
        row("mkdir", mks.buf, NULL);
        cf_sb_release(&mks);
        cf_strvec_clear(&mk);
        for (size_t k = 0; k < n; k++) {
            const char *label = k == n - 1 ? "link" : k == n - 2 ? "guard" : "compile";
            struct strbuf sb = STRBUF_INIT;
            for (size_t i = 0; i < v[k].n; i++)
                shell_word(&sb, v[k].v[i]);
            row(label, sb.buf, NULL);
            cf_sb_release(&sb);
        }
        cf_bridge_commands_free(v, n);
    }
    if (p->max_glibc)
        rowf("glibc", "--max-glibc", "at most %d.%d", p->max_glibc / 1000, p->max_glibc % 1000);
    if (p->docker)
        row("docker", p->docker, "--docker: compile and link in the image (not run by plan)");
    for (size_t i = 0; i < p->notes.n; i++)
        row(i ? "" : "note", p->notes.v[i], NULL);
    if (p->problems.n) {
        printf("%sproblems%s (%zu):\n", cf_term_color(stdout, CF_RED), cf_term_color(stdout, CF_RESET), p->problems.n);
        for (size_t i = 0; i < p->problems.n; i++)
            printf("  - %s\n", cli_safe(p->problems.v[i]));
    } else {
        printf("%sok%s: nothing missing\n", cf_term_color(stdout, CF_GREEN), cf_term_color(stdout, CF_RESET));
    }
}

static void print_build(const struct cf_bridge_build_result *r)
{
    printf("built %s (%s, link %.1fs; log %s)\n", cli_safe(r->output),
           r->cache_hit ? "object from the cache" : "compiled", r->link_seconds, cli_safe(r->log_path));
    if (r->installed)
        printf("  placed at %s\n", cli_safe(r->installed));
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
        case OPT_TORCH_HEADERS: a->opts.torch_headers = optarg; break;
        case OPT_VENDOR_LIBS: a->opts.vendor_libs = optarg; break;
        case OPT_PYTHON: a->opts.python = optarg; break;
        case OPT_CXX: a->opts.cxx = optarg; break;
        case OPT_TOOLKIT: a->opts.toolkit_root = optarg; break;
        case OPT_NCCL_HOME: a->opts.nccl_home = optarg; break;
        case OPT_NAME: a->opts.module_name = optarg; break;
        case OPT_PACKAGE: a->opts.package = optarg; break;
        case OPT_SOURCE:
            if (a->opts.source)
                cf_strvec_push(&a->more_sources, optarg);
            else
                a->opts.source = optarg;
            break;
        case OPT_RPATH: cf_strvec_push(&a->rpath, optarg); break;
        case OPT_BUNDLE: cf_strvec_push(&a->bundle, optarg); break;
        case OPT_INCLUDE: cf_strvec_push(&a->includes, optarg); break;
        case OPT_DEFINE: cf_strvec_push(&a->defines, optarg); break;
        case OPT_UNDEFINE: cf_strvec_push(&a->undefines, optarg); break;
        case OPT_INTO: a->opts.into = optarg; break;
        case OPT_MAX_GLIBC: a->opts.max_glibc = optarg; break;
        case OPT_DOCKER: a->opts.docker = optarg; break;
        case OPT_TOOLKIT_LIB: cf_strvec_push(&a->toolkit_libs, optarg); break;
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
    lend(&a->more_sources, &a->opts.more_sources, &a->opts.n_more_sources);
    lend(&a->rpath, &a->opts.rpath, &a->opts.n_rpath);
    lend(&a->defines, &a->opts.defines, &a->opts.n_defines);
    lend(&a->undefines, &a->opts.undefines, &a->opts.n_undefines);
    lend(&a->bundle, &a->opts.bundle_libs, &a->opts.n_bundle_libs);
    lend(&a->includes, &a->opts.extra_includes, &a->opts.n_extra_includes);
    lend(&a->toolkit_libs, &a->opts.toolkit_libs, &a->opts.n_toolkit_libs);
    a->opts.out_dir = a->out;
    return 0;
}

/* Packages the build in -o DIR; then the document of sub with what came
 * before it (plan and build NULL for a wheel of an existing build). */
static int run_wheel(struct args *a, const char *sub, const struct cf_bridge_plan *plan,
                     const struct cf_bridge_build_result *build)
{
    cf_error err = CF_ERROR_INIT;
    struct cf_bridge_wheel_opts wo = { 0 };
    wo.build_dir = a->out ? a->out : "bridge-build";
    wo.wheel_dir = a->wheel_dir ? a->wheel_dir : "dist";
    wo.dist_name = a->dist_name;
    wo.version = a->dist_version;
    wo.platform_tag = a->platform_tag;
    char *path = NULL, *tag = NULL;
    if (cf_bridge_wheel(&wo, &path, &tag, &err) < 0)
        return cli_fail("bridge", &err);
    if (a->json)
        cli_print_json(cf_bridge_json(sub, plan, build, path, tag));
    else
        printf("wheel %s (platform tag %s)\n", cli_safe(path), cli_safe(tag));
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
    /* a wheel of an existing build needs no plan */
    if (!strcmp(sub, "wheel") && has_build(a.out ? a.out : "bridge-build")) {
        rc = run_wheel(&a, sub, NULL, NULL);
        goto done;
    }
    struct cf_bridge_plan plan;
    cf_error err = CF_ERROR_INIT;
    if (cf_bridge_plan_make(&a.opts, &plan, &err) < 0) {
        cf_bridge_plan_release(&plan);
        rc = cli_fail("bridge", &err);
        goto done;
    }
    if (!strcmp(sub, "plan") || plan.problems.n) {
        if (a.json)
            cli_print_json(cf_bridge_json(sub, &plan, NULL, NULL, NULL));
        else
            print_plan(&plan);
        if (strcmp(sub, "plan"))
            cli_error("bridge", "the plan has %zu problem(s); nothing was built", plan.problems.n);
        rc = plan.problems.n ? EXIT_PROBLEMS : EXIT_FINE;
        cf_bridge_plan_release(&plan);
        goto done;
    }
    struct cf_bridge_build_result br;
    if (!a.json && cf_term_is_tty(stderr))
        fprintf(stderr, "compiling %s against %s (this takes a minute or more)...\n", cli_safe(plan.source.value),
                cli_safe(plan.torch_dir.value));
    int brc = cf_bridge_build(&plan, a.out ? a.out : "bridge-build", &br, &err);
    if (brc < 0) {
        if (a.json)
            cli_print_json(cf_bridge_json(sub, &plan, &br, NULL, NULL));
        rc = cli_fail("bridge", &err);
    } else if (!strcmp(sub, "build")) {
        if (a.json)
            cli_print_json(cf_bridge_json(sub, &plan, &br, NULL, NULL));
        else
            print_build(&br);
        rc = EXIT_FINE;
    } else {
        if (!a.json)
            print_build(&br);
        rc = run_wheel(&a, sub, &plan, &br);
    }
    cf_bridge_build_result_release(&br);
    cf_bridge_plan_release(&plan);
done:
    cf_strvec_clear(&a.rpath);
    cf_strvec_clear(&a.more_sources);
    cf_strvec_clear(&a.defines);
    cf_strvec_clear(&a.undefines);
    cf_strvec_clear(&a.bundle);
    cf_strvec_clear(&a.includes);
    cf_strvec_clear(&a.toolkit_libs);
    return rc;
}
