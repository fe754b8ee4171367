/* cclforge report: remake a report from saved --json documents, by their schema. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/hang.h"
#include "cclforge/json.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/strbuf.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/doctor_hosts.h"
#include "cli/smoke_out.h"

/* a saved document is read whole; a pairwise run over 1,024 hosts writes ~100 MB */
#define DOC_MAX (1ull << 30)

static void usage(FILE *f)
{
    fprintf(f, "usage: cclforge report [-o OUT.html] DOC.json...\n"
               "\n"
               "Makes the HTML report of saved --json documents, as the run's own --report would have:\n"
               "one self-contained file (inline CSS and SVG, no network, readable without JavaScript).\n"
               "What it draws follows the document's \"schema\":\n"
               "  cclforge.smoke/2   one `cclforge smoke --json` document: the verdict, the bad hosts and\n"
               "                     their Slurm hostlist, the host x host busbw matrix (--pattern pairwise),\n"
               "                     each pair against its path's capacity (else the median pair),\n"
               "                     the run's facts, the document\n"
               "  cclforge.doctor/1  one host's `cclforge doctor --json`: its topology drawn (GPUs, NICs,\n"
               "                     PCIe switches, NUMA nodes, NVLink) with the link-class matrix;\n"
               "                     several hosts' documents: the hosts side by side, hosts alike collapsed,\n"
               "                     every value that differs with the hosts that have it\n"
               "  cclforge.doctor-gather/1  one `cclforge doctor --gather --json`: the hosts side by side\n"
               "  cclforge.hang/1    one `cclforge hang --json`: the verdict, the groups, a lane per rank\n"
               "\n"
               "Options:\n"
               "  -o, --output FILE  where to write the report (default report.html), replaced atomically\n"
               "  -h, --help         this help\n"
               CLI_HELP_COLOR("     ")
               "Exit status: 0 written, 1 a document could not be read or the report not written,\n"
               "2 usage error (no document, an unknown schema, documents of different kinds, more than one\n"
               "smoke or gather document, a document with a missing section or an impossible value: the\n"
               "message names its field, e.g. rows[3].bytes).\n"
               "Examples:\n"
               "  cclforge smoke --pattern pairwise --json > run.json; cclforge report -o run.html run.json\n"
               "  cclforge report -o hosts.html node01.json node02.json node03.json\n");
}

static int read_doc(const char *path, cJSON **doc, struct strbuf *text)
{
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, DOC_MAX, text, &err) < 0)
        return cli_fail("report", &err);
    *doc = cJSON_ParseWithLength(text->buf, text->len);
    if (!*doc) {
        cli_error("report", "%s: not a JSON document (write it with --json)", cli_safe(path));
        return EXIT_PROBLEMS;
    }
    return EXIT_FINE;
}

/* A saved smoke document: its model (a value the reader refuses is the user's
 * to fix: exit 2), its matrix, the page. */
static int smoke_report(const char *path, const cJSON *json, const char *text, const char *out)
{
    struct cf_smoke_doc d;
    struct cf_pair_matrix m;
    cf_error err = CF_ERROR_INIT;
    if (cf_smoke_doc_open(json, &d, &m, &err) < 0) {
        int refused = err.kind == CF_ERR_FORMAT;
        cf_error_prefix(&err, "%s", path);
        cli_fail("report", &err);
        return refused ? EXIT_USAGE : EXIT_PROBLEMS;
    }
    int rc = cli_smoke_report_write("report", &d, &m, text, out);
    cf_pair_matrix_release(&m);
    cf_smoke_doc_release(&d);
    return rc;
}

/* A saved hang document: its model, the page the run would have written. */
static int hang_report(const char *path, const cJSON *json, const char *out)
{
    struct cf_hang_result r;
    cf_error err = CF_ERROR_INIT;
    if (cf_hang_from_json(json, &r, &err) < 0) {
        cf_error_prefix(&err, "%s", path);
        cli_fail("report", &err);
        return EXIT_USAGE;
    }
    int rc = cli_hang_page_write("report", &r, out);
    cf_hang_release(&r);
    return rc;
}

/* The report the documents' schema calls for: every document of one kind. */
static int make_report(char **paths, cJSON **docs, struct strbuf *texts, size_t n, const char *out)
{
    static const char *const known[] = { "cclforge.smoke/2", "cclforge.doctor/1", "cclforge.doctor-gather/1",
                                         CF_HANG_SCHEMA };
    const char *schema = cf_json_str(docs[0], "schema");
    size_t kind = 0;
    while (kind < sizeof known / sizeof *known && !(schema && !strcmp(schema, known[kind])))
        kind++;
    if (kind == sizeof known / sizeof *known)
        return cli_usage("report", "%s: schema %s is not one a report is made of (%s, %s, %s or %s)",
                         cli_safe(paths[0]), schema ? cli_safe(schema) : "(none)", known[0], known[1], known[2],
                         known[3]);
    for (size_t i = 1; i < n; i++) {
        const char *other = cf_json_str(docs[i], "schema");
        if (!other || strcmp(other, schema))
            return cli_usage("report", "%s is %s, %s is %s: one report is made of documents of one kind",
                             cli_safe(paths[0]), schema, cli_safe(paths[i]), other ? cli_safe(other) : "(no schema)");
    }
    if (kind != 1 && n > 1)
        return cli_usage("report", "one %s document at a time (%zu given)", schema, n);
    int rc;
    cf_error err = CF_ERROR_INIT;
    if (kind == 0)
        rc = smoke_report(paths[0], docs[0], texts[0].buf, out);
    else if (kind == 3)
        rc = hang_report(paths[0], docs[0], out);
    else if (doctor_write_saved(out, (const cJSON *const *)docs, n, 1, &err) < 0)
        /* a document the strict reader refuses is the user's to fix, as doctor compare says */
        rc = err.kind == CF_ERR_FORMAT ? (cli_fail("report", &err), EXIT_USAGE) : cli_fail("report", &err);
    else
        rc = EXIT_FINE;
    if (rc == EXIT_FINE)
        printf("report: %s\n", cli_safe(out));
    return rc;
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return EXIT_FINE;
    }
    const char *out = "report.html";
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'h': usage(stdout); return EXIT_FINE;
        case ':': return cli_usage("report", "%s needs a value", argv[optind - 1]);
        default: return cli_usage("report", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage("report", "no document given: cclforge report [-o OUT.html] DOC.json...");
    size_t n = (size_t)(argc - optind);
    cJSON **docs = cf_xcalloc(n, sizeof *docs);
    struct strbuf *texts = cf_xcalloc(n, sizeof *texts);
    int rc = EXIT_FINE;
    for (size_t i = 0; i < n && rc == EXIT_FINE; i++)
        rc = read_doc(argv[optind + (int)i], &docs[i], &texts[i]);
    if (rc == EXIT_FINE)
        rc = make_report(argv + optind, docs, texts, n, out);
    for (size_t i = 0; i < n; i++) {
        cJSON_Delete(docs[i]);
        cf_sb_release(&texts[i]);
    }
    free(docs);
    free(texts);
    return rc;
}
