/* cclforge hang: which rank stopped, at which collective, from every rank's
 * Flight Recorder dump; `cclforge hang env`: what a job needs to leave them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/fs.h"
#include "cclforge/hang.h"
#include "cclforge/report.h"
#include "cclforge/strbuf.h"
#include "cli/builtin.h"
#include "cli/cli.h"

/* a saved smoke or gather document is read whole */
#define DOC_MAX (1ull << 30)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cclforge hang [options] DIR|FILE...\n"
            "       cclforge hang env\n"
            "\n"
            "Reads every rank's PyTorch Flight Recorder dump (torch's pickle or its JSON, told apart by\n"
            "content; a directory's files that are neither are passed over) and says which rank stopped,\n"
            "at which collective of which group, why (never entered it, another op, other sizes or dtypes,\n"
            "another state), since when and where in the user's code; then every later divergence.\n"
            "A pickle is read by cclforge's own reader of data opcodes: nothing in a dump is executed.\n"
            "The rank is the file name's trailing integer (before .pkl/.json), else the dump's \"rank\".\n"
            "\n"
            "Options:\n"
            "  --json               the cclforge.hang/1 document on stdout instead of the text\n"
            "  --report FILE.html   also write the page: one lane per rank, grouped by host\n"
            "  --prefix TEXT        only files whose name holds TEXT; the text around it and the rank\n"
            "                       (e.g. node17.nccl_trace_rank_3 with --prefix nccl_trace_rank_) is the host\n"
            "  --hosts HOSTLIST     the job's hosts as Slurm writes them (node[01-16]), with\n"
            "  --ranks-per-node N   ranks per host: rank r ran on host r/N, GPU r%%N\n"
            "  --job DOC.json       a saved `cclforge smoke --json` or `cclforge doctor --gather --json`\n"
            "                       of the same job: where each rank ran\n"
            "  -h, --help           this help\n"
            CLI_HELP_COLOR("       ")
            "\n"
            "`cclforge hang env` prints the variables a job needs to leave dumps on a timeout, for the\n"
            "torch Python finds (TORCH_FR_BUFFER_SIZE, TORCH_FR_DUMP_TEMP_FILE, TORCH_NCCL_DUMP_ON_TIMEOUT).\n"
            "\n"
            "Exit status: 0 every group consistent, 1 a divergence or a rank without a dump,\n"
            "2 usage error or no dump readable.\n"
            "Examples:\n"
            "  cclforge hang /shared/fr-dumps/\n"
            "  cclforge hang --hosts 'node[01-04]' --ranks-per-node 8 --report hang.html /shared/fr-dumps/\n");
}

/* each line of the library's text, its untrusted bytes (names from the dumps) made safe */
static void print_lines(char *text)
{
    for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        puts(cli_safe(line));
    }
}

int cli_hang_page_write(const char *cmd, const struct cf_hang_result *r, const char *path)
{
    struct strbuf html = STRBUF_INIT;
    cJSON *doc = cf_hang_to_json(r);
    char *json = cJSON_PrintUnformatted(doc);
    cf_hang_report_html(r, json, &html);
    cJSON_free(json);
    cJSON_Delete(doc);
    cf_error err = CF_ERROR_INIT;
    int rc = cf_write_file_atomic(path, html.buf, html.len, &err);
    cf_sb_release(&html);
    if (rc < 0) {
        cli_error(cmd, "the report: %s", cf_error_message(&err));
        return EXIT_PROBLEMS;
    }
    return EXIT_FINE;
}

static int map_from_doc(struct cf_hang_result *r, const char *path)
{
    struct strbuf text = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_read_file(path, DOC_MAX, &text, &err);
    if (rc == 0)
        rc = cf_hang_hosts_from_doc(r, text.buf, text.len, &err);
    cf_sb_release(&text);
    if (rc < 0) {
        cf_error_prefix(&err, "--job %s", path);
        return cli_usage_fail("hang", &err);
    }
    return EXIT_FINE;
}

int cmd_hang(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "report", required_argument, NULL, 'r' },
        { "prefix", required_argument, NULL, 'p' },
        { "hosts", required_argument, NULL, 'H' },
        { "ranks-per-node", required_argument, NULL, 'n' },
        { "job", required_argument, NULL, 'J' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    if (argc >= 2 && !strcmp(argv[1], "env"))
        return cmd_hang_env(argc - 1, argv + 1);
    int json = 0;
    const char *report = NULL, *job = NULL;
    struct cf_hang_options opt = { NULL, NULL, 0 };
    long long rpn = 0;
    cf_error err = CF_ERROR_INIT;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'r': report = optarg; break;
        case 'p': opt.prefix = optarg; break;
        case 'H': opt.hosts = optarg; break;
        case 'J': job = optarg; break;
        case 'n':
            if (cli_whole("--ranks-per-node", "ranks", optarg, 1, 1 << 16, &rpn, &err) < 0)
                return cli_usage_fail("hang", &err);
            opt.ranks_per_node = (int)rpn;
            break;
        case 'h': usage(stdout); return EXIT_FINE;
        default: return cli_usage("hang", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage("hang", "no dump given (a directory of per-rank dumps, or the files)");
    if (!opt.hosts != !opt.ranks_per_node)
        return cli_usage("hang", "--hosts and --ranks-per-node go together");
    if (opt.hosts && job)
        return cli_usage("hang", "--hosts and --job both say where ranks ran: give one");
    struct cf_hang_result r;
    memset(&r, 0, sizeof r);
    if (cf_hang_read((const char *const *)argv + optind, (size_t)(argc - optind), &opt, &r, &err) < 0) {
        cf_hang_release(&r);
        return cli_usage_fail("hang", &err);
    }
    cf_hang_analyse(&r);
    int rc = EXIT_FINE;
    if (opt.hosts && cf_hang_hosts_from_list(&r, opt.hosts, opt.ranks_per_node, &err) < 0)
        rc = cli_usage_fail("hang", &err);
    if (rc == EXIT_FINE && job)
        rc = map_from_doc(&r, job);
    if (rc != EXIT_FINE) {
        cf_hang_release(&r);
        return rc;
    }
    if (json) {
        cli_print_json(cf_hang_to_json(&r));
    } else {
        struct strbuf text = STRBUF_INIT;
        cf_hang_text(&r, &text);
        print_lines(text.buf);
        cf_sb_release(&text);
    }
    rc = cf_hang_exit_code(&r);
    if (report && cli_hang_page_write("hang", &r, report) != EXIT_FINE)
        rc = rc == EXIT_FINE ? EXIT_PROBLEMS : rc;
    cf_hang_release(&r);
    return rc;
}

int cmd_hang_env(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "python", required_argument, NULL, 'p' },
        { "torch", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *python = NULL, *torch = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': python = optarg; break;
        case 't': torch = optarg; break;
        case 'h':
            printf("usage: cclforge hang env [--python PY | --torch VERSION]\n\n"
                   "Prints the variables a job exports so that every rank leaves its Flight Recorder dump\n"
                   "when a collective times out, as shell lines (eval \"$(cclforge hang env)\").\n"
                   "\n"
                   "Options:\n"
                   "  --python PY        name them as the torch PY imports reads them (default python3)\n"
                   "  --torch VERSION    name them as torch VERSION reads them (no Python run)\n"
                   "  -h, --help         this help\n"
                   CLI_HELP_COLOR("     ")
                   "Exit status: 0 printed, 2 usage error.\n");
            return EXIT_FINE;
        default: return cli_usage("hang env", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage("hang env", "unexpected argument %s", cli_safe(argv[optind]));
    char *found_by = NULL, *version = torch ? cf_strdup(torch) : cf_hang_torch_version(python, &found_by);
    struct strbuf text = STRBUF_INIT;
    cf_hang_env_text(version, &text);
    if (found_by)
        printf("# torch found by %s\n", cli_safe(found_by));
    print_lines(text.buf);
    cf_sb_release(&text);
    free(version);
    free(found_by);
    return EXIT_FINE;
}
