/* cclforge wheel verify: integrity, relocatability, install and import of any
 * wheel with native code. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"
#include "cli/term.h"
#include "cclforge/wheel.h"
#include "cli/builtin.h"
#include "cli/cli.h"

static const char usage_text[] =
    "usage: cclforge wheel verify WHEEL [--install] [--smoke N] [options] [--json]\n"
    "       cclforge wheel graft WHEEL FILE... --at PKG/PATH [graft options] [--json]\n"
    "\n"
    "graft: a new wheel with FILE... added at PKG/PATH (a built extension into a\n"
    "plugin's own wheel): members kept byte for byte, WHEEL's Tag and Root-Is-Purelib\n"
    "updated for native code, .dist-info/cclforge.json naming the extension and the\n"
    "site-packages dirs its RPATH reaches, RECORD rewritten; reproducible. A control\n"
    "character in --at, --bundle-at or a FILE's name is a usage error.\n"
    "  --at PKG/PATH      where in the wheel FILE... go (required)\n"
    "  --bundle FILE      a library to add at --bundle-at (repeatable)\n"
    "  --bundle-at DIR    where --bundle files go (default PKG/PATH/lib)\n"
    "  --external DIR     a site-packages dir the files rely on (repeatable)\n"
    "  --platform-tag T   override the computed platform tag\n"
    "  -o, --out DIR      where the new wheel goes (default: beside WHEEL)\n"
    "\n"
    "Checks a wheel with native code (any, not only cclforge's), reading it once,\n"
    "streaming, in bounded memory:\n"
    "  file, name  a regular file named name-version[-build]-python-abi-platform.whl\n"
    "  zip      a sound archive: central directory and local headers agree, no duplicate\n"
    "           or overlapping members, no absolute or '..' names, no two names that are\n"
    "           one file once installed ('./a', 'a//b', 'a/./b', case or NFC/NFD twins),\n"
    "           no symlink that leaves the wheel (followed through the other links), every\n"
    "           CRC and size right, at most --max-size bytes uncompressed\n"
    "  record   every file's digest and size match RECORD, and every file is listed\n"
    "  wheel-metadata  one .dist-info; WHEEL's Tag lines are exactly the file name's tags\n"
    "  pth      lists the .pth files it installs into site-packages (they run at every\n"
    "           interpreter start): a finding, never a failure\n"
    "  extension  ELF members export PyInit_<module>, or are shared libraries (a\n"
    "           library-only wheel); each of the tag's architecture\n"
    "  rpath    every RPATH/RUNPATH entry is $ORIGIN-relative, not empty (an empty entry\n"
    "           is the current directory), and lands in the wheel or on a declared external\n"
    "  needed   every NEEDED resolves, as glibc's loader would after pip install (RPATH\n"
    "           inheritance included), in the wheel or on a declared external, or is a\n"
    "           system library of the manylinux policy\n"
    "  glibc    no GLIBC_ symbol version above the platform tag's ceiling\n"
    "  policy   GLIBCXX_, CXXABI_, GCC_ versions and system libraries within the tag's\n"
    "           manylinux policy (auditwheel's table); names the symbol and the tag it needs\n"
    "\n"
    "options:\n"
    "  --install          make a fresh venv (python -m venv), pip install --no-index --no-deps,\n"
    "                     import every extension module, each in its own interpreter, from\n"
    "                     the installed location (its __file__ must be inside the venv). A\n"
    "                     module that does not import fails, saying why (the bridge lost, no\n"
    "                     PyInit_<name>, a module the wheel does not carry and whether\n"
    "                     Requires-Dist declares it: give --site DIR with it). For a bridge\n"
    "                     (named by the cclforge.json marker, or defining make_nccl_backend)\n"
    "                     also call make_nccl_backend with one rank (without a GPU it must\n"
    "                     raise). This runs the wheel's code with your rights; what it starts\n"
    "                     is killed when each step ends, and the result comes on a private\n"
    "                     channel, not the wheel's stdout\n"
    "  --smoke N          after the install, N ranks register the bridge as a torch.distributed\n"
    "                     backend (Backend.register_backend, make_nccl_backend the creator),\n"
    "                     init_process_group through it, then run, each a check checked exactly:\n"
    "                       smoke backend, smoke all_reduce, smoke broadcast, smoke all_gather,\n"
    "                       smoke reduce_scatter, smoke send_recv (n/a: 1 rank), smoke barrier,\n"
    "                       smoke async (ops in flight, waited out of order), smoke subgroup\n"
    "                       (new_group of the even ranks), smoke device_mesh (2 x N/2\n"
    "                       replicate x shard; n/a below 4 ranks or odd N), smoke ddp (one\n"
    "                       DDP step), smoke fsdp2 (one fully_shard step; n/a: torch lacks it)\n"
    "                     n/a (not applicable, with why) is never a pass. Fails with fewer than\n"
    "                     N GPUs (nccl), or when no bridge module imported: nothing ran.\n"
    "                     Implies --install\n"
    "  --backend B        the creator of --smoke's backend: nccl (the bridge's ProcessGroupNCCL,\n"
    "                     default) or gloo (torch's ProcessGroupGloo on CPU, after importing\n"
    "                     the installed bridge: the registry, every item and the install run\n"
    "                     for real; the bridge's own collectives only with nccl on GPUs)\n"
    "  --python PY        interpreter for the venv (default python3)\n"
    "  --site DIR         link DIR's packages (e.g. a torch install) into the venv's\n"
    "                     site-packages; NEEDED libraries on declared externals are looked up\n"
    "                     there too (repeatable)\n"
    "  --system-site-packages   let the venv see the interpreter's own packages (a venv's\n"
    "                           python: that venv's site-packages, asked of it)\n"
    "  --external DIR     declare a site-packages-relative directory outside the wheel that\n"
    "                     RPATH entries may point at; NEEDED libraries are looked up there\n"
    "                     under each --site DIR (repeatable; a cclforge wheel declares its own\n"
    "                     in .dist-info/cclforge.json)\n"
    "  --max-size SIZE    the most the members may hold uncompressed (default 4G; K, M, G, T)\n"
    "  --work-dir DIR     put the venv there and keep it (default: a temporary dir, removed;\n"
    "                     with --install)\n"
    "  --keep             keep the temporary venv (with --install)\n"
    "  --timeout SECONDS  limit for each install step, and for the whole --smoke run (default 600)\n"
    "  --json             machine-readable output (schema cclforge.wheel-verify/1,\n"
    "                     cclforge.wheel-graft/1)\n"
    "  -h, --help         this text\n"
    CLI_HELP_COLOR("     ")
    "\n"
    "Exit status: 0 the wheel passed, 1 a check failed (a missing or unreadable wheel\n"
    "included; a check asked for that could not run is a failed one), 2 usage error.\n"
    "Environment: CCLFORGE_WHEEL_JOBS=N (1-16) threads that read the members (default:\n"
    "one per online CPU, 16 at most); the report is the same whatever N.\n"
    "CCLFORGE_INFLATE=isal|zlib the inflate engine (default auto: ISA-L's igzip where\n"
    "this build has it and it loads, else zlib); the report is the same, but for the\n"
    "\"inflate\" field of --json.\n"
    "Examples:\n"
    "  cclforge wheel verify dist/cclforge_nccl_bridge-0.1.0-*.whl\n"
    "  cclforge wheel verify --install --site ~/venv/lib/python3.11/site-packages --json dist/X.whl\n"
    "  cclforge wheel verify --smoke 4 --backend gloo --site ~/venv/lib/python3.11/site-packages dist/X.whl\n"
    "  cclforge wheel graft dist/torch_fl-0.3.0-py3-none-any.whl bridge-build/torch_fl/comm/_nccl_ext/*.so \\\n"
    "      --at torch_fl/comm/_nccl_ext -o dist/grafted\n";

enum { OPT_AT = 200, OPT_BUNDLE, OPT_BUNDLE_AT, OPT_PLATFORM_TAG };
enum {
    OPT_INSTALL = 256,
    OPT_SMOKE,
    OPT_BACKEND,
    OPT_PYTHON,
    OPT_SITE,
    OPT_SYSTEM_SITE,
    OPT_EXTERNAL,
    OPT_MAX_SIZE,
    OPT_WORK_DIR,
    OPT_KEEP,
    OPT_TIMEOUT,
    OPT_JSON
};

static const struct option long_options[] = {
    { "install", no_argument, NULL, OPT_INSTALL },
    { "smoke", required_argument, NULL, OPT_SMOKE },
    { "backend", required_argument, NULL, OPT_BACKEND },
    { "python", required_argument, NULL, OPT_PYTHON },
    { "site", required_argument, NULL, OPT_SITE },
    { "system-site-packages", no_argument, NULL, OPT_SYSTEM_SITE },
    { "external", required_argument, NULL, OPT_EXTERNAL },
    { "max-size", required_argument, NULL, OPT_MAX_SIZE },
    { "work-dir", required_argument, NULL, OPT_WORK_DIR },
    { "keep", no_argument, NULL, OPT_KEEP },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

/* Text that came from the wheel (member names, RECORD paths) never reaches
 * the terminal raw: control bytes show as '?'. */
static const char *status_word(int ok)
{
    return ok > 0 ? "ok" : ok == 0 ? "FAIL" : ok == CF_WHEEL_NA ? "n/a" : "skip";
}

static void print_result(const struct cf_wheel_verify_result *r)
{
    printf("%s%s%s\n", cf_term_color(stdout, CF_BOLD), cli_safe(r->wheel), cf_term_color(stdout, CF_RESET));
    if (r->dist)
        printf("  %s %s, tags %s-%s-%s\n", cli_safe(r->dist), cli_safe(r->version), cli_safe(r->python_tag),
               cli_safe(r->abi_tag), cli_safe(r->platform_tag));
    for (size_t i = 0; i < r->n_checks; i++) {
        const struct cf_wheel_check *c = &r->checks[i];
        enum cf_color col = c->ok > 0 ? CF_GREEN : c->ok == 0 ? CF_RED : CF_YELLOW;
        printf("  %s%-4s%s %-20s %s\n", cf_term_color(stdout, col), status_word(c->ok), cf_term_color(stdout, CF_RESET),
               cli_safe(c->name), cli_safe(c->detail));
    }
    for (size_t i = 0; i < r->smoke_lines.n; i++)
        printf("  %s\n", cli_safe(r->smoke_lines.v[i]));
    if (r->failed)
        printf("%s%d check(s) failed%s\n", cf_term_color(stdout, CF_RED), r->failed, cf_term_color(stdout, CF_RESET));
    else
        printf("%sthe wheel passed%s\n", cf_term_color(stdout, CF_GREEN), cf_term_color(stdout, CF_RESET));
}

/* A usage error: with --json anywhere on the line, also one JSON document on stdout. */
static int usage_error(int json, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(int json, const char *fmt, ...)
{
    struct strbuf msg = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    cf_sb_addvf(&msg, fmt, ap);
    va_end(ap);
    if (json)
        cli_print_json(cf_wheel_verify_usage_json(msg.buf));
    int rc = cli_usage("wheel verify", "%s", msg.buf);
    cf_sb_release(&msg);
    return rc;
}

/* usage_error of a flag's value that cli_whole and its kin refused */
static int usage_error_of(int json, cf_error *err)
{
    int rc = usage_error(json, "%s", cf_error_message(err));
    cf_error_clear(err);
    return rc;
}

static const struct option graft_options[] = {
    { "at", required_argument, NULL, OPT_AT },
    { "bundle", required_argument, NULL, OPT_BUNDLE },
    { "bundle-at", required_argument, NULL, OPT_BUNDLE_AT },
    { "external", required_argument, NULL, OPT_EXTERNAL },
    { "platform-tag", required_argument, NULL, OPT_PLATFORM_TAG },
    { "out", required_argument, NULL, 'o' },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

static int cmd_wheel_graft(int argc, char **argv)
{
    struct cf_wheel_graft_opts o = { 0 };
    struct strvec bundle = STRVEC_INIT, externals = STRVEC_INIT;
    int json = 0, c, rc;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", graft_options, NULL)) != -1) {
        switch (c) {
        case OPT_AT: o.at = optarg; break;
        case OPT_BUNDLE: cf_strvec_push(&bundle, optarg); break;
        case OPT_BUNDLE_AT: o.bundle_at = optarg; break;
        case OPT_EXTERNAL: cf_strvec_push(&externals, optarg); break;
        case OPT_PLATFORM_TAG: o.platform_tag = optarg; break;
        case 'o': o.out_dir = optarg; break;
        case OPT_JSON: json = 1; break;
        default:
            rc = cli_usage("wheel graft", "unknown or incomplete option '%s'", argv[optind - 1]);
            goto done;
        }
    }
    if (argc - optind < 2) {
        rc = cli_usage("wheel graft", "give the WHEEL and at least one FILE");
        goto done;
    }
    if (!o.at) {
        rc = cli_usage("wheel graft", "--at PKG/PATH is required: where in the wheel the files go");
        goto done;
    }
    o.wheel = argv[optind];
    o.files = (const char *const *)argv + optind + 1;
    o.n_files = (size_t)(argc - optind - 1);
    o.bundle = (const char *const *)bundle.v;
    o.n_bundle = bundle.n;
    o.externals = (const char *const *)externals.v;
    o.n_externals = externals.n;
    struct cf_wheel_graft_result r;
    cf_error err = CF_ERROR_INIT;
    if (cf_wheel_graft(&o, &r, &err) < 0) {
        cf_wheel_graft_result_release(&r);
        rc = cli_fail("wheel", &err);
        goto done;
    }
    if (json) {
        cli_print_json(cf_wheel_graft_json(&r));
    } else {
        /* names come from the wheel and the command line: never raw to the terminal */
        printf("wheel %s (tag %s)\n", cli_safe(r.wheel), cli_safe(r.tag));
        for (size_t i = 0; i < r.added.n; i++)
            printf("  added    %s\n", cli_safe(r.added.v[i]));
        for (size_t i = 0; i < r.replaced.n; i++)
            printf("  replaced %s\n", cli_safe(r.replaced.v[i]));
        for (size_t i = 0; i < r.dropped.n; i++)
            printf("  dropped  %s (a signature over the old RECORD)\n", cli_safe(r.dropped.v[i]));
        if (r.module)
            printf("  module   %s\n", cli_safe(r.module));
    }
    cf_wheel_graft_result_release(&r);
    rc = EXIT_FINE;
done:
    cf_strvec_clear(&bundle);
    cf_strvec_clear(&externals);
    return rc;
}

int cmd_wheel(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_FINE;
    }
    if (strcmp(argv[1], "verify") && strcmp(argv[1], "graft"))
        return cli_usage("wheel", "unknown subcommand '%s' (verify or graft)", argv[1]);
    if (cli_wants_help(argc - 1, argv + 1)) {
        fputs(usage_text, stdout);
        return EXIT_FINE;
    }
    if (!strcmp(argv[1], "graft"))
        return cmd_wheel_graft(argc - 1, argv + 1);
    struct cf_wheel_verify_opts o = { 0 };
    struct strvec sites = STRVEC_INIT, externals = STRVEC_INIT;
    int json = 0, c, rc = EXIT_FINE;
    cf_error err = CF_ERROR_INIT;
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        json |= !strcmp(argv[i], "--json");
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc - 1, argv + 1, "h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_INSTALL: o.install = 1; break;
        case OPT_SMOKE: {
            long long n;
            if (cli_whole("--smoke", "a rank count", optarg, 1, 1024, &n, &err)) {
                rc = usage_error_of(json, &err);
                goto done;
            }
            o.smoke_ranks = (int)n;
            o.install = 1;
            break;
        }
        case OPT_BACKEND:
            if (strcmp(optarg, "nccl") && strcmp(optarg, "gloo")) {
                rc = usage_error(json, "--backend is nccl or gloo, not '%s'", optarg);
                goto done;
            }
            o.smoke_backend = optarg;
            break;
        case OPT_PYTHON: o.python = optarg; break;
        case OPT_SITE: cf_strvec_push(&sites, optarg); break;
        case OPT_SYSTEM_SITE: o.system_site_packages = 1; break;
        case OPT_EXTERNAL: cf_strvec_push(&externals, optarg); break;
        case OPT_MAX_SIZE:
            /* up to a petabyte: past any wheel, and short to say */
            if (cli_size("--max-size", optarg, 1, 1ull << 50, &o.max_size, &err)) {
                rc = usage_error_of(json, &err);
                goto done;
            }
            break;
        case OPT_TIMEOUT:
            if (cli_decimal("--timeout", "a number of seconds", optarg, 0.1, 86400, &o.timeout_s, &err)) {
                rc = usage_error_of(json, &err);
                goto done;
            }
            break;
        case OPT_WORK_DIR: o.work_dir = optarg; break;
        case OPT_KEEP: o.keep = 1; break;
        case OPT_JSON: json = 1; break;
        default:
            rc = usage_error(json, "unknown or incomplete option '%s'", argv[optind]);
            goto done;
        }
    }
    if (optind + 1 != argc - 1) {
        rc = usage_error(json, "give exactly one WHEEL");
        goto done;
    }
    /* an option that only shapes a run nobody asked for would be ignored in silence */
    if (o.smoke_backend && !o.smoke_ranks) {
        rc = usage_error(json, "--backend %s picks the backend of the --smoke run: give --smoke N too",
                         o.smoke_backend);
        goto done;
    }
    if ((o.keep || o.work_dir) && !o.install) {
        rc = usage_error(json, "%s keeps the venv of --install: give --install (or --smoke N) too",
                         o.keep ? "--keep" : "--work-dir");
        goto done;
    }
    o.wheel = argv[optind + 1];
    o.site_dirs = (const char *const *)sites.v;
    o.n_site_dirs = sites.n;
    o.externals = (const char *const *)externals.v;
    o.n_externals = externals.n;
    struct cf_wheel_verify_result r;
    if (cf_wheel_verify(&o, &r, &err) < 0) {
        /* the verifier could not work at all: still one JSON document */
        if (json)
            cli_print_json(cf_wheel_verify_json(&r, cf_error_message(&err)));
        cf_wheel_verify_result_release(&r);
        rc = cli_fail("wheel", &err);
        goto done;
    }
    if (json)
        cli_print_json(cf_wheel_verify_json(&r, NULL));
    else
        print_result(&r);
    rc = r.failed ? EXIT_PROBLEMS : EXIT_FINE;
    cf_wheel_verify_result_release(&r);
done:
    cf_strvec_clear(&sites);
    cf_strvec_clear(&externals);
    return rc;
}
