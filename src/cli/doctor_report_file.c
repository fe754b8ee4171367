/* Writing doctor's HTML reports (the library builds them, cclforge/doctor_report.h):
 * which topology file is drawn, and the file written whole or not at all. */
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cclforge/gather.h"
#include "cclforge/report.h"
#include "cclforge/fs.h"
#include "cli/cli.h"
#include "cli/doctor_hosts.h"

static int write_report(const char *path, const struct strbuf *html, int quiet, cf_error *err)
{
    if (cf_write_file_atomic(path, html->buf ? html->buf : "", html->len, err) < 0)
        return cf_error_prefix(err, "--report");
    if (!quiet)
        fprintf(stderr, "cclforge doctor: report written to %s (%zu KiB)\n", path, (html->len + 1023) / 1024);
    return 0;
}

const char *doctor_topo_file(const char *given, const char **why)
{
    const char *f;
    *why = "--topo-file";
    if (given)
        return given;
    *why = "NCCL_TOPO_FILE";
    if ((f = getenv("NCCL_TOPO_FILE")) && *f)
        return f;
    *why = "NCCL_TOPO_DUMP_FILE";
    if ((f = getenv("NCCL_TOPO_DUMP_FILE")) && *f && cf_is_file(f))
        return f; /* NCCL's dump of an earlier run; before one there is none */
    *why = NULL;
    return NULL;
}

int doctor_write_topology(const char *path, const struct cf_survey *s, const char *topo_file, int quiet, cf_error *err)
{
    struct strbuf html = STRBUF_INIT;
    int rc = cf_doctor_topology_html(s->fabric, s->hostname, topo_file, &html, err);
    if (rc < 0 && topo_file)
        err->kind = CF_ERR_USAGE; /* the file the user named cannot be drawn */
    if (rc == 0)
        rc = write_report(path, &html, quiet, err);
    cf_sb_release(&html);
    return rc;
}

int doctor_write_gather(const char *path, const struct cf_gather_result *r, int quiet, cf_error *err)
{
    struct strbuf html = STRBUF_INIT;
    const char **labels = cf_gather_labels(r);
    struct cf_hosts_view v = { labels, r->n_hosts, &r->report, &r->missing };
    cf_doctor_hosts_html(&v, &html);
    free(labels);
    int rc = write_report(path, &html, quiet, err);
    cf_sb_release(&html);
    return rc;
}

int doctor_write_saved(const char *path, const cJSON *const *docs, size_t n, int quiet, cf_error *err)
{
    struct strbuf html = STRBUF_INIT;
    int rc = cf_doctor_saved_html(docs, n, &html, err);
    if (rc == 0)
        rc = write_report(path, &html, quiet, err);
    cf_sb_release(&html);
    return rc;
}
