/* cclforge smoke: parse flags, run cf_smoke_run, print per-rank lines, then the
 * run's document (cclforge/smoke_doc.h) as the table, the footer, the groups, the
 * transports and the verdict, or as JSON, and its HTML page. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/smoke.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/strbuf.h"
#include "cli/term.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/smoke_out.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cclforge smoke [options]\n"
            "\n"
            "Runs real collectives across real ranks with the library a job will load, checks every\n"
            "element, reports time, algbw and busbw as nccl-tests does, and names the slowest rank and\n"
            "host, the transports NCCL used, and the bad host of a --pattern search.\n"
            "\n"
            "Backend:\n"
            "  --backend nccl|rccl|mpi  comm library kind (default nccl); mpi runs on host memory\n"
            "  --lib PATH               the NCCL-API library (default: libnccl.so.2 / librccl.so.1 as the\n"
            "                           loader finds it)\n"
            "  --runtime PATH           the device runtime (default: libcudart.so* / libamdhip64.so* next to\n"
            "                           the comm library, then the loader's paths)\n"
            "  --mpi-lib PATH           the libmpi for --backend mpi, loaded at run time: Open MPI's\n"
            "                           (libmpi.so.40) or one of the MPICH ABI (libmpi.so.12: MPICH, Intel MPI,\n"
            "                           MVAPICH). Default: $CCLFORGE_MPI_LIB, else the launcher's own (OMPI_*:\n"
            "                           libmpi.so.40; PMI_*, HYDRA_*, MPI_LOCALRANKID, I_MPI_*: libmpi.so.12,\n"
            "                           first in <launcher dir>/../lib), else libmpi.so.40, then libmpi.so.12\n"
            "Ranks:\n"
            "  -n, --nranks N           start N local ranks (rank i uses local device i); without -n and\n"
            "                           under mpirun, srun or torchrun this process is one rank\n"
            "  --mpirun PATH            the mpirun for --backend mpi -n N (default: mpirun on PATH)\n"
            "  -T, --timeout SEC        per-operation timeout: a rank without progress this long is hung\n"
            "                           (default 60)\n"
            "  --connect-timeout SEC    how long ranks wait for each other at start-up (default 30)\n"
            "Tests (nccl-tests' flags where they exist):\n"
            "  --ops LIST               all_reduce,broadcast,all_gather,reduce_scatter,sendrecv,reduce,\n"
            "                           alltoall,gather,scatter (nccl-tests' binary names too) or all (default)\n"
            "  -d, --dtype LIST         int8,uint8,int32,uint32,int64,uint64,half,float,double,bfloat16 or all\n"
            "                           (default float)\n"
            "  -o, --op LIST            reductions: sum,prod,max,min,avg or all (default sum)\n"
            "  -r, --root N|all         root of broadcast, reduce, gather, scatter (default 0)\n"
            "  -b, --minbytes SIZE      smallest size (default 1K); sizes take K, M, G, T (B, iB)\n"
            "  -e, --maxbytes SIZE      largest size (default 1M)\n"
            "  -f, --stepfactor N       multiply the size by N each step (default 4; a whole number)\n"
            "  -i, --stepbytes SIZE     add SIZE each step (taken when -f is 1 or not given)\n"
            "  -w, --warmup N           warmup iterations per test (default 1)\n"
            "  --iters N                timed iterations per test (default 20)\n"
            "  -c, --check N            check iterations per test; 0: no check (default 1)\n"
            "  --place out|in|both      out-of-place, in-place or both (default both)\n"
            "  -a, --average 0|1|2|3    a test's time over the ranks: rank 0, mean, min or max (default 1)\n"
            "  -z, --blocking 0|1       wait for each collective before the next (GPU backends)\n"
            "  -G, --cudagraph N        capture the iterations in a CUDA/HIP graph, launch it N times (GPU)\n"
            "  -R, --register 0|1       register the buffers with the communicator (GPU, NCCL >= 2.19)\n"
            "Fabric:\n"
            "  --pattern all|intra|inter|pairwise|bisect\n"
            "                           group the hosts: the whole world (default), each host alone, one\n"
            "                           rank per host, host pairs in rounds, or halving to the bad host\n"
            "  --min-busbw GB/S         fail when the average busbw is lower (and judge --pattern groups by it)\n"
            "  --expect-transport ib|socket|p2p|shm\n"
            "                           fail when a connection of that kind used another (NCCL's own log)\n"
            "Output:\n"
            "  --json                   one JSON document (schema cclforge.smoke/2) instead of text\n"
            "  --report FILE.html       also write the HTML report: verdict, bad hosts as a Slurm hostlist,\n"
            "                           the host x host busbw matrix of --pattern pairwise, each pair against\n"
            "                           its path's capacity (else the median pair), the run's facts\n"
            "                           and its JSON (one self-contained file; `cclforge report` remakes it\n"
            "                           from a saved --json document)\n"
            "  -h, --help               this help\n"
            CLI_HELP_COLOR("           ")
            "\n"
            "Text output: 'RANK_PASS rank=R local_rank=L op=OP bytes=B ...', 'RANK_FAIL ... reason=...' and\n"
            "'RANK_INFO rank=R local_rank=L KEY=\"VALUE\"' lines, the table with the slowest rank and host of\n"
            "each test, nccl-tests' footer, the groups and transports, with --pattern pairwise the host x host\n"
            "matrix (one character a pair: . ok, s slow, X failed, ~ wide spread; the worst pairs when wider\n"
            "than the terminal), a 'verdict:' line, 'exclude: HOSTLIST' when the search named bad hosts (the\n"
            "verdict's hosts as Slurm's hostlist, for srun --exclude; JSON \"bad_hosts\" and \"exclude\"),\n"
            "and a last line 'N passed, N failed'. Pairwise names a host bad when every pair it was in was bad.\n"
            "Environment: CCLFORGE_MPI_LIB (the libmpi when --mpi-lib is not given),\n"
            "CCLFORGE_PORT (the unique-id port under a launcher; default MASTER_PORT, +1 under\n"
            "torchrun), CCLFORGE_SECRET (64 hex digits, the same on every rank: the run's rendezvous secret),\n"
            "NCCL_DEBUG_FILE (kept and read when set; else NCCL's INFO lines go to a file of each rank),\n"
            "CCLFORGE_SMOKE_FAULT=RANK:abort|hang|exit|corrupt|slow:OP|init|finalize (fault injection for tests).\n"
            "A --pattern search judges each group by its median busbw and the 90%% band of that median\n"
            "(needs --iters 5 or more); a group whose band straddles the line cannot be told, and the\n"
            "verdict then reads 'inconclusive: <why>' and names no host.\n"
            "Exit status: 0 all passed, 1 a test, a rank, --min-busbw, --expect-transport or a --pattern\n"
            "search failed or could not decide (or the run was interrupted), 2 usage error.\n"
            "Examples:\n"
            "  cclforge smoke -n 2 -b 8 -e 128M -f 2\n"
            "  cclforge smoke --backend mpi -n 4 -o all --json\n"
            "  mpiexec -n 4 cclforge smoke --backend mpi --mpi-lib /opt/intel/mpi/lib/libmpi.so.12\n"
            "  mpirun -np 16 cclforge smoke --lib /opt/nccl/lib/libnccl.so.2 --ops all_reduce --min-busbw 40\n"
            "  srun -N 8 cclforge smoke --ops all_reduce --pattern pairwise --expect-transport ib\n");
}

struct smoke_cli {
    int json;
    const char *report;  /* --report FILE.html */
    int pairwise;        /* --pattern pairwise: the text shows the matrix */
    FILE *out;           /* the report goes here: stdout as it was before the run */
    struct cf_smoke_doc doc; /* the run's document: the rank-level records as they come */
};

/* the signal that asks the supervisor to stop */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    stop_signal = sig;
}

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

static void on_result(struct smoke_cli *cli, const struct cf_smoke_event *ev)
{
    FILE *f = cli->out;
    const struct cf_smoke_row *row = &ev->row;
    int ok = ev->own_wrong == 0;
    if (cli->json)
        return;
    fprintf(f, "%s rank=%d local_rank=%d op=%s bytes=%zu dtype=%s redop=%s place=%s time_us=%.2f",
            ok ? "RANK_PASS" : "RANK_FAIL", ev->rank, ev->local_rank, cf_smoke_op_info(row->op)->name, row->bytes,
            cf_smoke_dtype_info(row->dtype)->name, cf_smoke_doc_redop_name(row->redop), row->in_place ? "in" : "out",
            ev->own_time_us);
    if (!ok) {
        fprintf(f, " reason=");
        print_quoted(f, ev->text ? ev->text : "wrong result");
    }
    fputc('\n', f);
}

static void on_event(void *ctx, const struct cf_smoke_event *ev)
{
    struct smoke_cli *cli = ctx;
    FILE *f = cli->out;
    cf_smoke_doc_note(&cli->doc, ev);
    switch (ev->kind) {
    case CF_EV_LOG:
        if (ev->rank >= 0)
            fprintf(stderr, "[rank %d] %s\n", ev->rank, cli_safe(ev->text));
        else
            fprintf(stderr, "[supervisor] %s\n", cli_safe(ev->text));
        return;
    case CF_EV_INFO:
        if (!ev->key)
            return;
        if (!cli->json) {
            fprintf(f, "RANK_INFO rank=%d local_rank=%d %s=", ev->rank, ev->local_rank, cli_safe(ev->key));
            print_quoted(f, ev->value);
            fputc('\n', f);
        }
        break;
    case CF_EV_RESULT:
        on_result(cli, ev);
        break;
    case CF_EV_FAIL:
    case CF_EV_PROBLEM:
        if (!cli->json) {
            fprintf(f, "%s rank=%d local_rank=%d reason=", ev->kind == CF_EV_FAIL ? "RANK_FAIL" : "RANK_PROBLEM",
                    ev->rank, ev->local_rank);
            print_quoted(f, ev->text ? ev->text : "failed");
            fputc('\n', f);
        }
        if (ev->fatal) {
            /* this rank is stuck inside a collective: say so and leave; the launcher
             * (mpirun, srun, torchrun) stops the others */
            cli_error("smoke", "%s", ev->text ? ev->text : "rank hung");
            fflush(f);
            fflush(stderr);
            _exit(EXIT_PROBLEMS);
        }
        break;
    default: /* transports, groups and the verdict are printed from the report */
        break;
    }
}

/* "±4%": half the spread of the samples' busbw; "±?" when unknown (one sample) */
static void spread_text(char *out, size_t cap, double spread)
{
    if (spread < 0)
        snprintf(out, cap, "\u00b1?");
    else
        snprintf(out, cap, "\u00b1%.0f%%", spread * 50);
}

static void print_table(FILE *f, const struct cf_smoke_doc *rep)
{
    fprintf(f, "# cclforge smoke: %s backend (%s), %d rank%s, launcher %s\n", cli_safe(rep->backend),
            rep->lib_version ? cli_safe(rep->lib_version) : "version unknown", rep->nranks,
            rep->nranks == 1 ? "" : "s", rep->launcher ? cli_safe(rep->launcher) : "none");
    if (rep->mpi_abi)
        fprintf(f, "# library: %s (%s ABI, chosen by %s)\n", rep->lib_path ? cli_safe(rep->lib_path) : "?",
                cli_safe(rep->mpi_abi), rep->mpi_chosen_by ? cli_safe(rep->mpi_chosen_by) : "?");
    for (size_t r = 0; r < rep->nlisted; r++)
        if (rep->ranks[r].hostname)
            fprintf(f, "#  rank %2zu pid %6d on %s device %s\n", r, rep->ranks[r].pid, cli_safe(rep->ranks[r].hostname),
                    rep->ranks[r].device ? cli_safe(rep->ranks[r].device) : "?");
    if (!rep->nrows)
        return;
    int groups = rep->ngroups > 0;
    fprintf(f, "# %10s %12s %8s %6s %4s %14s %5s %9s %8s %8s %6s %7s %6s  %s\n", "size(B)", "count(elem)", "type",
            "redop", "root", "op", "place", "time(us)", "algbw", "busbw", "spread", "#wrong", "result",
            "slowest rank/host (x median)");
    for (size_t i = 0; i < rep->nrows; i++) {
        const struct cf_smoke_row *r = &rep->rows[i];
        char root[16], wrong[24];
        snprintf(root, sizeof root, r->root >= 0 ? "%d" : "-", r->root);
        snprintf(wrong, sizeof wrong, r->wrong >= 0 ? "%ld" : "N/A", r->wrong);
        const char *host = r->slowest_rank >= 0 && (size_t)r->slowest_rank < rep->nlisted &&
                                   rep->ranks[r->slowest_rank].hostname
                               ? rep->ranks[r->slowest_rank].hostname
                               : "?";
        char spread[32];
        spread_text(spread, sizeof spread, r->busbw_spread);
        /* the spread column is 6 wide on screen; its "±" takes two bytes */
        fprintf(f, "  %10zu %12zu %8s %6s %4s %14s %5s %9.2f %8.3f %8.3f %7s %7s %6s  %d %s %.2fx", r->bytes,
                r->count, cf_smoke_doc_dtype_name(r->dtype), cf_smoke_doc_redop_name(r->redop), root,
                cf_smoke_doc_op_name(r->op), r->in_place ? "in" : "out", r->time_us, r->algbw, r->busbw, spread,
                wrong, r->ok ? "ok" : "FAIL",
                r->slowest_rank, cli_safe(host), r->median_us > 0 ? r->slowest_us / r->median_us : 0.0);
        if (groups)
            fprintf(f, "  group %d", r->group);
        fputc('\n', f);
    }
}

static void print_footer(FILE *f, const struct cf_smoke_doc *rep)
{
    /* nccl-tests' footer, its words */
    fprintf(f, "# %-20s : %ld %s\n", "Out of bounds values", rep->out_of_bounds, rep->out_of_bounds ? "FAILED" : "OK");
    fprintf(f, "# %-20s : %g\n", "Avg bus bandwidth", rep->avg_busbw);
    if (rep->skipped)
        fprintf(f, "# skipped: %s\n", cli_safe(rep->skipped));
    for (size_t i = 0; i < rep->ngroups; i++) {
        const struct cf_smoke_group *g = &rep->groups[i];
        char spread[32];
        spread_text(spread, sizeof spread, g->busbw_spread);
        fprintf(f, "# group %d (round %d): %s, %d ranks on %d host%s: %ld tests, busbw %.3f GB/s %s (median), avg %.3f GB/s%s%s%s\n",
                g->id, g->round, cli_safe(g->label), g->nranks, g->nhosts, g->nhosts == 1 ? "" : "s", g->tests,
                g->busbw_median, spread, g->avg_busbw, g->bad ? " BAD" : !g->conclusive ? " UNDECIDED" : "",
                g->why[0] ? ": " : "", cli_safe(g->why));
    }
    if (rep->network)
        fprintf(f, "# network: %s\n", cli_safe(rep->network));
    for (size_t i = 0; i < rep->nconns; i++)
        fprintf(f, "# transport: rank %d -> %d via %s (%d channel%s)\n", rep->conns[i].rank, rep->conns[i].peer,
                cli_safe(rep->conns[i].via), rep->conns[i].channels, rep->conns[i].channels == 1 ? "" : "s");
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

static int parse_redop(const char *s, int *v)
{
    enum cf_smoke_redop r;
    if (cf_smoke_redop_parse(s, &r))
        return -1;
    *v = (int)r;
    return 0;
}

static int parse_number(const char *flag, const char *what, const char *s, double min, double max, double *out)
{
    cf_error err = CF_ERROR_INIT;
    return cli_decimal(flag, what, s, min, max, out, &err) ? cli_usage_fail("smoke", &err) : 0;
}

static int parse_whole(const char *flag, const char *s, long long min, long long max, long long *out)
{
    cf_error err = CF_ERROR_INIT;
    return cli_whole(flag, "a whole number", s, min, max, out, &err) ? cli_usage_fail("smoke", &err) : 0;
}

/* a message size, up to the document's bound (a petabyte) */
static int parse_size_flag(const char *flag, const char *s, uint64_t min, size_t *out)
{
    cf_error err = CF_ERROR_INIT;
    uint64_t v;
    if (cli_size(flag, s, min, CF_SMOKE_BYTES_MAX, &v, &err))
        return cli_usage_fail("smoke", &err);
    *out = (size_t)v;
    return 0;
}

/* one word out of a table of names */
static int parse_word(const char *flag, const char *s, const char *const *names, size_t n, int *out)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && !strcmp(s, names[i])) {
            *out = (int)i;
            return 0;
        }
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < n; i++)
        if (names[i])
            cf_sb_addf(&sb, "%s%s", sb.len ? ", " : "", names[i]);
    int rc = cli_usage("smoke", "%s '%s': expected %s", flag, s, cf_sb_str(&sb));
    cf_sb_release(&sb);
    return rc;
}

enum {
    OPT_BACKEND = 256, OPT_LIB, OPT_RUNTIME, OPT_MPIRUN, OPT_MPI_LIB, OPT_CONNECT_TIMEOUT, OPT_OPS, OPT_ITERS, OPT_PLACE,
    OPT_JSON, OPT_PATTERN, OPT_MIN_BUSBW, OPT_EXPECT_TRANSPORT, OPT_REPORT
};

/* The flags that take a whole number into an int of the options: 1 when c
 * is one (and its value is good), 0 when it is not one, -1 on a usage error. */
static int whole_flag(int c, const char *arg, struct cf_smoke_opts *o)
{
    static const struct {
        int c;
        const char *flag;
        int min, max;
        size_t field;
    } flags[] = {
        { 'n', "-n", 1, 4096, offsetof(struct cf_smoke_opts, nranks) },
        { 'w', "-w", 0, 1000000, offsetof(struct cf_smoke_opts, warmup_iters) },
        { OPT_ITERS, "--iters", 1, 10000000, offsetof(struct cf_smoke_opts, iters) },
        { 'c', "-c", 0, 1000, offsetof(struct cf_smoke_opts, check) },
        { 'z', "-z", 0, 1, offsetof(struct cf_smoke_opts, blocking) },
        { 'G', "-G", 0, 100000, offsetof(struct cf_smoke_opts, graph_launches) },
        { 'R', "-R", 0, 1, offsetof(struct cf_smoke_opts, registration) },
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (flags[i].c != c)
            continue;
        long long v;
        if (parse_whole(flags[i].flag, arg, flags[i].min, flags[i].max, &v))
            return -1;
        *(int *)((char *)o + flags[i].field) = (int)v;
        return 1;
    }
    return 0;
}

/* The flags that take one word of a list (--backend, --place, --pattern,
 * --expect-transport): 1, 0 or -1 as whole_flag. */
static int word_flag(int c, const char *arg, struct cf_smoke_opts *o)
{
    static const char *const backends[] = { [CF_BACKEND_NCCL] = "nccl", [CF_BACKEND_RCCL] = "rccl",
                                            [CF_BACKEND_MPI] = "mpi" };
    static const char *const placements[] = { [CF_PLACE_OUT] = "out", [CF_PLACE_IN] = "in",
                                              [CF_PLACE_OUT | CF_PLACE_IN] = "both" };
    /* the library's own words for patterns and transports, listed when one is wrong */
    const char *patterns[CF_PATTERN_BISECT + 1], *transports[CF_TRANSPORT_SHM + 1];
    int word;
    switch (c) {
    case OPT_BACKEND:
        if (parse_word("--backend", arg, backends, 3, &word))
            return -1;
        o->backend = (enum cf_smoke_backend_kind)word;
        return 1;
    case OPT_PLACE:
        if (parse_word("--place", arg, placements, 4, &word))
            return -1;
        o->places = (unsigned)word;
        return 1;
    case OPT_PATTERN:
        for (int i = 0; i <= CF_PATTERN_BISECT; i++)
            patterns[i] = cf_smoke_pattern_name((enum cf_smoke_pattern)i);
        if (cf_smoke_pattern_parse(arg, &o->pattern) &&
            parse_word("--pattern", arg, patterns, CF_PATTERN_BISECT + 1, &word))
            return -1;
        return 1;
    case OPT_EXPECT_TRANSPORT:
        for (int i = 0; i <= CF_TRANSPORT_SHM; i++)
            transports[i] = i == CF_TRANSPORT_ANY ? NULL : cf_smoke_transport_name((enum cf_smoke_transport)i);
        if (cf_smoke_transport_parse(arg, &o->expect_transport) &&
            parse_word("--expect-transport", arg, transports, CF_TRANSPORT_SHM + 1, &word))
            return -1;
        return 1;
    default: return 0;
    }
}

static int parse_args(int argc, char **argv, struct cf_smoke_opts *o, struct smoke_cli *cli)
{
    static const struct option longopts[] = {
        { "backend", required_argument, NULL, OPT_BACKEND },
        { "lib", required_argument, NULL, OPT_LIB },
        { "runtime", required_argument, NULL, OPT_RUNTIME },
        { "nranks", required_argument, NULL, 'n' },
        { "mpirun", required_argument, NULL, OPT_MPIRUN },
        { "mpi-lib", required_argument, NULL, OPT_MPI_LIB },
        { "timeout", required_argument, NULL, 'T' },
        { "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
        { "ops", required_argument, NULL, OPT_OPS },
        { "dtype", required_argument, NULL, 'd' },
        { "op", required_argument, NULL, 'o' },
        { "root", required_argument, NULL, 'r' },
        { "minbytes", required_argument, NULL, 'b' },
        { "maxbytes", required_argument, NULL, 'e' },
        { "stepfactor", required_argument, NULL, 'f' },
        { "stepbytes", required_argument, NULL, 'i' },
        { "warmup", required_argument, NULL, 'w' },
        { "iters", required_argument, NULL, OPT_ITERS },
        { "check", required_argument, NULL, 'c' },
        { "place", required_argument, NULL, OPT_PLACE },
        { "average", required_argument, NULL, 'a' },
        { "blocking", required_argument, NULL, 'z' },
        { "cudagraph", required_argument, NULL, 'G' },
        { "register", required_argument, NULL, 'R' },
        { "pattern", required_argument, NULL, OPT_PATTERN },
        { "min-busbw", required_argument, NULL, OPT_MIN_BUSBW },
        { "expect-transport", required_argument, NULL, OPT_EXPECT_TRANSPORT },
        { "json", no_argument, NULL, OPT_JSON },
        { "report", required_argument, NULL, OPT_REPORT },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long long whole = 0; /* gcc 12 at -O3 (the sdist's Release build) warns it may be unset */
    int c, done, factor_given = 0, bytes_given = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":n:T:d:o:r:b:e:f:i:w:c:a:z:G:R:h", longopts, NULL)) != -1) {
        if ((done = whole_flag(c, optarg, o)) == 0)
            done = word_flag(c, optarg, o);
        if (done < 0)
            return EXIT_USAGE;
        if (done)
            continue;
        switch (c) {
        case OPT_LIB: o->lib_path = optarg; break;
        case OPT_RUNTIME: o->runtime_path = optarg; break;
        case OPT_MPIRUN: o->mpirun = optarg; break;
        case OPT_MPI_LIB: o->mpi_lib = optarg; break;
        case 'T':
            if (parse_number("--timeout", "a number of seconds", optarg, 0.1, 86400, &o->op_timeout_s))
                return EXIT_USAGE;
            break;
        case OPT_CONNECT_TIMEOUT:
            if (parse_number("--connect-timeout", "a number of seconds", optarg, 0.1, 86400, &o->connect_timeout_s))
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
        case 'o':
            if (parse_list("reduction (sum, prod, max, min, avg)", optarg, (1u << CF_RED_COUNT) - 1, parse_redop,
                           &o->redops))
                return EXIT_USAGE;
            break;
        case 'r':
            if (!strcmp(optarg, "all") || !strcmp(optarg, "-1"))
                o->root = -1;
            else if (parse_whole("-r", optarg, 0, 1 << 24, &whole))
                return EXIT_USAGE;
            else
                o->root = (int)whole;
            break;
        case 'b':
            if (parse_size_flag("-b", optarg, 0, &o->sweep.min_bytes))
                return EXIT_USAGE;
            break;
        case 'e':
            if (parse_size_flag("-e", optarg, 0, &o->sweep.max_bytes))
                return EXIT_USAGE;
            break;
        case 'f':
            /* nccl-tests reads -f as a whole number (strtol): 1.5 would be 1 there */
            if (parse_whole("-f", optarg, 1, 1024, &whole))
                return EXIT_USAGE;
            o->sweep.step_factor = (size_t)whole;
            factor_given = 1;
            break;
        case 'i':
            /* from 1: a step of 0 would never grow the size */
            if (parse_size_flag("-i", optarg, 1, &o->sweep.step_bytes))
                return EXIT_USAGE;
            bytes_given = 1;
            break;
        case 'a':
            if (parse_whole("-a", optarg, 0, 3, &whole))
                return EXIT_USAGE;
            o->average = (enum cf_smoke_average)whole;
            break;
        case OPT_MIN_BUSBW:
            if (parse_number("--min-busbw", "a bandwidth in GB/s", optarg, 0, CF_SMOKE_BUSBW_MAX, &o->min_busbw))
                return EXIT_USAGE;
            break;
        case OPT_JSON: cli->json = 1; break;
        case OPT_REPORT:
            if (!optarg[0])
                return cli_usage("smoke", "--report needs a file name");
            cli->report = optarg;
            break;
        case 'h': usage(stdout); return -1;
        case ':': return cli_usage("smoke", "%s needs a value", argv[optind - 1]);
        default: return cli_usage("smoke", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("smoke", "unexpected argument '%s'", argv[optind]);
    if (o->sweep.min_bytes > o->sweep.max_bytes)
        return cli_usage("smoke", "-b (%zu) is larger than -e (%zu)", o->sweep.min_bytes, o->sweep.max_bytes);
    /* -i alone steps by bytes, as in nccl-tests (whose -f defaults to 1); -f wins when both are given */
    if (bytes_given && !factor_given)
        o->sweep.step_factor = 1;
    return 0;
}

static void print_text(FILE *f, const struct cf_smoke_doc *rep, const struct cf_pair_matrix *m, int matrix,
                       const char *report_path)
{
    print_table(f, rep);
    print_footer(f, rep);
    if (m && matrix)
        cli_smoke_matrix_print(f, m, report_path);
    for (size_t i = 0; i < rep->nfailures; i++) {
        const struct cf_smoke_failure *fail = &rep->failures[i];
        if (fail->rank >= 0)
            cli_error("smoke", "rank %d failed while %s: %s", fail->rank, fail->doing[0] ? fail->doing : "starting",
                      fail->reason);
        else
            cli_error("smoke", "%s", fail->reason);
    }
    for (size_t i = 0; i < rep->nproblems; i++)
        cli_error("smoke", "%s", rep->problems[i].reason);
    /* a run without a verdict has none: never read as passed */
    fprintf(f, "verdict: %s\n", rep->verdict ? cli_safe(rep->verdict) : "unknown");
    if (m && !m->conclusive)
        fprintf(f, "inconclusive: %s\n", m->inconclusive_why ? cli_safe(m->inconclusive_why) : "no reason given");
    if (m && m->nbad)
        fprintf(f, "exclude: %s\n", cli_safe(m->exclude));
    fprintf(f, "%ld passed, %ld failed\n", rep->passed, rep->failed);
}

/* The run's document (one model for text, JSON and HTML, its host matrix built
 * once), then the text or the JSON, and the HTML file. Returns the exit status. */
static int report_out(const struct cf_smoke_report *rep, struct smoke_cli *cli, int code)
{
    struct cf_pair_matrix m;
    cf_error err = CF_ERROR_INIT;
    int have_m = cf_smoke_doc_of_run(&cli->doc, rep, code == EXIT_FINE, &m, &err) == 0;
    if (!have_m) { /* more hosts than a matrix draws */
        cli_error("smoke", "the host matrix: %s", cf_error_message(&err));
        cf_error_clear(&err);
    }
    char *s = cli->json || cli->report ? cf_smoke_doc_json(&cli->doc, 0) : NULL;
    if (!cli->json) {
        print_text(cli->out, &cli->doc, have_m ? &m : NULL, cli->pairwise, cli->report);
    } else {
        fputs(s, cli->out);
        fputc('\n', cli->out);
    }
    fflush(cli->out);
    if (cli->report && (!have_m || cli_smoke_report_write("smoke", &cli->doc, &m, s, cli->report) != EXIT_FINE))
        code = EXIT_PROBLEMS;
    free(s);
    if (have_m)
        cf_pair_matrix_release(&m);
    return code;
}

/* The report goes to a stream of our own on fd 1, line-buffered: each line leaves in
 * one write. A library may change `stdout` itself (Intel MPI's MPI_Init makes it
 * unbuffered), and a launcher that forwards every rank's output (Hydra) would then
 * splice another rank's line into the middle of ours. NULL with errno. */
static FILE *open_report(int json)
{
    static char report_buf[1 << 16];
    fflush(stdout);
    int fd = dup(1);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return NULL;
    }
    setvbuf(f, report_buf, json ? _IOFBF : _IOLBF, sizeof report_buf);
    return f;
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
    /* the ranks started again get these arguments, so keep them before getopt permutes */
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
    cli.out = open_report(cli.json);
    if (!cli.out) {
        cf_strvec_clear(&self_args);
        cli_error("smoke", "standard output cannot carry the report: %s", strerror(errno));
        return EXIT_PROBLEMS;
    }
    char *self = cf_self_exe();
    o.self_exe = self;
    o.self_argv = self_args.v;
    o.envp = environ;
    o.stop = &stop_signal;
    cli.pairwise = o.pattern == CF_PATTERN_PAIRWISE;
    int role = cf_smoke_role_for(&o, NULL);
    if (role == CF_ROLE_SUPERVISOR) {
        /* Ctrl-C (or a job's SIGTERM) stops the ranks and still prints what was found */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    cf_smoke_doc_init(&cli.doc);
    if (cli.json) {
        /* whatever a library prints on stdout (NCCL_DEBUG without a file) goes to stderr:
         * our stream carries the one JSON document */
        dup2(2, 1);
    }

    struct cf_smoke_report rep;
    rc = cf_smoke_run(&o, on_event, &cli, &rep, &err);
    cf_strvec_clear(&self_args);
    free(self);
    if (rc < 0) {
        cf_smoke_doc_release(&cli.doc);
        fclose(cli.out);
        return cli_fail("smoke", &err);
    }
    int code = rep.failed || rep.aborted ? EXIT_PROBLEMS : EXIT_FINE;
    if (rep.role == CF_ROLE_SUPERVISED_RANK) {
        /* the supervisor reports; this rank only says whether it got through */
        code = rep.aborted ? EXIT_PROBLEMS : EXIT_FINE;
    } else if (rep.role == CF_ROLE_RANK && rep.rank != 0) {
        /* under a launcher rank 0 prints the agreed table and gives the verdict's exit
         * status; another rank failing the job for a test that failed everywhere would
         * have the launcher kill rank 0 before it says what failed */
        code = rep.aborted ? EXIT_PROBLEMS : EXIT_FINE;
    } else {
        code = report_out(&rep, &cli, code);
    }
    fclose(cli.out);
    cf_smoke_doc_release(&cli.doc);
    int is_rank = rep.role != CF_ROLE_SUPERVISOR, leave_by_exit = rep.leave_by_exit;
    /* out before the release runs a rank's MPI_Finalize (after it Hydra may drop it) */
    fflush(stdout);
    fflush(stderr);
    cf_smoke_report_release(&rep);
    if (is_rank) {
        /* A rank may have run MPI (the backend, or the unique-id broadcast): Open MPI
         * unloads its components in MPI_Finalize, leaving allocations that no leak
         * checker can attribute or suppress. What was to be said is said: leave now,
         * unless the library's exit handlers tell its launcher that the rank ended. */
        fflush(stdout);
        fflush(stderr);
        if (leave_by_exit)
            exit(code);
        _exit(code);
    }
    return code;
}
