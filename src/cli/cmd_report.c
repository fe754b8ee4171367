/* cclforge report: remake a report from saved --json documents, by their schema. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/json.h"
#include "cclforge/strbuf.h"
#include "cli/builtin.h"
#include "cli/cli.h"
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
               "                     each pair against the median pair, the run's facts, the document\n"
               "  cclforge.doctor/1  not yet: exits 2\n"
               "\n"
               "Options:\n"
               "  -o, --output FILE  where to write the report (default report.html), replaced atomically\n"
               "  -h, --help         this help\n"
               "Exit status: 0 written, 1 a document could not be read or the report not written,\n"
               "2 usage error (no document, an unknown schema, more than one smoke document).\n"
               "Examples:\n"
               "  cclforge smoke --pattern pairwise --json > run.json; cclforge report -o run.html run.json\n");
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
    if (argc - optind > 1)
        return cli_usage("report", "one smoke document at a time (%d given); a report over several "
                                   "doctor documents is not made yet", argc - optind);
    const char *path = argv[optind];
    cJSON *doc = NULL;
    struct strbuf text = STRBUF_INIT;
    int rc = read_doc(path, &doc, &text);
    if (rc) {
        cf_sb_release(&text);
        return rc;
    }
    const char *schema = cf_json_str(doc, "schema");
    if (schema && !strcmp(schema, "cclforge.smoke/2")) {
        rc = cli_smoke_report_write("report", doc, text.buf, path, out);
        if (rc == EXIT_FINE)
            printf("report: %s\n", cli_safe(out));
    } else if (schema && !strcmp(schema, "cclforge.doctor/1")) {
        rc = cli_usage("report", "%s: a report of doctor documents is not made yet", cli_safe(path));
    } else {
        rc = cli_usage("report", "%s: schema %s is not one a report is made of (cclforge.smoke/2)", cli_safe(path),
                       schema ? cli_safe(schema) : "(none)");
    }
    cJSON_Delete(doc);
    cf_sb_release(&text);
    return rc;
}
