/* cclforge doctor: survey this machine and say what is wrong; doctor compare: the
 * same across hosts. Parsing and printing only: the work is cf_survey_run,
 * cf_doctor_diagnose and cf_doctor_compare. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/doctor_doc.h"
#include "cclforge/hostlist.h"
#include "cclforge/fr_env.h"
#include "cclforge/fs.h"
#include "cclforge/gather.h"
#include "cclforge/numparse.h"
#include "cclforge/survey.h"
#include "cli/doctor_hosts.h"
#include "cli/term.h"
#include "cli/builtin.h"
#include "cli/cli.h"

static const char doctor_usage[] =
    "usage: cclforge doctor [--json] [--libtorch DIR] [--survey FILE.json] [--save FILE.json]\n"
    "                       [--sysfs-root DIR] [--python PY | --no-python] [--no-nvidia] [--quick]\n"
    "                       [--no-cache] [--report FILE.html [--topo-file NCCL.xml]]\n"
    "       cclforge doctor --gather [--timeout S] [--verbose] [--json] [--report FILE.html]\n"
    "                       [options above]\n"
    "       cclforge doctor compare [--json] [--verbose] A.json B.json [...]\n"
    "\n"
    "Surveys this machine for collective communication: vendor toolkits (CUDA, ROCm,\n"
    "DTK), GPUs and their archs, libtorch and the NCCL/RCCL it uses, compilers, NCCL's\n"
    "effective configuration (environment, NCCL_CONF_FILE or ~/.nccl.conf, /etc/nccl.conf)\n"
    "and the host's fabric (interfaces, HCAs, PCIe topology, limits, NVML). Then lists\n"
    "findings with a severity and a remedy.\n"
    "\n"
    "options:\n"
    "  --json             machine-readable report (schema cclforge.doctor/1, docs/schemas/doctor.md);\n"
    "                     it is also a complete survey for --survey and for compare\n"
    "  --libtorch DIR     a libtorch root, its lib/, a torch package dir or a variants root (.active)\n"
    "                     (default: LIBTORCH, then the Python's torch)\n"
    "  --survey FILE      inject a survey: sections present in FILE replace probing (default:\n"
    "                     $CCLFORGE_SURVEY); e.g. {\"gpus\": [{\"arch\": \"sm_61\"}]} plans for a Pascal host\n"
    "  --save FILE        also write the survey to FILE (schema cclforge.survey/1)\n"
    "  --sysfs-root DIR   read the KFD topology under DIR/sys instead of /sys\n"
    "  --python PY        interpreter used to locate torch (default python3)\n"
    "  --no-python        do not run Python to locate torch\n"
    "  --no-nvidia        do not load libcuda.so.1 or NVML, or run nvidia-smi\n"
    "  --no-cache         ask Python and the compilers again and scan every library again\n"
    "                     (answers are kept under the cache root while their files are unchanged)\n"
    "  --quick            seconds, for a Slurm prolog: no Python, libtorch or compilers; text is\n"
    "                     silent when nothing is wrong, else one reason line first\n"
    "  --gather           one process per rank under srun, mpirun or torchrun: each host's local\n"
    "                     rank 0 surveys it, rank 0 prints one report for all hosts (silent when\n"
    "                     all is well) and every rank exits 0 or 1 alike\n"
    "  --timeout S        with --gather: how long rank 0 waits for the others (default 60)\n"
    "  -v, --verbose      with --gather or compare: print the report even when all is well\n"
    "  --report FILE      also write a self-contained HTML report (no network, no script needed):\n"
    "                     this host's topology drawn (NUMA nodes, root complexes, PCIe switches,\n"
    "                     GPUs, NICs, NVLink) with nvidia-smi topo -m's link classes; with --gather\n"
    "                     (rank 0) the hosts side by side, hosts alike collapsed, each value that\n"
    "                     differs marked with its hosts, findings by severity (docs/doctor.md)\n"
    "  --topo-file FILE   with --report: draw NCCL's topology XML instead of sysfs (default:\n"
    "                     NCCL_TOPO_FILE, else NCCL_TOPO_DUMP_FILE when that file exists)\n"
    "  -h, --help         this text\n"
    CLI_HELP_COLOR("     ")
    "\n"
    "compare reads the --json reports of several hosts and reports what stops their ranks\n"
    "from talking (NCCL version codes, NCCL vs RCCL, torch versions) and the GPU archs a\n"
    "host's library lacks (see 'cclforge doctor compare --help').\n"
    "\n"
    "Exit status: 0 no error-severity finding, 1 an error finding, 2 usage error (also an\n"
    "unreadable --survey or --libtorch).\n"
    "Examples:\n"
    "  cclforge doctor\n"
    "  cclforge doctor --json --libtorch /opt/libtorch > $(hostname).json\n"
    "  srun -N 8 --ntasks-per-node=1 cclforge doctor --gather --quick\n"
    "  mpirun -x MASTER_ADDR=node1 -H node1,node2 cclforge doctor --gather\n";

static const char compare_usage[] =
    "usage: cclforge doctor compare [--json] [--verbose] A.json B.json [...]\n"
    "\n"
    "Reads the 'cclforge doctor --json' reports of two or more hosts and reports what\n"
    "stops their ranks from talking: NCCL version codes that differ, NCCL next to RCCL,\n"
    "different torch versions, and GPU archs a host's library has no code for; then\n"
    "every other fact that differs (NCCL path and archs, driver, CUDA/HIP runtime,\n"
    "toolkit, C++11 ABI, glibc, each NCCL variable, the net plugin, IB ports, GPUs,\n"
    "kernel, limits) with the hosts on each side, each with the severity it is\n"
    "counted at. Text is silent when all is well. Each report must be a whole\n"
    "'doctor --json' (host, toolkits, gpus, driver, libtorch, comm_libraries, its\n"
    "findings and their summary) or a survey --save wrote: a hand-written --survey\n"
    "subset describes no host, and a value no report holds is refused, its field named.\n"
    "\n"
    "options:\n"
    "  --json             machine-readable result (schema cclforge.doctor-compare/1)\n"
    "  -v, --verbose      print the report even when all is well\n"
    "  -h, --help         this text\n"
    CLI_HELP_COLOR("     ")
    "\n"
    "Exit status: 0 no error-severity finding, 1 an error finding, 2 usage error (fewer\n"
    "than two reports, or one that cannot be read, is not a host's survey or is refused).\n"
    "Example:\n"
    "  cclforge doctor compare node1.json node2.json\n";

/* ---- text report ---- */

static const char *or_dash(const char *s)
{
    return s && *s ? cli_safe(s) : "-";
}

static void print_heading(const char *title)
{
    printf("\n%s%s%s\n", cf_term_color(stdout, CF_BOLD), title, cf_term_color(stdout, CF_RESET));
}

static void print_archs(const char *indent, const struct strvec *archs, int known)
{
    if (!known) {
        printf("%sGPU code: not read\n", indent);
        return;
    }
    if (!archs->n) {
        printf("%sGPU code: none\n", indent);
        return;
    }
    printf("%sGPU code:", indent);
    for (size_t i = 0; i < archs->n; i++)
        printf(" %s", cli_safe(archs->v[i]));
    printf("\n");
}

static void print_comm(const char *indent, const char *label, const struct cf_comm_lib *c)
{
    printf("%s%s%s %s  %s  %s\n", indent, label, cf_comm_lib_profile(c)->display,
           or_dash(c->version), or_dash(c->how), or_dash(c->path));
    char deeper[64];
    snprintf(deeper, sizeof deeper, "%s%*s    ", indent, (int)strlen(label), "");
    if (c->banner)
        printf("%sbanner: %s\n", deeper, cli_safe(c->banner));
    if (c->header)
        printf("%sheader: %s\n", deeper, cli_safe(c->header));
    if (c->path)
        print_archs(deeper, &c->archs, c->archs_known);
}

static void print_toolkits(const struct cf_survey *s)
{
    print_heading("Toolkits");
    if (!s->n_toolkits)
        printf("  none found (CUDA_HOME, CUDA_PATH, ROCM_PATH, HIP_PATH, nvcc/hipcc on PATH, /usr/local/cuda, /opt/rocm, "
               "/opt/dtk)\n");
    for (size_t i = 0; i < s->n_toolkits; i++) {
        const struct cf_toolkit *t = &s->toolkits[i];
        printf("  %-5s %-10s %s\n", or_dash(t->vendor), or_dash(t->version), or_dash(t->root));
        printf("        found by %s; version from %s\n", or_dash(t->found_by), or_dash(t->version_source));
        if (t->compiler)
            printf("        compiler %s\n", cli_safe(t->compiler));
        for (size_t k = 0; k < t->include_dirs.n; k++)
            printf("        include %s\n", cli_safe(t->include_dirs.v[k]));
        if (t->comm)
            print_comm("        ", "", t->comm);
    }
}

static void print_gpus(const struct cf_survey *s)
{
    print_heading("GPUs");
    if (!s->n_gpus)
        printf("  none\n");
    else
        printf("  %-3s %-7s %-8s %-5s %10s  %-8s %s\n", "#", "vendor", "arch", "cc", "memory", "visible", "name");
    for (size_t i = 0; i < s->n_gpus; i++) {
        const struct cf_gpu *g = &s->gpus[i];
        char cc[16] = "-", mem[32] = "-", vis[16] = "no";
        if (g->cc_major)
            snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
        if (g->memory_bytes)
            snprintf(mem, sizeof mem, "%.1f GiB", (double)g->memory_bytes / (1024.0 * 1024 * 1024));
        if (g->visible)
            snprintf(vis, sizeof vis, "yes (%d)", g->visible_index);
        printf("  %-3d %-7s %-8s %-5s %10s  %-8s %s\n", g->index, or_dash(g->vendor), or_dash(g->arch), cc, mem, vis,
               or_dash(g->name));
    }
    for (size_t i = 0; i < s->n_probes; i++) {
        const struct cf_gpu_probe *p = &s->probes[i];
        printf("  probe %s/%s: %s%s%s\n", or_dash(p->vendor), or_dash(p->method), p->ok ? "ok" : "unavailable",
               p->note ? ": " : "", cli_safe(p->note));
    }
    if (s->driver.cuda_driver_version || s->driver.nvidia_version)
        printf("  NVIDIA driver %s, CUDA %d.%d\n", or_dash(s->driver.nvidia_version),
               s->driver.cuda_driver_version / 1000, (s->driver.cuda_driver_version % 1000) / 10);
    if (s->driver.amd_version)
        printf("  amdgpu driver %s\n", cli_safe(s->driver.amd_version));
}

static void print_torches(const struct cf_survey *s)
{
    print_heading("libtorch");
    if (!s->n_torches)
        printf("  none found (--libtorch, LIBTORCH, Python's torch package)\n");
    for (size_t i = 0; i < s->n_torches; i++) {
        const struct cf_libtorch *t = &s->torches[i];
        printf("  %s%s %s  %s%s\n", i == 0 ? "* " : "  ", or_dash(t->version), cf_torch_flavour_name(t->flavour),
               or_dash(t->root), i == 0 ? "  (in use)" : "");
        printf("      found by %s; version from %s\n", or_dash(t->found_by), or_dash(t->version_source));
        if (t->problem) {
            printf("      problem: %s\n", cli_safe(t->problem));
            continue;
        }
        if (t->variant)
            printf("      variant %s%s\n", cli_safe(t->variant), t->variant_meta.n ? ":" : "");
        for (size_t k = 0; k < t->variant_meta.n; k++)
            printf("        %s\n", cli_safe(t->variant_meta.v[k]));
        if (t->gpu_runtime_version)
            printf("      built for %s %s\n", t->flavour == CF_TORCH_HIP ? "HIP" : "CUDA", cli_safe(t->gpu_runtime_version));
        printf("      C++11 ABI: %s%s%s%s\n", t->cxx11_abi < 0 ? "unknown" : t->cxx11_abi ? "yes (1)" : "no (0)",
               t->abi_source ? " (from " : "", cli_safe(t->abi_source), t->abi_source ? ")" : "");
        if (t->gpu_lib) {
            printf("      %s\n", cli_safe(t->gpu_lib));
            print_archs("        ", &t->archs, t->archs_known);
        }
        if (t->nccl_built_against)
            printf("      NCCL built against: %s\n", cli_safe(t->nccl_built_against));
        if (t->embedded)
            print_comm("      ", "embedded: ", t->embedded);
        if (t->loaded)
            print_comm("      ", "loads:    ", t->loaded);
        else if (t->needs_comm_lib)
            printf("      loads:    %s NOT FOUND by the loader\n",
                   cf_comm_profile(t->flavour == CF_TORCH_HIP ? CF_COMMLIB_RCCL : CF_COMMLIB_NCCL)->soname);
    }
}

static void print_comm_libs(const struct cf_survey *s)
{
    print_heading("Communication libraries");
    if (!s->n_comm_libs)
        printf("  none on the loader's search path, NCCL_HOME/RCCL_HOME or pip\n");
    for (size_t i = 0; i < s->n_comm_libs; i++)
        print_comm("  ", "", &s->comm_libs[i]);
}

static void print_compilers(const struct cf_survey *s)
{
    print_heading("Compilers");
    if (!s->n_compilers)
        printf("  none found on PATH\n");
    for (size_t i = 0; i < s->n_compilers; i++) {
        const struct cf_compiler *c = &s->compilers[i];
        printf("  %-6s %-10s %s\n", or_dash(c->name), or_dash(c->version), or_dash(c->path));
        if (c->host_gcc_max)
            printf("         host compilers: GCC <= %d, clang <= %d (from %s)\n", c->host_gcc_max, c->host_clang_max,
                   or_dash(c->host_range_source));
    }
}

static void print_findings(const struct cf_findings *f)
{
    print_heading("Findings");
    if (!f->n)
        printf("  none: nothing to fix\n");
    for (size_t i = 0; i < f->n; i++) {
        const struct cf_finding *x = &f->v[i];
        enum cf_color col = x->severity == CF_SEV_ERROR ? CF_RED : x->severity == CF_SEV_WARNING ? CF_YELLOW : CF_CYAN;
        printf("  %s%-7s%s %s  [%s]\n", cf_term_color(stdout, col), cf_severity_name(x->severity),
               cf_term_color(stdout, CF_RESET), cli_safe(x->subject), cli_safe(x->id));
        printf("          %s\n", cli_safe(x->why));
        if (x->remedy)
            printf("          remedy: %s\n", cli_safe(x->remedy));
    }
    printf("\n%zu error(s), %zu warning(s), %zu note(s)\n", cf_findings_count(f, CF_SEV_ERROR),
           cf_findings_count(f, CF_SEV_WARNING), cf_findings_count(f, CF_SEV_INFO));
}

static void print_report(const struct cf_survey *s, const struct cf_findings *f)
{
    printf("cclforge doctor: host %s (surveyed in %.2f s)\n", or_dash(s->hostname), s->seconds);
    if (s->injected_from) {
        printf("injected from %s:", cli_safe(s->injected_from));
        for (int i = 0; i < CF_SEC_COUNT; i++)
            if (s->injected[i])
                printf(" %s", cf_survey_section_name((enum cf_survey_section)i));
        printf("\n");
    }
    print_toolkits(s);
    print_gpus(s);
    print_torches(s);
    print_comm_libs(s);
    print_compilers(s);
    doctor_print_nccl_config(s);
    doctor_print_fabric(s);
    print_findings(f);
}

/* ---- doctor compare ---- */

static int doctor_compare(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int json = 0, verbose = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'v': verbose = 1; break;
        case 'h': fputs(compare_usage, stdout); return EXIT_FINE;
        default: return cli_usage("doctor compare", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    size_t n = (size_t)(argc - optind);
    if (n < 2)
        return cli_usage("doctor compare", "give at least two reports (cclforge doctor --json > HOST.json on each host)");
    struct cf_compare cmp;
    cf_error err = CF_ERROR_INIT;
    if (cf_compare_run(argv + optind, n, &cmp, &err) < 0) {
        cf_compare_release(&cmp);
        int rc = cli_fail("doctor compare", &err);
        return rc == EXIT_PROBLEMS ? EXIT_USAGE : rc;
    }
    if (json)
        cli_print_json(cf_compare_to_json(&cmp));
    else if (cmp.cons.reason || verbose) {
        doctor_print_consolidated(&cmp.cons, cmp.labels, n, verbose);
        const struct cf_survey **surveys = cf_xcalloc(n, sizeof *surveys);
        for (size_t i = 0; i < n; i++)
            surveys[i] = &cmp.docs[i].survey;
        struct cf_hosts_view v = { cmp.labels, n, &cmp.cons, NULL };
        doctor_print_host_table(&v, surveys);
        free(surveys);
    }
    int rc = cf_findings_worst(&cmp.cons.findings) == CF_SEV_ERROR ? EXIT_PROBLEMS : EXIT_FINE;
    cf_compare_release(&cmp);
    return rc;
}

/* ---- doctor --quick: silent when fine, else one reason line and the problems ---- */

static void print_quick(const struct cf_findings *f)
{
    size_t errors = cf_findings_count(f, CF_SEV_ERROR), warnings = cf_findings_count(f, CF_SEV_WARNING);
    if (!errors && !warnings)
        return;
    printf("cclforge doctor: %zu error(s), %zu warning(s); first: %s: %s\n", errors, warnings,
           cli_safe(f->v[0].subject), cli_safe(f->v[0].why));
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].severity != CF_SEV_INFO)
            printf("  %-7s %s  [%s]: %s\n", cf_severity_name(f->v[i].severity), cli_safe(f->v[i].subject),
                   cli_safe(f->v[i].id), cli_safe(f->v[i].why));
}

/* ---- doctor --gather ---- */

struct blob_ctx {
    const struct cf_survey_opts *opts;
};

/* A host's local rank 0 sends its whole report; the other ranks their NCCL configuration. */
static int make_blob(void *ctx, int host_leader, struct strbuf *out, cf_error *err)
{
    const struct blob_ctx *b = ctx;
    struct cf_survey_opts o = *b->opts;
    if (!host_leader) {
        o.skip |= CF_SURVEY_SKIP_GPUS | CF_SURVEY_SKIP_TORCH | CF_SURVEY_SKIP_TOOLKITS | CF_SURVEY_SKIP_COMPILERS |
                  CF_SURVEY_SKIP_COMM | CF_SURVEY_SKIP_PYTHON | CF_SURVEY_SKIP_FABRIC;
        o.survey_file = "";
    }
    struct cf_survey s;
    if (cf_survey_run(&o, &s, err) < 0)
        return -1;
    struct cf_findings f = CF_FINDINGS_INIT;
    if (host_leader)
        cf_doctor_diagnose(&s, &f);
    cJSON *doc = cf_doctor_doc_to_json(&s, &f);
    char *text = cJSON_PrintUnformatted(doc);
    cf_sb_adds(out, text);
    free(text);
    cJSON_Delete(doc);
    cf_findings_release(&f);
    cf_survey_release(&s);
    return 0;
}

extern char **environ;

static int doctor_gather(int argc, char **argv, const struct cf_survey_opts *opts, int json, int verbose,
                         double timeout_s, const char *report)
{
    struct blob_ctx ctx = { opts };
    struct cf_gather_opts go = { environ, timeout_s, make_blob, &ctx };
    struct cf_gather_result r;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_doctor_gather(&go, &r, &err);
    if (rc < 0) {
        cf_gather_result_release(&r);
        return cli_fail("doctor", &err);
    }
    if (!r.is_rank0) {
        /* rank 0 prints; the others exit as it says (a prolog reads every rank's status) */
        rc = r.verdict == 0 ? EXIT_FINE : EXIT_PROBLEMS;
        if (r.verdict < 0)
            cli_error("doctor", "rank %d: %s", r.rank, r.reason ? r.reason : "rank 0 did not answer");
        cf_gather_result_release(&r);
        return rc;
    }
    int report_rc = report ? doctor_write_gather(report, &r, 0, &err) : 0;
    if (json)
        cli_print_json(cf_gather_doc_to_json(&r));
    else
        doctor_print_gather(&r, verbose);
    rc = r.report.findings.n && cf_findings_worst(&r.report.findings) == CF_SEV_ERROR ? EXIT_PROBLEMS : EXIT_FINE;
    if (report_rc < 0)
        rc = cli_fail("doctor", &err);
    cf_gather_result_release(&r);
    return rc;
}

/* ---- doctor ---- */

int cmd_doctor(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "compare"))
        return doctor_compare(argc - 1, argv + 1);
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "libtorch", required_argument, NULL, 'l' },
        { "survey", required_argument, NULL, 's' },
        { "save", required_argument, NULL, 'o' },
        { "sysfs-root", required_argument, NULL, 'r' },
        { "python", required_argument, NULL, 'p' },
        { "no-python", no_argument, NULL, 'P' },
        { "no-nvidia", no_argument, NULL, 'N' },
        { "no-cache", no_argument, NULL, 'C' },
        { "quick", no_argument, NULL, 'q' },
        { "gather", no_argument, NULL, 'g' },
        { "timeout", required_argument, NULL, 't' },
        { "verbose", no_argument, NULL, 'v' },
        { "report", required_argument, NULL, 'R' },
        { "topo-file", required_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct cf_survey_opts opts = { 0 };
    const char *save = NULL, *report = NULL, *topo_file = NULL;
    int json = 0, quick = 0, gather = 0, verbose = 0, c;
    double timeout_s = 60;
    cf_error err = CF_ERROR_INIT;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'l': opts.libtorch = optarg; break;
        case 's': opts.survey_file = optarg; break;
        case 'o': save = optarg; break;
        case 'r': opts.sysfs_root = optarg; break;
        case 'p': opts.python = optarg; break;
        case 'P': opts.skip |= CF_SURVEY_SKIP_PYTHON; break;
        case 'N': opts.no_nvidia_driver = 1; break;
        case 'C': opts.no_cache = 1; break;
        case 'q': quick = 1; break;
        case 'g': gather = 1; break;
        case 'v': verbose = 1; break;
        case 'R': report = optarg; break;
        case 'T': topo_file = optarg; break;
        case 't':
            if (cli_decimal("--timeout", "a number of seconds", optarg, 1, 86400, &timeout_s, &err))
                return cli_usage_fail("doctor", &err);
            break;
        case 'h': fputs(doctor_usage, stdout); return EXIT_FINE;
        default: return cli_usage("doctor", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("doctor", "unexpected argument '%s' (subcommand: compare)", argv[optind]);
    if (opts.sysfs_root && !cf_is_dir(opts.sysfs_root))
        return cli_usage("doctor", "--sysfs-root %s is not a directory", opts.sysfs_root);
    if (quick)
        opts.skip |= CF_SURVEY_SKIP_PYTHON | CF_SURVEY_SKIP_TORCH | CF_SURVEY_SKIP_COMPILERS;
    if (topo_file && (!report || gather))
        return cli_usage("doctor", "--topo-file draws one host's topology: it needs --report and not --gather");
    if (gather)
        return doctor_gather(argc, argv, &opts, json, verbose, timeout_s, report);

    struct cf_survey s;
    if (cf_survey_run(&opts, &s, &err) < 0) {
        /* A survey file the user named that cannot be read is a usage error. */
        if (err.kind == CF_ERR_IO || err.kind == CF_ERR_FORMAT || err.kind == CF_ERR_NOTFOUND)
            err.kind = CF_ERR_USAGE;
        return cli_fail("doctor", &err);
    }
    if (save && cf_survey_save(&s, save, &err) < 0) {
        cf_survey_release(&s);
        return cli_fail("doctor", &err);
    }
    struct cf_findings f = CF_FINDINGS_INIT;
    cf_doctor_diagnose(&s, &f);
    cf_doctor_fr_env_note(&s, environ, &f);
    int report_rc = 0;
    if (report) {
        const char *why = NULL, *xml = doctor_topo_file(topo_file, &why);
        report_rc = doctor_write_topology(report, &s, xml, quick, &err);
        if (report_rc < 0 && why)
            cf_error_prefix(&err, "%s", why);
    }
    if (json)
        cli_print_json(cf_doctor_doc_to_json(&s, &f));
    else if (quick)
        print_quick(&f);
    else
        print_report(&s, &f);
    int rc = cf_findings_worst(&f) == CF_SEV_ERROR ? EXIT_PROBLEMS : EXIT_FINE;
    if (report_rc < 0)
        rc = cli_fail("doctor", &err);
    cf_findings_release(&f);
    cf_survey_release(&s);
    return rc;
}
