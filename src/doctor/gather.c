/* doctor --gather (cclforge/gather.h): rank 0 listens, every other rank sends one
 * report, rank 0 consolidates what arrived by the deadline and answers each rank
 * with the verdict. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/host.h"
#include "cclforge/clock.h"
#include "cclforge/envp.h"
#include "cclforge/gather.h"
#include "cclforge/launch.h"
#include "cclforge/launch_collect.h"
#include "cclforge/ncclconf.h"
#include "doctor/doctor_internal.h"

#define MAX_REPORT (64u << 20)
#define REPLY_SLACK_S 30.0 /* how much longer than the gather a rank waits for the verdict */


/* The blob every rank sends: {"gather": {rank, local_rank, host, leader}, ...report}. */
static int rank_blob(const struct cf_gather_opts *o, const struct cf_launch_info *le, struct strbuf *out,
                     cf_error *err)
{
    struct strbuf report = STRBUF_INIT;
    int leader = le->local_rank == 0;
    if (o->make_blob(o->ctx, leader, &report, err) < 0) {
        cf_sb_release(&report);
        return -1;
    }
    cJSON *doc = cJSON_ParseWithLength(report.buf ? report.buf : "", report.len);
    cf_sb_release(&report);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        return cf_error_set(err, CF_ERR_INTERNAL, "the report of rank %d is not JSON", le->rank);
    }
    cJSON *g = cJSON_AddObjectToObject(doc, "gather");
    cJSON_AddNumberToObject(g, "rank", le->rank);
    cJSON_AddNumberToObject(g, "local_rank", le->local_rank);
    cJSON_AddStringToObject(g, "host", le->hostname);
    cJSON_AddBoolToObject(g, "leader", leader);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    cf_sb_adds(out, text);
    free(text);
    return 0;
}

static size_t host_index(struct cf_gather_result *r, const char *host)
{
    for (size_t i = 0; i < r->n_hosts; i++)
        if (!strcmp(r->hosts[i].label, host))
            return i;
    r->hosts = cf_xrealloc(r->hosts, (r->n_hosts + 1) * sizeof *r->hosts);
    r->surveys = cf_xrealloc(r->surveys, (r->n_hosts + 1) * sizeof *r->surveys);
    r->per_host = cf_xrealloc(r->per_host, (r->n_hosts + 1) * sizeof *r->per_host);
    memset(&r->hosts[r->n_hosts], 0, sizeof r->hosts[0]);
    memset(&r->surveys[r->n_hosts], 0, sizeof r->surveys[0]);
    memset(&r->per_host[r->n_hosts], 0, sizeof r->per_host[0]);
    r->hosts[r->n_hosts].label = cf_strdup(host);
    return r->n_hosts++;
}

/* One rank's blob into the result: its host, and the host's survey when it leads. */
static void take_blob(struct cf_gather_result *r, int rank, const unsigned char *blob, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength((const char *)blob, len);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(doc, "gather");
    const char *host = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "host"));
    if (!host) {
        cf_strvec_pushf(&r->missing, "rank %d (sent no report cclforge can read)", rank);
        cJSON_Delete(doc);
        return;
    }
    size_t h = host_index(r, host);
    cf_strvec_pushf(&r->hosts[h].ranks, "%d", rank);
    r->ranks = cf_xrealloc(r->ranks, (r->n_ranks + 1) * sizeof *r->ranks);
    struct cf_gather_rank *gr = &r->ranks[r->n_ranks++];
    gr->rank = rank;
    gr->host = h;
    gr->config = NULL;
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(doc, "nccl_config");
    if (cJSON_IsObject(nc)) {
        cf_error cerr = CF_ERROR_INIT;
        gr->config = cf_xcalloc(1, sizeof *gr->config);
        if (cf_nccl_config_from_json(nc, gr->config, &cerr) < 0) {
            cf_nccl_config_release(gr->config);
            free(gr->config);
            gr->config = NULL;
        }
        cf_error_clear(&cerr);
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "leader")) && !r->hosts[h].surveyed) {
        cf_error err = CF_ERROR_INIT;
        if (cf_survey_from_json(doc, &r->surveys[h], &err) == 0 &&
            cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(doc, "findings"), "findings", &r->per_host[h],
                                  &err) == 0) {
            r->hosts[h].surveyed = 1;
        } else {
            cf_survey_release(&r->surveys[h]);
            cf_findings_release(&r->per_host[h]);
            cf_strvec_pushf(&r->missing, "rank %d on %s (its report does not load: %s)", rank, host,
                            cf_error_message(&err));
        }
        cf_error_clear(&err);
    }
    cJSON_Delete(doc);
}

/* Hosts the launcher named that no rank came from (srun's node list). */
static void name_silent_hosts(struct cf_gather_result *r, char *const *envp)
{
    const char *list = cf_envp_get(envp, "SLURM_STEP_NODELIST");
    if (!list)
        list = cf_envp_get(envp, "SLURM_JOB_NODELIST");
    struct strvec nodes = STRVEC_INIT;
    cf_error err = CF_ERROR_INIT;
    if (list && cf_slurm_hostlist_expand(list, 1 << 16, &nodes, &err) == 0)
        for (size_t i = 0; i < nodes.n; i++) {
            int heard = 0;
            for (size_t h = 0; h < r->n_hosts && !heard; h++)
                heard = !strcmp(r->hosts[h].label, nodes.v[i]) ||
                        (cf_starts_with(r->hosts[h].label, nodes.v[i]) && r->hosts[h].label[strlen(nodes.v[i])] == '.');
            if (!heard)
                cf_strvec_pushf(&r->missing, "host %s (in %s; no rank answered from it)", nodes.v[i],
                                cf_envp_get(envp, "SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST");
        }
    cf_error_clear(&err);
    cf_strvec_clear(&nodes);
}

static void consolidate(struct cf_gather_result *r, double timeout_s)
{
    /* only hosts with a survey are compared; the others are findings */
    struct cf_survey *surveys = cf_xcalloc(r->n_hosts ? r->n_hosts : 1, sizeof *surveys);
    struct cf_findings *per = cf_xcalloc(r->n_hosts ? r->n_hosts : 1, sizeof *per);
    const char **labels = cf_xcalloc(r->n_hosts ? r->n_hosts : 1, sizeof *labels);
    size_t n = 0;
    for (size_t h = 0; h < r->n_hosts; h++) {
        if (!r->hosts[h].surveyed)
            continue;
        surveys[n] = r->surveys[h]; /* shallow: owned by r */
        per[n] = r->per_host[h];
        labels[n++] = r->hosts[h].label;
    }
    cf_doctor_consolidate(surveys, labels, per, n, &r->report);
    /* every rank's NCCL variables, not only each host's local rank 0's */
    size_t before = r->report.findings.n;
    struct cf_rank_env *env = cf_xcalloc(r->n_ranks ? r->n_ranks : 1, sizeof *env);
    for (size_t i = 0; i < r->n_ranks; i++) {
        env[i].rank = r->ranks[i].rank;
        env[i].host = r->hosts[r->ranks[i].host].label;
        env[i].config = r->ranks[i].config;
    }
    cf_doctor_compare_ranks(env, r->n_ranks, &r->report.findings);
    free(env);
    for (size_t h = 0; h < r->n_hosts; h++)
        if (!r->hosts[h].surveyed)
            cf_findings_add(&r->report.findings, CF_SEV_ERROR, "host-no-survey", r->hosts[h].label,
                            "see that host's own output (cclforge doctor there)",
                            "ranks %s answered but the host's local rank 0 sent no survey", r->hosts[h].ranks.v[0]);
    for (size_t i = 0; i < r->missing.n; i++)
        cf_findings_add(&r->report.findings, CF_SEV_ERROR, "host-no-answer", r->missing.v[i],
                        "check that host (is it up, does it reach rank 0's port?), then run again",
                        "did not answer within %.0f s", timeout_s);
    if (r->strays.count) { /* named apart: a stranger is never one of the ranks */
        struct strbuf why = STRBUF_INIT;
        cf_launch_strays_describe(&r->strays, &why);
        cf_findings_add(&r->report.findings, CF_SEV_WARNING, "gather-strays", "rank 0's port",
                        "nothing was held up by them; if they were not expected, find what connects from those "
                        "addresses (a port scanner, a health check, another job) or let only the job's hosts reach "
                        "the port",
                        "%s; they were closed, and no rank was blamed for them", cf_sb_str(&why));
        cf_sb_release(&why);
    }
    cf_sort_findings(&r->report.findings);
    if (r->missing.n || !r->report.reason || r->report.findings.n != before) {
        size_t errors = cf_findings_count(&r->report.findings, CF_SEV_ERROR);
        size_t warnings = cf_findings_count(&r->report.findings, CF_SEV_WARNING);
        if (errors || warnings) {
            free(r->report.reason);
            const struct cf_finding *first = &r->report.findings.v[0];
            r->report.reason = cf_asprintf("%zu error(s), %zu warning(s) across %zu host%s; first: %s: %s", errors,
                                           warnings, r->n_hosts, r->n_hosts == 1 ? "" : "s", first->subject,
                                           first->why);
        }
    }
    free(surveys);
    free(per);
    free(labels);
}

static int run_rank0(const struct cf_gather_opts *o, const struct cf_launch_info *le, int port,
                     const struct cf_launch_secret *secret, struct cf_gather_result *out, cf_error *err)
{
    char desc[128];
    int got_port = port;
    int fd = cf_launch_listen(port, 0, &got_port, desc, sizeof desc, err);
    if (fd < 0)
        return cf_error_prefix(err, "rank 0");
    struct strbuf own = STRBUF_INIT;
    int rc = rank_blob(o, le, &own, err);
    struct cf_collected col;
    memset(&col, 0, sizeof col);
    if (rc == 0)
        cf_launch_collect(fd, secret, CF_GATHER_TAG, le->world, o->timeout_s, MAX_REPORT, &col);
    else
        close(fd);
    if (rc == 0) {
        out->strays = col.strays;
        take_blob(out, 0, (const unsigned char *)cf_sb_str(&own), own.len);
        for (int r = 1; r < le->world; r++)
            if (col.blobs[r])
                take_blob(out, r, col.blobs[r], col.lens[r]);
            else
                cf_strvec_pushf(&out->missing, "rank %d", r);
        name_silent_hosts(out, o->envp);
        consolidate(out, o->timeout_s);
        int bad = out->report.findings.n && cf_findings_worst(&out->report.findings) == CF_SEV_ERROR;
        char *reply = cf_asprintf("%d %s", bad, out->report.reason ? out->report.reason : "");
        cf_launch_collect_reply(&col, reply, strlen(reply), 5);
        free(reply);
    }
    cf_collected_release(&col);
    cf_sb_release(&own);
    return rc;
}

int cf_doctor_gather(const struct cf_gather_opts *o, struct cf_gather_result *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    struct cf_launch_info le;
    struct cf_launch_secret secret;
    int port = 0;
    int found = cf_launch_detect(o->envp, &le, err);
    if (found < 0)
        return -1;
    if (!found)
        return cf_error_set(err, CF_ERR_USAGE, "--gather needs a launcher (srun, mpirun, torchrun: one process per rank)");
    char addr[256], how[256];
    if (cf_launch_rank0_where(&le, o->envp, addr, sizeof addr, &port, how, sizeof how, err) < 0)
        return -1;
    snprintf(le.master_addr, sizeof le.master_addr, "%s", addr);
    le.master_port = port;
    if (cf_launch_secret_for(&le, o->envp, &secret, err) < 0)
        return -1;
    snprintf(out->where, sizeof out->where, "%.250s:%d (%.200s)", addr, port, how);
    out->launcher = le.launcher;
    out->rank = le.rank;
    out->world = le.world;
    out->is_rank0 = le.rank == 0;
    if (le.rank == 0)
        return run_rank0(o, &le, port, &secret, out, err);

    struct strbuf blob = STRBUF_INIT;
    if (rank_blob(o, &le, &blob, err) < 0) {
        cf_sb_release(&blob);
        return -1;
    }
    unsigned char *reply = NULL;
    size_t reply_len = 0;
    cf_error serr = CF_ERROR_INIT;
    out->verdict = -1;
    if (cf_launch_send_collect(le.master_addr, le.master_port, &secret, CF_GATHER_TAG, le.rank, le.world, blob.buf,
                               blob.len, o->timeout_s, o->timeout_s + REPLY_SLACK_S, &reply, &reply_len, &serr) == 0 &&
        reply_len >= 1) {
        out->verdict = reply[0] == '1';
        out->reason = reply_len > 2 ? cf_strndup((const char *)reply + 2, reply_len - 2) : NULL;
    } else {
        out->reason = cf_asprintf("rank 0 at %s did not answer: %s", out->where, cf_error_message(&serr));
    }
    cf_error_clear(&serr);
    free(reply);
    cf_sb_release(&blob);
    return 0;
}

void cf_gather_result_release(struct cf_gather_result *r)
{
    for (size_t h = 0; h < r->n_hosts; h++) {
        free(r->hosts[h].label);
        cf_strvec_clear(&r->hosts[h].ranks);
        cf_survey_release(&r->surveys[h]);
        cf_findings_release(&r->per_host[h]);
    }
    free(r->hosts);
    free(r->surveys);
    free(r->per_host);
    cf_strvec_clear(&r->missing);
    for (size_t i = 0; i < r->n_ranks; i++) {
        cf_nccl_config_release(r->ranks[i].config);
        free(r->ranks[i].config);
    }
    free(r->ranks);
    cf_consolidated_release(&r->report);
    free(r->reason);
    memset(r, 0, sizeof *r);
}
