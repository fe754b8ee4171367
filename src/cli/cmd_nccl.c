/* cclforge nccl build | list | activate | remove | env: parse flags, call the
 * library (cclforge/nccl_build.h), print text or JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/arch.h"
#include "cclforge/nccl_build.h"
#include "cclforge/survey.h"
#include "cclforge/clock.h"
#include "cli/term.h"
#include "cli/builtin.h"
#include "cli/cli.h"

#define CMD "nccl"

static const char nccl_usage[] =
    "usage: cclforge nccl <subcommand> [options]\n"
    "\n"
    "Source builds of NCCL (and RCCL) matched to libtorch's version and the rig's\n"
    "GPU archs, verified and installed atomically into a cache.\n"
    "\n"
    "subcommands:\n"
    "  build      build, verify and install one NCCL/RCCL\n"
    "  list       the installed builds\n"
    "  activate   make one build the active one\n"
    "  remove     delete one build\n"
    "  env        LD_PRELOAD, LD_LIBRARY_PATH and NCCL_HOME for a worker\n"
    "\n"
    "options:\n"
    "  -h, --help this text; 'cclforge nccl <subcommand> --help' gives its options\n"
    CLI_HELP_COLOR("  ")
    "\n"
    "The install root is --root, else $CCLFORGE_HOME, else $XDG_CACHE_HOME/cclforge,\n"
    "else $HOME/.cache/cclforge (none of them set: refused); builds live in\n"
    "<root>/nccl/builds/v<X.Y.Z>-<archs>/. A root (or a build) owned by another user\n"
    "or writable by others is refused, as ssh refuses such keys.\n"
    "\n"
    "Exit status: 0 fine, 1 the job failed, 2 usage error.\n"
    "Examples:\n"
    "  cclforge nccl build --archs \"7.5;9.0\" && cclforge nccl list\n"
    "  eval \"$(cclforge nccl env)\"\n";

static const char build_usage[] =
    "usage: cclforge nccl build [options]\n"
    "\n"
    "Builds NCCL (RCCL with --vendor rocm|dtk) from source for exactly the given GPU\n"
    "archs, checks the library (soname, version banner, SASS/PTX or gfx code objects)\n"
    "and installs it atomically under <root>/nccl/builds/. Same inputs: a cache hit.\n"
    "\n"
    "options:\n"
    "  --tag vX.Y.Z-N        NCCL release (default: the active libtorch's NCCL, newest\n"
    "                        -N revision in a git source; a source dir's version.mk)\n"
    "  --archs LIST          \"7.5;9.0\", \"sm_61,sm_120\", \"8.6+PTX\", \"gfx90a;gfx942\"\n"
    "                        (default: this host's GPUs, else TORCH_CUDA_ARCH_LIST /\n"
    "                        PYTORCH_ROCM_ARCH)\n"
    "  --ptx / --no-ptx      also embed PTX for the newest arch (default on)\n"
    "  --source SRC          a directory, a tarball or a git URL (default: upstream\n"
    "                        " CF_NCCL_UPSTREAM_URL " at the tag)\n"
    "  --vendor V            nvidia (default), rocm or dtk (RCCL via CMake)\n"
    "  -j, --jobs N          parallel jobs (default: MAX_JOBS, else the cores)\n"
    "  --only-funcs EXPR     ONLY_FUNCS for NCCL's kernel generator (smaller builds):\n"
    "                        words, '*', '(...)' and '|' only, e.g. \"AllReduce Sum f32 * *\"\n"
    "  --root DIR            install root (default: see 'cclforge nccl --help'); letters,\n"
    "                        digits and / . _ + @ - only (make and sh receive it)\n"
    "  --cuda-home DIR       CUDA toolkit (default: CUDA_HOME, CUDA_PATH, /usr/local/cuda*)\n"
    "  --rocm-path DIR       ROCm or DTK root (default: ROCM_PATH, ROCM_HOME, HIP_PATH,\n"
    "                        /opt/rocm*; DTK_HOME first and /opt/dtk* for --vendor dtk)\n"
    "  --survey FILE         take GPUs and libtorch from a doctor JSON instead of probing\n"
    "  --docker              build in a container (generated Dockerfile, no context sent)\n"
    "  --docker-image IMG    base image for --docker (default nvidia/cuda:<ver>-devel)\n"
    "  --force               rebuild even when the same build is cached\n"
    "  --verify              on a cache hit re-hash every installed file (default: the\n"
    "                        files whose size or stat stamp changed); damage is rebuilt\n"
    "  --no-wait             fail instead of waiting when the same target is being built\n"
    "  --dry-run             print the plan and the exact commands, build nothing\n"
    "  --json                machine-readable result (schema cclforge.nccl-build/1)\n"
    "  -h, --help            this text\n"
    CLI_HELP_COLOR("        ")
    "\n"
    "Exit status: 0 built or cached, 1 the build or its verification failed, 2 usage\n"
    "error (bad tag or arch, an arch the toolkit cannot target, a vendor mismatch, a\n"
    "character make or sh would interpret).\n"
    "Examples:\n"
    "  cclforge nccl build --dry-run\n"
    "  cclforge nccl build --tag v2.28.9-1 --archs \"6.1;12.0\" --cuda-home /usr/local/cuda-12.8\n";

static const char list_usage[] =
    "usage: cclforge nccl list [--root DIR] [--verify] [--json]\n"
    "\n"
    "Lists the installed builds: name, tag, CUDA version, archs, PTX, which is active,\n"
    "and whether the files are what the manifest recorded (STATE ok or DAMAGED).\n"
    "\n"
    "options:\n"
    "  --root DIR    install root (default: see 'cclforge nccl --help')\n"
    "  --verify      re-hash every file (default: those whose size or stat stamp changed)\n"
    "  --json        machine-readable list (schema cclforge.nccl-list/1)\n"
    "  -h, --help    this text\n"
    CLI_HELP_COLOR("  ")
    "\n"
    "Exit status: 0 fine (also when nothing is installed), 1 a build is damaged or the\n"
    "root cannot be read or is not yours, 2 usage error.\n"
    "Example:\n"
    "  cclforge nccl list --json\n";

/* The options of the subcommands that take only a build's name. */
#define NAME_OPTIONS                                                                                                   \
    "options:\n"                                                                                                       \
    "  --root DIR    install root (default: see 'cclforge nccl --help')\n"                                            \
    "  -h, --help    this text\n" CLI_HELP_COLOR("  ") "\n"

static const char activate_usage[] =
    "usage: cclforge nccl activate <build> [--root DIR]\n"
    "\n"
    "Makes <build> (a name from 'cclforge nccl list') the active build: the one\n"
    "'cclforge nccl env' uses by default (<root>/nccl/active links to it).\n"
    "\n"
    NAME_OPTIONS
    "Exit status: 0 fine, 1 no such build, 2 usage error.\n"
    "Example:\n"
    "  cclforge nccl activate v2.28.9-sm75-sm90\n";

static const char remove_usage[] =
    "usage: cclforge nccl remove <build> [--root DIR]\n"
    "\n"
    "Deletes <build> (a name from 'cclforge nccl list'), with or without its manifest;\n"
    "refused while a build of that name is running.\n"
    "\n"
    NAME_OPTIONS
    "Exit status: 0 removed, 1 no such build or it is being built, 2 usage error.\n"
    "Example:\n"
    "  cclforge nccl remove v2.28.9-sm75-sm90\n";

static const char env_usage[] =
    "usage: cclforge nccl env [<build>] [--format shell|yaml|json] [--host-survey FILE] [--root DIR]\n"
    "\n"
    "Prints LD_PRELOAD, LD_LIBRARY_PATH and NCCL_HOME for a worker using <build>\n"
    "(default: the active build). With --host-survey (the worker's `cclforge doctor\n"
    "--json`), checks the build covers that host's GPU archs. A damaged build, or one\n"
    "whose path ld.so would split (a space, ':' or ';'), is refused.\n"
    "\n"
    "options:\n"
    "  --format F          shell (default: export lines), yaml, or json\n"
    "                      (schema cclforge.nccl-env/1)\n"
    "  --json              the same as --format json\n"
    "  --host-survey FILE  a worker's doctor JSON: check its GPU archs are covered\n"
    "  --root DIR          install root (default: see 'cclforge nccl --help')\n"
    "  -h, --help          this text\n"
    CLI_HELP_COLOR("      ")
    "\n"
    "Exit status: 0 fine, 1 no such build, a damaged one, or a host arch not covered,\n"
    "2 usage error.\n"
    "Examples:\n"
    "  eval \"$(cclforge nccl env)\"\n"
    "  cclforge nccl env v2.28.9-sm75-sm90 --format yaml --host-survey worker.json\n";

/* Returns 1 and prints usage when --help is asked for. */
static int want_help(int argc, char **argv, const char *usage)
{
    if (!cli_wants_help(argc, argv))
        return 0;
    fputs(usage, stdout);
    return 1;
}

/* --root, else the default; NULL after printing why there is none (exit 2). */
static char *resolve_root(const char *root, const char *sub)
{
    cf_error err = CF_ERROR_INIT;
    char *r = root ? cf_strdup(root) : cf_nccl_default_root(&err);
    if (!r)
        cli_fail(sub, &err);
    return r;
}

/* ---- build ---- */

struct build_ui {
    struct cf_progress progress;
    int started;
    int quiet; /* --json: progress still goes to stderr, steps do not */
};

static void on_event(void *ctx, const struct cf_nccl_event *ev)
{
    struct build_ui *ui = ctx;
    switch (ev->kind) {
    case CF_NCCL_EV_UNITS:
        if (!ui->started) {
            cf_progress_start(&ui->progress, stderr, ev->total);
            ui->started = 1;
        }
        ui->progress.total = ev->total; /* the estimate grows once the generated kernels are known */
        ui->progress.plain_every = ev->total > 40 ? (int)(ev->total / 20) : 1;
        cf_progress_step(&ui->progress, ev->done, ev->text);
        break;
    case CF_NCCL_EV_STEP:
        if (ui->started) {
            cf_progress_finish(&ui->progress);
            ui->started = 0;
        }
        if (!ui->quiet)
            fprintf(stderr, "%s==>%s %s\n", cf_term_color(stderr, CF_BLUE), cf_term_color(stderr, CF_RESET),
                    cli_safe(ev->text));
        break;
    case CF_NCCL_EV_WAIT:
        fprintf(stderr, "%s\n", cli_safe(ev->text));
        break;
    default:
        break;
    }
}

static void print_plan(const struct cf_nccl_plan *plan)
{
    printf("tag       %s (%s)\n", plan->tag_text, cli_safe(plan->tag_origin));
    struct strbuf archs = STRBUF_INIT;
    cf_arch_list_join(&plan->archs, " ", &archs);
    printf("archs     %s (%s)%s\n", cf_sb_str(&archs), plan->archs_origin, plan->ptx ? " + PTX of the newest" : "");
    cf_sb_release(&archs);
    printf("%s %s\n", plan->vendor->arch_family == CF_ARCH_AMD ? "targets  " : "gencode  ", plan->gencode);
    printf("source    %s\n", cli_safe(plan->source));
    if (plan->cuda_version)
        printf("toolkit   %s (CUDA %s; %s)\n", cli_safe(plan->toolkit_home), cli_safe(plan->cuda_version),
               plan->toolkit_origin);
    else
        printf("toolkit   %s (%s)\n", cli_safe(plan->toolkit_home), plan->toolkit_origin);
    printf("jobs      %d\n", plan->jobs);
    printf("install   %s\n", cli_safe(plan->target_dir));
    printf("log       %s\n", cli_safe(plan->log_path));
    printf("commands:\n");
    struct strvec cmds = STRVEC_INIT;
    cf_nccl_plan_commands(plan, &cmds);
    for (size_t i = 0; i < cmds.n; i++)
        printf("  %s\n", cli_safe(cmds.v[i]));
    cf_strvec_clear(&cmds);
    if (plan->dockerfile)
        printf("Dockerfile (written to a private temporary $DOCKER_DIR, removed afterwards):\n%s\n",
               cli_safe_lines(plan->dockerfile));
}

enum { O_TAG = 256, O_ARCHS, O_PTX, O_NOPTX, O_SOURCE, O_VENDOR, O_ONLY, O_ROOT_B, O_CUDA, O_ROCM, O_SURVEY,
       O_DOCKER, O_IMAGE, O_FORCE, O_VERIFY_B, O_NOWAIT, O_DRY, O_JSON_B };

/* build's flags into *o; 0, or the exit code of a usage error */
static int parse_build_args(int argc, char **argv, struct cf_nccl_build_opts *o, int *dry_run, int *json)
{
    static const struct option longopts[] = {
        { "tag", required_argument, NULL, O_TAG },         { "archs", required_argument, NULL, O_ARCHS },
        { "ptx", no_argument, NULL, O_PTX },               { "no-ptx", no_argument, NULL, O_NOPTX },
        { "source", required_argument, NULL, O_SOURCE },   { "vendor", required_argument, NULL, O_VENDOR },
        { "jobs", required_argument, NULL, 'j' },          { "only-funcs", required_argument, NULL, O_ONLY },
        { "root", required_argument, NULL, O_ROOT_B },     { "cuda-home", required_argument, NULL, O_CUDA },
        { "rocm-path", required_argument, NULL, O_ROCM },  { "survey", required_argument, NULL, O_SURVEY },
        { "docker", no_argument, NULL, O_DOCKER },         { "docker-image", required_argument, NULL, O_IMAGE },
        { "force", no_argument, NULL, O_FORCE },           { "no-wait", no_argument, NULL, O_NOWAIT },
        { "verify", no_argument, NULL, O_VERIFY_B },
        { "dry-run", no_argument, NULL, O_DRY },           { "json", no_argument, NULL, O_JSON_B },
        { NULL, 0, NULL, 0 },
    };
    memset(o, 0, sizeof *o);
    o->ptx = 1;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "j:", longopts, NULL)) != -1) {
        switch (c) {
        case O_TAG: o->tag = optarg; break;
        case O_ARCHS: o->archs = optarg; break;
        case O_PTX: o->ptx = 1; break;
        case O_NOPTX: o->ptx = 0; break;
        case O_SOURCE: o->source = optarg; break;
        case O_VENDOR: o->vendor = optarg; break;
        case 'j': {
            long long n;
            cf_error err = CF_ERROR_INIT;
            if (cli_whole("--jobs", "a number of jobs", optarg, 1, 4096, &n, &err))
                return cli_usage_fail(CMD " build", &err);
            o->jobs = (int)n;
            break;
        }
        case O_ONLY: o->only_funcs = optarg; break;
        case O_ROOT_B: o->root = optarg; break;
        case O_CUDA: o->cuda_home = optarg; break;
        case O_ROCM: o->rocm_path = optarg; break;
        case O_SURVEY: o->survey_file = optarg; break;
        case O_DOCKER: o->docker = 1; break;
        case O_IMAGE: o->docker_image = optarg; break;
        case O_FORCE: o->force = 1; break;
        case O_VERIFY_B: o->verify = 1; break;
        case O_NOWAIT: o->no_wait = 1; break;
        case O_DRY: *dry_run = 1; break;
        case O_JSON_B: *json = 1; break;
        default: return cli_usage(CMD " build", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage(CMD " build", "unexpected argument '%s'", argv[optind]);
    o->use_survey = 1; /* defaults (tag, archs) from this host's or --survey's GPUs and libtorch */
    return 0;
}

/* what a fresh build installed: its banner, soname and GPU code */
static void print_installed(const struct cf_nccl_build_result *r)
{
    printf("installed %s (built in %.1f s)\n", cli_safe(r->target_dir), r->build_seconds);
    printf("  banner  %s\n", cli_safe(r->verify.banner));
    printf("  soname  %s\n", cli_safe(r->verify.soname));
    struct strbuf s = STRBUF_INIT;
    for (size_t i = 0; i < r->verify.sass.n; i++)
        cf_sb_addf(&s, "%s%s", i ? " " : "", r->verify.sass.v[i]);
    for (size_t i = 0; i < r->verify.ptx.n; i++)
        cf_sb_addf(&s, " %s(PTX)", r->verify.ptx.v[i]);
    printf("  code    %s\n", cli_safe(cf_sb_str(&s)));
    cf_sb_release(&s);
    if (r->verify.extra.n) {
        printf("  extra   ");
        for (size_t i = 0; i < r->verify.extra.n; i++)
            printf("%s%s", i ? " " : "", cli_safe(r->verify.extra.v[i]));
        printf(" (not requested; reported, not an error)\n");
    }
}

static int cmd_build(int argc, char **argv)
{
    if (want_help(argc, argv, build_usage))
        return EXIT_FINE;
    double started = cf_now_seconds(); /* the user's wait, survey included */
    struct cf_nccl_build_opts o;
    int dry_run = 0, json = 0;
    int code = parse_build_args(argc, argv, &o, &dry_run, &json);
    if (code)
        return code;

    struct build_ui ui;
    memset(&ui, 0, sizeof ui);
    ui.quiet = json;
    o.on_event = on_event;
    o.event_ctx = &ui;

    cf_error err = CF_ERROR_INIT;
    struct cf_nccl_plan plan;
    if (cf_nccl_plan_make(&o, &plan, &err) < 0)
        return cli_fail(CMD " build", &err);
    for (size_t i = 0; i < plan.warnings.n; i++)
        cli_warn(CMD " build", "%s", plan.warnings.v[i]);
    if (dry_run) {
        if (json)
            cli_print_json(cf_nccl_build_json(&plan, NULL, NULL));
        else
            print_plan(&plan);
        cf_nccl_plan_release(&plan);
        return EXIT_FINE;
    }

    struct cf_nccl_build_result r;
    int rc = cf_nccl_build_run(&plan, &o, &r, &err);
    if (ui.started)
        cf_progress_finish(&ui.progress);
    if (r.damage)
        cli_warn(CMD " build", "the cached %s was damaged (%s): it was rebuilt, not served", plan.target_name,
                 r.damage);
    if (json) {
        cli_print_json(cf_nccl_build_json(&plan, &r, rc < 0 ? cf_error_message(&err) : NULL));
        if (rc < 0)
            code = cli_fail(CMD " build", &err);
    } else if (rc < 0) {
        if (r.log_tail.len)
            fprintf(stderr, "--- last lines of %s ---\n%s\n---\n", r.log_path ? cli_safe(r.log_path) : "the log",
                    cli_safe_lines(cf_sb_str(&r.log_tail)));
        code = cli_fail(CMD " build", &err);
    } else if (r.cache_hit) {
        printf("cached %s (same inputs; --force rebuilds) in %.3f s\n", cli_safe(r.target_dir), cf_now_seconds() - started);
    } else {
        print_installed(&r);
    }
    cf_nccl_build_result_release(&r);
    cf_nccl_plan_release(&plan);
    return code;
}

/* ---- list / activate / remove ---- */

/* Parses "[<name>] [--root DIR] [--json]" style arguments shared by the small subcommands. */
struct small_args {
    const char *root, *name, *format, *host_survey;
    int json, verify;
};

enum { O_ROOT = 256, O_JSON, O_FORMAT, O_HOST, O_VERIFY };

/* Each subcommand accepts only the options its --help lists. */
static const struct option root_opts[] = {
    { "root", required_argument, NULL, O_ROOT },
    { NULL, 0, NULL, 0 },
};
static const struct option list_opts[] = {
    { "root", required_argument, NULL, O_ROOT },
    { "json", no_argument, NULL, O_JSON },
    { "verify", no_argument, NULL, O_VERIFY },
    { NULL, 0, NULL, 0 },
};
static const struct option env_opts[] = {
    { "root", required_argument, NULL, O_ROOT },     { "json", no_argument, NULL, O_JSON },
    { "format", required_argument, NULL, O_FORMAT }, { "host-survey", required_argument, NULL, O_HOST },
    { NULL, 0, NULL, 0 },
};

#define HELP_SHOWN (-1) /* parse_small_args printed --help: exit 0 */

/* --help, else the options: 0, HELP_SHOWN, or the usage error's exit code. */
static int parse_small_args(int argc, char **argv, const char *usage, const char *sub, const struct option *longopts,
                            int want_name, struct small_args *a)
{
    if (want_help(argc, argv, usage))
        return HELP_SHOWN;
    memset(a, 0, sizeof *a);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_ROOT: a->root = optarg; break;
        case O_JSON: a->json = 1; break;
        case O_FORMAT: a->format = optarg; break;
        case O_HOST: a->host_survey = optarg; break;
        case O_VERIFY: a->verify = 1; break;
        default: return cli_usage(sub, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (want_name == 1 && optind >= argc)
        return cli_usage(sub, "name the build (see 'cclforge nccl list')");
    if (want_name && optind < argc)
        a->name = argv[optind++];
    if (optind < argc)
        return cli_usage(sub, "unexpected argument '%s'", argv[optind]);
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    struct small_args a;
    int rc = parse_small_args(argc, argv, list_usage, CMD " list", list_opts, 0, &a);
    if (rc)
        return rc == HELP_SHOWN ? EXIT_FINE : rc;
    char *root = resolve_root(a.root, CMD " list");
    if (!root)
        return EXIT_USAGE;
    struct cf_nccl_install_list l;
    cf_error err = CF_ERROR_INIT;
    if (cf_nccl_store_list(root, a.verify, &l, &err) < 0) {
        free(root);
        return cli_fail(CMD " list", &err);
    }
    if (a.json) {
        cli_print_json(cf_nccl_list_json(root, &l));
    } else if (l.n == 0) {
        printf("no NCCL builds under %s (cclforge nccl build makes one)\n", cli_safe(root));
    } else {
        printf("%-32s %-10s %-8s %-22s %-4s %-6s %s\n", "BUILD", "TAG", "CUDA", "ARCHS", "PTX", "ACTIVE", "STATE");
        for (size_t i = 0; i < l.n; i++)
            printf("%-32s %-10s %-8s %-22s %-4s %-6s %s\n", cli_safe(l.v[i].name), *l.v[i].tag ? cli_safe(l.v[i].tag) : "-",
                   l.v[i].cuda_version ? cli_safe(l.v[i].cuda_version) : "-", *l.v[i].archs ? cli_safe(l.v[i].archs) : "-",
                   l.v[i].ptx ? "yes" : "no", l.v[i].active ? "*" : "", l.v[i].damage ? "DAMAGED" : "ok");
    }
    int code = EXIT_FINE;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].damage) {
            if (!a.json)
                cli_error(CMD " list", "%s is damaged: %s; build it again (the same 'cclforge nccl build' repairs it) "
                                       "or 'cclforge nccl remove %s'",
                          l.v[i].name, l.v[i].damage, l.v[i].name);
            code = EXIT_PROBLEMS;
        }
    cf_nccl_install_list_release(&l);
    free(root);
    return code;
}

/* activate and remove: one build named, one library call, one line said. */
static int name_command(int argc, char **argv, const char *usage, const char *sub,
                        int (*act)(const char *root, const char *name, cf_error *err), const char *done)
{
    struct small_args a;
    int rc = parse_small_args(argc, argv, usage, sub, root_opts, 1, &a);
    if (rc)
        return rc == HELP_SHOWN ? EXIT_FINE : rc;
    char *root = resolve_root(a.root, sub);
    if (!root)
        return EXIT_USAGE;
    cf_error err = CF_ERROR_INIT;
    int code = EXIT_FINE;
    if (act(root, a.name, &err) < 0)
        code = cli_fail(sub, &err);
    else
        printf("%s%s\n", done, cli_safe(a.name));
    free(root);
    return code;
}

static int cmd_activate(int argc, char **argv)
{
    return name_command(argc, argv, activate_usage, CMD " activate", cf_nccl_store_activate, "active NCCL build: ");
}

static int cmd_remove(int argc, char **argv)
{
    return name_command(argc, argv, remove_usage, CMD " remove", cf_nccl_store_remove, "removed ");
}

/* ---- env ---- */

static void yaml_quoted(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

static int cmd_env(int argc, char **argv)
{
    struct small_args a;
    int rc = parse_small_args(argc, argv, env_usage, CMD " env", env_opts, 2, &a);
    if (rc)
        return rc == HELP_SHOWN ? EXIT_FINE : rc;
    const char *format = a.format ? a.format : a.json ? "json" : "shell";
    if (strcmp(format, "shell") && strcmp(format, "yaml") && strcmp(format, "json"))
        return cli_usage(CMD " env", "--format wants shell, yaml or json, not '%s'", format);

    cf_error err = CF_ERROR_INIT;
    struct cf_arch_list host = CF_ARCH_LIST_INIT;
    int have_host = 0;
    if (a.host_survey) {
        struct cf_survey s = CF_SURVEY_INIT;
        if (cf_survey_load(a.host_survey, &s, &err) < 0) {
            cf_survey_release(&s); /* a rejected file may have filled part of s */
            return cli_fail(CMD " env", &err);
        }
        struct strvec archs = STRVEC_INIT;
        cf_survey_gpu_archs(&s, 0, &archs);
        for (size_t i = 0; i < archs.n; i++) {
            struct cf_arch one;
            if (cf_arch_parse(archs.v[i], &one, NULL) == 0)
                cf_arch_list_add(&host, &one);
            else
                cli_warn(CMD " env", "%s: GPU arch '%s' is not known to cclforge; not checked", a.host_survey,
                         archs.v[i]);
        }
        cf_strvec_clear(&archs);
        cf_survey_release(&s);
        have_host = 1;
        if (host.n == 0)
            cli_warn(CMD " env", "%s lists no GPUs: coverage not checked", a.host_survey);
    }
    char *root = resolve_root(a.root, CMD " env");
    struct cf_nccl_env e;
    int code = EXIT_FINE;
    if (!root) {
        code = EXIT_USAGE;
        goto out;
    }
    if (cf_nccl_env_make(root, a.name, have_host ? &host : NULL, &e, &err) < 0) {
        code = cli_fail(CMD " env", &err);
        goto out;
    }
    if (!strcmp(format, "json")) {
        cli_print_json(cf_nccl_env_json(&e));
    } else if (!strcmp(format, "yaml")) {
        printf("NCCL_HOME: ");
        yaml_quoted(e.nccl_home);
        printf("\nLD_LIBRARY_PATH: ");
        yaml_quoted(e.ld_library_path);
        printf("\nLD_PRELOAD: ");
        yaml_quoted(e.ld_preload);
        putchar('\n');
    } else {
        struct strbuf q = STRBUF_INIT;
        cf_shell_quote(e.nccl_home, &q);
        printf("export NCCL_HOME=%s\n", cf_sb_str(&q));
        cf_sb_reset(&q);
        cf_shell_quote(e.ld_library_path, &q);
        printf("export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n", cf_sb_str(&q));
        cf_sb_reset(&q);
        cf_shell_quote(e.ld_preload, &q);
        printf("export LD_PRELOAD=%s${LD_PRELOAD:+:$LD_PRELOAD}\n", cf_sb_str(&q));
        cf_sb_release(&q);
        /* a variable that reaches rank 0 but not the others is a classic failure: the
         * launchers' forms, as comments so that eval still takes the output */
        printf("# every rank: mpirun -x NCCL_HOME -x LD_LIBRARY_PATH -x LD_PRELOAD ...\n");
        printf("# every rank: srun --export=ALL,NCCL_HOME,LD_LIBRARY_PATH,LD_PRELOAD ...\n");
    }
    for (size_t i = 0; i < e.jit_only.n; i++)
        cli_warn(CMD " env", "%s has no machine code for %s: it runs through PTX JIT (slow first start)", e.build.name,
                 e.jit_only.v[i]);
    if (e.uncovered.n) {
        struct strbuf s = STRBUF_INIT;
        for (size_t i = 0; i < e.uncovered.n; i++)
            cf_sb_addf(&s, "%s%s", i ? ", " : "", e.uncovered.v[i]);
        cli_error(CMD " env",
                  "%s does not cover the host's %s (no SASS, no usable PTX): build one with --archs including them",
                  e.build.name, cf_sb_str(&s));
        cf_sb_release(&s);
        code = EXIT_PROBLEMS;
    }
    cf_nccl_env_release(&e);
out:
    cf_arch_list_release(&host);
    free(root);
    return code;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} subcommands[] = {
    { "build", cmd_build }, { "list", cmd_list }, { "activate", cmd_activate },
    { "remove", cmd_remove }, { "env", cmd_env },
};

int cmd_nccl(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(nccl_usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_FINE;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        if (!strcmp(argv[1], subcommands[i].name))
            return subcommands[i].fn(argc - 1, argv + 1);
    return cli_usage(CMD, "'%s' is not an nccl subcommand (build, list, activate, remove, env)", argv[1]);
}
