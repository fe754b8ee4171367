/* cclforge smoke: parse flags, run cf_smoke_run, print per-rank lines, the table and
 * the verdict (or one JSON document). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/smoke.h"
#include "cclforge/strbuf.h"
#include "cli/term.h"
#include "cli/builtin.h"
#include "cli/cli.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cclforge smoke [options]\n"
            "\n"
            "Runs real collectives across real ranks with the library a job will load, checks every\n"
            "element exactly, and reports time, algbw and busbw (nccl-tests' definitions).\n"
            "\n"
            "Backend:\n"
            "  --backend nccl|rccl|mpi  comm library kind (default nccl); mpi runs on host memory\n"
            "  --lib PATH               the NCCL-API library (default: libnccl.so.2 / librccl.so.1 as the\n"
            "                           loader finds it)\n"
            "  --runtime PATH           the device runtime (default: libcudart.so* / libamdhip64.so* next to\n"
            "                           the comm library, then the loader's paths)\n"
            "Ranks:\n"
            "  -n, --nranks N           start N local ranks (rank i uses local device i); without -n and\n"
            "                           under mpirun, srun or torchrun this process is one rank\n"
            "  --mpirun PATH            the mpirun for --backend mpi -n N (default: mpirun on PATH)\n"
            "  --timeout SEC            per-operation timeout: a rank silent this long is hung (default 60)\n"
            "  --connect-timeout SEC    how long ranks wait for each other at start-up (default 30)\n"
            "Tests (nccl-tests' flags where they exist):\n"
            "  --ops LIST               all_reduce,broadcast,all_gather,reduce_scatter,sendrecv (default all)\n"
            "  -d, --dtype LIST         float,half,bfloat16,int32,int64,double or all (default float)\n"
            "  -b, --minbytes SIZE      smallest size (default 1K); sizes take K, M, G suffixes\n"
            "  -e, --maxbytes SIZE      largest size (default 1M)\n"
            "  -f, --stepfactor F       multiply the size by F each step (default 4)\n"
            "  -i, --stepbytes SIZE     add SIZE each step instead\n"
            "  -w, --warmup N           warmup iterations (default 5)\n"
            "  --iters N                timed iterations (default 20)\n"
            "  -c, --check 0|1          verify every element (default 1)\n"
            "  --place out|in|both      out-of-place, in-place or both (default both)\n"
            "Output:\n"
            "  --json                   one JSON document (schema cclforge.smoke/1) instead of text\n"
            "  -h, --help               this help\n"
            "\n"
            "Text output: one 'RANK_PASS rank=R local_rank=L op=OP bytes=B ...' or 'RANK_FAIL ... reason=...'\n"
            "line per rank and test, a table, and a last line 'N passed, N failed'.\n"
            "Environment: CCLFORGE_PLUGIN_DIR (where cclforge_smoke_mpi.so is looked for first),\n"
            "CCLFORGE_SMOKE_PORT (the unique-id port under a launcher; default MASTER_PORT, +1 under\n"
            "torchrun), CCLFORGE_SMOKE_FAULT=RANK:abort|hang|exit|corrupt:OP (fault injection for tests).\n"
            "Exit status: 0 all passed, 1 a test or a rank failed, 2 usage error.\n"
            "Examples:\n"
            "  cclforge smoke -n 2 -b 8 -e 128M -f 2\n"
            "  cclforge smoke --backend mpi -n 4 --json\n"
            "  mpirun -np 16 cclforge smoke --lib /opt/nccl/lib/libnccl.so.2 --ops all_reduce\n");
}

struct smoke_cli {
    int json;
    int nranks;
    cJSON *rank_results; /* JSON mode: one entry per rank and test */
    cJSON *rank_info;    /* JSON mode: rank -> {key: value} */
    cJSON *rank_failures;
};

/* "text" with \" and \\, newlines as spaces, control characters escaped (cli_escape). */
static void print_quoted(FILE *f, const char *s)
{
    struct strbuf q = STRBUF_INIT;
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            cf_sb_addc(&q, '\\');
        cf_sb_addc(&q, *s == '\n' ? ' ' : *s);
    }
    fprintf(f, "\"%s\"", cli_safe(cf_sb_str(&q)));
    cf_sb_release(&q);
}

static void on_event(void *ctx, const struct cf_smoke_event *ev)
{
    struct smoke_cli *cli = ctx;
    const struct cf_smoke_row *row = &ev->row;
    switch (ev->kind) {
    case CF_EV_LOG:
        if (ev->rank >= 0)
            fprintf(stderr, "[rank %d] %s\n", ev->rank, cli_safe(ev->text));
        else
            fprintf(stderr, "[mpirun] %s\n", cli_safe(ev->text));
        return;
    case CF_EV_INFO:
        if (!ev->key)
            return;
        if (cli->json) {
            char name[32];
            snprintf(name, sizeof name, "%d", ev->rank);
            cJSON *r = cJSON_GetObjectItemCaseSensitive(cli->rank_info, name);
            if (!r)
                r = cJSON_AddObjectToObject(cli->rank_info, name);
            cJSON_DeleteItemFromObjectCaseSensitive(r, ev->key);
            cJSON_AddStringToObject(r, ev->key, ev->value ? ev->value : "");
        } else {
            printf("RANK_INFO rank=%d local_rank=%d %s=", ev->rank, ev->local_rank, cli_safe(ev->key));
            print_quoted(stdout, ev->value);
            putchar('\n');
        }
        break;
    case CF_EV_RESULT:
        if (cli->json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "rank", ev->rank);
            cJSON_AddNumberToObject(o, "local_rank", ev->local_rank);
            cJSON_AddStringToObject(o, "op", cf_smoke_op_info(row->op)->name);
            cJSON_AddStringToObject(o, "dtype", cf_smoke_dtype_info(row->dtype)->name);
            cJSON_AddNumberToObject(o, "bytes", (double)row->bytes);
            cJSON_AddBoolToObject(o, "in_place", row->in_place);
            cJSON_AddBoolToObject(o, "pass", row->ok);
            cJSON_AddNumberToObject(o, "wrong", (double)row->wrong);
            if (ev->text)
                cJSON_AddStringToObject(o, "reason", ev->text);
            cJSON_AddItemToArray(cli->rank_results, o);
        } else {
            printf("%s rank=%d local_rank=%d op=%s bytes=%zu dtype=%s place=%s", row->ok ? "RANK_PASS" : "RANK_FAIL",
                   ev->rank, ev->local_rank, cf_smoke_op_info(row->op)->name, row->bytes,
                   cf_smoke_dtype_info(row->dtype)->name, row->in_place ? "in" : "out");
            if (!row->ok) {
                printf(" reason=");
                print_quoted(stdout, ev->text ? ev->text : "wrong result");
            }
            putchar('\n');
        }
        break;
    case CF_EV_FAIL:
        if (cli->json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "rank", ev->rank);
            cJSON_AddNumberToObject(o, "local_rank", ev->local_rank);
            cJSON_AddStringToObject(o, "reason", ev->text ? ev->text : "");
            cJSON_AddItemToArray(cli->rank_failures, o);
        } else {
            printf("RANK_FAIL rank=%d local_rank=%d reason=", ev->rank, ev->local_rank);
            print_quoted(stdout, ev->text ? ev->text : "failed");
            putchar('\n');
        }
        if (ev->fatal) {
            /* this rank is stuck inside a collective: say so and leave; the launcher
             * (mpirun, srun, torchrun) stops the others */
            cli_error("smoke", "%s", ev->text ? ev->text : "rank hung");
            fflush(stdout);
            fflush(stderr);
            _exit(EXIT_PROBLEMS);
        }
        break;
    }
    fflush(stdout);
}

static void print_table(const struct cf_smoke_report *rep)
{
    printf("# cclforge smoke: %s backend (%s), %d rank%s, launcher %s\n", cli_safe(rep->backend),
           rep->lib_version ? cli_safe(rep->lib_version) : "version unknown", rep->nranks, rep->nranks == 1 ? "" : "s",
           rep->launcher ? cli_safe(rep->launcher) : "none");
    if (!rep->nrows)
        return;
    printf("# %12s %12s %9s %15s %6s %11s %11s %11s %8s %6s\n", "size(B)", "count", "type", "op", "place",
           "time(us)", "algbw(GB/s)", "busbw(GB/s)", "wrong", "result");
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct cf_smoke_row *r = &rep->rows[i];
        printf("  %12zu %12zu %9s %15s %6s %11.2f %11.3f %11.3f %8ld %6s\n", r->bytes, r->count,
               cf_smoke_dtype_info(r->dtype)->name, cf_smoke_op_info(r->op)->name, r->in_place ? "in" : "out",
               r->time_us, r->algbw, r->busbw, r->wrong, r->ok ? "ok" : "FAIL");
    }
}

static cJSON *report_json(const struct cf_smoke_report *rep, struct smoke_cli *cli, int exit_code)
{
    static const char *const roles[] = { "supervisor", "rank", "supervised_rank" };
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.smoke/1");
    cJSON_AddStringToObject(doc, "role", roles[rep->role]);
    cJSON_AddStringToObject(doc, "backend", rep->backend ? rep->backend : "");
    cJSON_AddStringToObject(doc, "launcher", rep->launcher ? rep->launcher : "");
    cJSON_AddNumberToObject(doc, "nranks", rep->nranks);
    if (rep->role == CF_ROLE_RANK)
        cJSON_AddNumberToObject(doc, "rank", rep->rank);
    cf_json_put_str(doc, "lib_version", rep->lib_version);
    cf_json_put_str(doc, "lib_path", rep->lib_path);
    cJSON_AddBoolToObject(doc, "ok", exit_code == 0);
    cJSON_AddNumberToObject(doc, "passed", (double)rep->passed);
    cJSON_AddNumberToObject(doc, "failed", (double)rep->failed);
    cJSON_AddBoolToObject(doc, "aborted", rep->aborted);
    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct cf_smoke_row *r = &rep->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "op", cf_smoke_op_info(r->op)->name);
        cJSON_AddStringToObject(o, "dtype", cf_smoke_dtype_info(r->dtype)->name);
        cJSON_AddBoolToObject(o, "in_place", r->in_place);
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        cJSON_AddNumberToObject(o, "count", (double)r->count);
        cJSON_AddNumberToObject(o, "time_us", r->time_us);
        cJSON_AddNumberToObject(o, "algbw_gbps", r->algbw);
        cJSON_AddNumberToObject(o, "busbw_gbps", r->busbw);
        cJSON_AddNumberToObject(o, "busbw_factor", cf_smoke_op_info(r->op)->busbw_factor(rep->nranks));
        cJSON_AddNumberToObject(o, "wrong", (double)r->wrong);
        cJSON_AddBoolToObject(o, "ok", r->ok);
        cJSON_AddItemToArray(rows, o);
    }
    cJSON *fails = cJSON_AddArrayToObject(doc, "failures");
    for (size_t i = 0; i < rep->nfailures; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", rep->failures[i].rank);
        cJSON_AddStringToObject(o, "doing", rep->failures[i].doing);
        cJSON_AddStringToObject(o, "reason", rep->failures[i].reason);
        cJSON_AddItemToArray(fails, o);
    }
    cJSON_AddItemToObject(doc, "rank_info", cli->rank_info);
    cJSON_AddItemToObject(doc, "rank_results", cli->rank_results);
    cJSON_AddItemToObject(doc, "rank_failures", cli->rank_failures);
    cli->rank_info = cli->rank_results = cli->rank_failures = NULL;
    return doc;
}

/* Parses a comma list against a table parser into a bit mask; "all" selects `all`. */
static int parse_list(const char *what, const char *list, unsigned all, int (*parse)(const char *, int *),
                      unsigned *out)
{
    struct strvec items = STRVEC_INIT;
    cf_strvec_split(&items, list, ",", 0);
    unsigned mask = 0;
    int rc = 0;
    for (size_t i = 0; i < items.n && rc == 0; i++) {
        int v;
        if (!strcmp(items.v[i], "all"))
            mask |= all;
        else if (parse(items.v[i], &v) == 0)
            mask |= 1u << v;
        else
            rc = cli_usage("smoke", "'%s' is not a %s", items.v[i], what);
    }
    cf_strvec_clear(&items);
    if (rc == 0 && !mask)
        rc = cli_usage("smoke", "empty %s list", what);
    *out = mask;
    return rc;
}

static int parse_op(const char *s, int *v)
{
    enum cf_smoke_op op;
    if (cf_smoke_op_parse(s, &op))
        return -1;
    *v = (int)op;
    return 0;
}

static int parse_dtype(const char *s, int *v)
{
    enum cf_smoke_dtype dt;
    if (cf_smoke_dtype_parse(s, &dt))
        return -1;
    *v = (int)dt;
    return 0;
}

static int parse_number(const char *flag, const char *s, double min, double max, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || v != v || v < min || v > max)
        return cli_usage("smoke", "%s '%s': expected a number from %g to %g", flag, s, min, max);
    *out = v;
    return 0;
}

static int parse_size_flag(const char *flag, const char *s, size_t *out)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_smoke_parse_size(s, out, &err) < 0) {
        int rc = cli_usage("smoke", "%s: %s", flag, cf_error_message(&err));
        cf_error_clear(&err);
        return rc;
    }
    return 0;
}

enum {
    OPT_BACKEND = 256, OPT_LIB, OPT_RUNTIME, OPT_MPIRUN, OPT_TIMEOUT, OPT_CONNECT_TIMEOUT, OPT_OPS, OPT_ITERS,
    OPT_PLACE, OPT_JSON
};

static int parse_args(int argc, char **argv, struct cf_smoke_opts *o, struct smoke_cli *cli)
{
    static const struct option longopts[] = {
        { "backend", required_argument, 0, OPT_BACKEND },
        { "lib", required_argument, 0, OPT_LIB },
        { "runtime", required_argument, 0, OPT_RUNTIME },
        { "nranks", required_argument, 0, 'n' },
        { "mpirun", required_argument, 0, OPT_MPIRUN },
        { "timeout", required_argument, 0, OPT_TIMEOUT },
        { "connect-timeout", required_argument, 0, OPT_CONNECT_TIMEOUT },
        { "ops", required_argument, 0, OPT_OPS },
        { "dtype", required_argument, 0, 'd' },
        { "minbytes", required_argument, 0, 'b' },
        { "maxbytes", required_argument, 0, 'e' },
        { "stepfactor", required_argument, 0, 'f' },
        { "stepbytes", required_argument, 0, 'i' },
        { "warmup", required_argument, 0, 'w' },
        { "iters", required_argument, 0, OPT_ITERS },
        { "check", required_argument, 0, 'c' },
        { "place", required_argument, 0, OPT_PLACE },
        { "json", no_argument, 0, OPT_JSON },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    static const struct { const char *name; enum cf_smoke_backend_kind kind; } backends[] = {
        { "nccl", CF_BACKEND_NCCL }, { "rccl", CF_BACKEND_RCCL }, { "mpi", CF_BACKEND_MPI },
    };
    static const struct { const char *name; unsigned places; } placements[] = {
        { "out", CF_PLACE_OUT }, { "in", CF_PLACE_IN }, { "both", CF_PLACE_OUT | CF_PLACE_IN },
    };
    double num;
    int c, found;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":n:d:b:e:f:i:w:c:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_BACKEND:
            found = 0;
            for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
                if (!strcmp(optarg, backends[i].name)) {
                    o->backend = backends[i].kind;
                    found = 1;
                }
            if (!found)
                return cli_usage("smoke", "--backend '%s': expected nccl, rccl or mpi", optarg);
            break;
        case OPT_LIB: o->lib_path = optarg; break;
        case OPT_RUNTIME: o->runtime_path = optarg; break;
        case OPT_MPIRUN: o->mpirun = optarg; break;
        case 'n':
            if (parse_number("-n", optarg, 1, 4096, &num))
                return EXIT_USAGE;
            o->nranks = (int)num;
            if (num != (double)o->nranks)
                return cli_usage("smoke", "-n '%s': expected a whole number", optarg);
            break;
        case OPT_TIMEOUT:
            if (parse_number("--timeout", optarg, 0.1, 86400, &o->op_timeout_s))
                return EXIT_USAGE;
            break;
        case OPT_CONNECT_TIMEOUT:
            if (parse_number("--connect-timeout", optarg, 0.1, 86400, &o->connect_timeout_s))
                return EXIT_USAGE;
            break;
        case OPT_OPS:
            if (parse_list("collective", optarg, (1u << CF_OP_COUNT) - 1, parse_op, &o->ops))
                return EXIT_USAGE;
            break;
        case 'd':
            if (parse_list("data type", optarg, (1u << CF_DT_COUNT) - 1, parse_dtype, &o->dtypes))
                return EXIT_USAGE;
            break;
        case 'b':
            if (parse_size_flag("-b", optarg, &o->sweep.min_bytes))
                return EXIT_USAGE;
            break;
        case 'e':
            if (parse_size_flag("-e", optarg, &o->sweep.max_bytes))
                return EXIT_USAGE;
            break;
        case 'f':
            if (parse_number("-f", optarg, 1, 1024, &o->sweep.step_factor))
                return EXIT_USAGE;
            break;
        case 'i':
            if (parse_size_flag("-i", optarg, &o->sweep.step_bytes))
                return EXIT_USAGE;
            break;
        case 'w':
            if (parse_number("-w", optarg, 0, 1e6, &num))
                return EXIT_USAGE;
            o->warmup_iters = (int)num;
            break;
        case OPT_ITERS:
            if (parse_number("--iters", optarg, 1, 1e7, &num))
                return EXIT_USAGE;
            o->iters = (int)num;
            break;
        case 'c':
            if (strcmp(optarg, "0") && strcmp(optarg, "1"))
                return cli_usage("smoke", "-c '%s': expected 0 or 1", optarg);
            o->check = optarg[0] == '1';
            break;
        case OPT_PLACE:
            found = 0;
            for (size_t i = 0; i < sizeof placements / sizeof placements[0]; i++)
                if (!strcmp(optarg, placements[i].name)) {
                    o->places = placements[i].places;
                    found = 1;
                }
            if (!found)
                return cli_usage("smoke", "--place '%s': expected out, in or both", optarg);
            break;
        case OPT_JSON: cli->json = 1; break;
        case 'h': usage(stdout); return -1;
        case ':': return cli_usage("smoke", "%s needs a value", argv[optind - 1]);
        default: return cli_usage("smoke", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("smoke", "unexpected argument '%s'", argv[optind]);
    if (o->sweep.min_bytes > o->sweep.max_bytes)
        return cli_usage("smoke", "-b (%zu) is larger than -e (%zu)", o->sweep.min_bytes, o->sweep.max_bytes);
    return 0;
}

int cmd_smoke(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return EXIT_FINE;
    }
    struct cf_smoke_opts o;
    cf_smoke_opts_defaults(&o);
    struct smoke_cli cli = { 0 };
    /* the ranks mpirun starts get these arguments again, so keep them before getopt permutes */
    struct strvec self_args = STRVEC_INIT;
    for (int i = 0; i < argc; i++)
        cf_strvec_push(&self_args, argv[i]);
    int rc = parse_args(argc, argv, &o, &cli);
    if (rc) {
        cf_strvec_clear(&self_args);
        return rc < 0 ? EXIT_FINE : rc;
    }
    cf_error err = CF_ERROR_INIT;
    const char *fault = getenv("CCLFORGE_SMOKE_FAULT");
    if (fault && cf_smoke_fault_parse(fault, &o.fault, &err) < 0) {
        cf_strvec_clear(&self_args);
        return cli_fail("smoke", &err);
    }
    char *self = cf_realpath("/proc/self/exe");
    o.self_exe = self;
    o.self_argv = self_args.v;
    o.envp = environ;
    if (cli.json) {
        cli.rank_results = cJSON_CreateArray();
        cli.rank_info = cJSON_CreateObject();
        cli.rank_failures = cJSON_CreateArray();
    }

    struct cf_smoke_report rep;
    rc = cf_smoke_run(&o, on_event, &cli, &rep, &err);
    cf_strvec_clear(&self_args);
    free(self);
    if (rc < 0) {
        cJSON_Delete(cli.rank_results);
        cJSON_Delete(cli.rank_info);
        cJSON_Delete(cli.rank_failures);
        return cli_fail("smoke", &err);
    }
    int code = rep.failed || rep.aborted ? EXIT_PROBLEMS : EXIT_FINE;
    if (rep.role == CF_ROLE_SUPERVISED_RANK) {
        /* the supervisor reports; this rank only says whether it got through */
        code = rep.aborted ? EXIT_PROBLEMS : EXIT_FINE;
    } else if (rep.role == CF_ROLE_RANK && rep.rank != 0) {
        /* under a launcher, rank 0 prints the agreed table */
    } else if (cli.json) {
        cli_print_json(report_json(&rep, &cli, code));
    } else {
        print_table(&rep);
        for (size_t i = 0; i < rep.nfailures; i++) {
            const struct cf_smoke_failure *f = &rep.failures[i];
            if (f->rank >= 0)
                cli_error("smoke", "rank %d failed while %s: %s", f->rank, f->doing[0] ? f->doing : "starting",
                          f->reason);
            else
                cli_error("smoke", "%s", f->reason);
        }
        printf("%ld passed, %ld failed\n", rep.passed, rep.failed);
    }
    cJSON_Delete(cli.rank_results);
    cJSON_Delete(cli.rank_info);
    cJSON_Delete(cli.rank_failures);
    int is_rank = rep.role != CF_ROLE_SUPERVISOR;
    cf_smoke_report_release(&rep);
    if (is_rank) {
        /* A rank may have run MPI (the backend, or the unique-id broadcast): Open MPI
         * unloads its components in MPI_Finalize, leaving allocations that no leak
         * checker can attribute or suppress. What was to be said is said: leave now. */
        fflush(stdout);
        fflush(stderr);
        _exit(code);
    }
    return code;
}
