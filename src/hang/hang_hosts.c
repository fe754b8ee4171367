/* Where each rank ran: a Slurm hostlist with ranks per node (rank r on host
 * r / N, GPU r % N, as srun's block distribution places them), or a saved
 * document of the same job: smoke's ranks (host and device) or doctor
 * --gather's (each host's ranks, the GPU by the rank's place on its host).
 * A host the file name carried is kept unless a document says otherwise. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/gather.h"
#include "cclforge/hang.h"
#include "cclforge/hostlist.h"
#include "cclforge/launch_collect.h"
#include "cclforge/smoke_doc.h"

static void set_host(struct cf_hang_result *r, int rank, const char *host, int gpu)
{
    for (size_t i = 0; i < r->n_dumps; i++) {
        struct cf_hang_dump *d = &r->dumps[i];
        if (d->rank != rank)
            continue;
        free(d->host);
        d->host = host ? cf_strdup(host) : NULL;
        d->gpu = gpu;
    }
}

int cf_hang_hosts_from_list(struct cf_hang_result *r, const char *hostlist, int ranks_per_node, cf_error *err)
{
    if (ranks_per_node < 1)
        return cf_error_set(err, CF_ERR_USAGE, "--ranks-per-node must be at least 1");
    struct strvec hosts = STRVEC_INIT;
    if (cf_slurm_hostlist_expand(hostlist, 1 << 20, &hosts, err) < 0) {
        err->kind = CF_ERR_USAGE;
        return cf_error_prefix(err, "--hosts");
    }
    for (size_t i = 0; i < r->n_dumps; i++) {
        int rank = r->dumps[i].rank;
        if (rank < 0)
            continue;
        size_t h = (size_t)rank / (size_t)ranks_per_node;
        if (h < hosts.n) {
            free(r->dumps[i].host);
            r->dumps[i].host = cf_strdup(hosts.v[h]);
            r->dumps[i].gpu = rank % ranks_per_node;
        }
    }
    size_t need = r->world > 0 ? ((size_t)r->world + (size_t)ranks_per_node - 1) / (size_t)ranks_per_node : 0;
    if (need > hosts.n)
        cf_strvec_pushf(&r->notes, "--hosts names %zu hosts; %d ranks at %d a node need %zu", hosts.n, r->world,
                        ranks_per_node, need);
    cf_strvec_clear(&hosts);
    return 0;
}

/* the trailing integer of a device name ("cuda:3", "GPU 3"); -1 none */
static int device_index(const char *dev)
{
    if (!dev)
        return -1;
    size_t n = strlen(dev), d = n;
    while (d > 0 && dev[d - 1] >= '0' && dev[d - 1] <= '9')
        d--;
    return d < n && n - d <= 6 ? atoi(dev + d) : -1;
}

static int from_smoke(struct cf_hang_result *r, const cJSON *json, cf_error *err)
{
    struct cf_smoke_doc d;
    if (cf_smoke_doc_read(json, &d, err) < 0)
        return -1;
    for (size_t i = 0; i < d.nlisted; i++)
        if (d.ranks[i].hostname)
            set_host(r, (int)i, d.ranks[i].hostname, device_index(d.ranks[i].device));
    cf_smoke_doc_release(&d);
    return 0;
}

static int from_gather(struct cf_hang_result *r, const cJSON *json, cf_error *err)
{
    struct cf_gather_result g;
    memset(&g, 0, sizeof g);
    if (cf_gather_doc_from_json(json, &g, err) < 0)
        return -1;
    for (size_t h = 0; h < g.n_hosts; h++)
        for (size_t k = 0; k < g.hosts[h].ranks.n; k++) {
            char *end;
            long rank = strtol(g.hosts[h].ranks.v[k], &end, 10);
            if (end != g.hosts[h].ranks.v[k] && rank >= 0 && rank < CF_HANG_RANKS_MAX)
                set_host(r, (int)rank, g.hosts[h].label, (int)k); /* its place among the host's ranks */
        }
    cf_gather_result_release(&g);
    return 0;
}

int cf_hang_hosts_from_doc(struct cf_hang_result *r, const char *json_text, size_t len, cf_error *err)
{
    cJSON *json = cJSON_ParseWithLength(json_text, len);
    if (!json)
        return cf_error_set(err, CF_ERR_FORMAT, "not a JSON document");
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(json, "schema");
    const char *s = cJSON_IsString(schema) ? schema->valuestring : "";
    int rc;
    if (!strcmp(s, CF_SMOKE_DOC_SCHEMA))
        rc = from_smoke(r, json, err);
    else if (!strcmp(s, "cclforge.doctor-gather/1"))
        rc = from_gather(r, json, err);
    else
        rc = cf_error_set(err, CF_ERR_FORMAT, "schema %s is neither a smoke (%s) nor a gather document "
                          "(cclforge.doctor-gather/1)", *s ? s : "(none)", CF_SMOKE_DOC_SCHEMA);
    cJSON_Delete(json);
    return rc;
}

char *cf_hang_exclude(const struct cf_hang_result *r)
{
    const struct cf_hang_group *g = NULL;
    const struct cf_hang_divergence *d = cf_hang_first(r, &g);
    struct strvec hosts = STRVEC_INIT;
    if (d)
        for (size_t i = 0; i < d->n_odd; i++) {
            const struct cf_hang_dump *dump = cf_hang_dump_of(r, d->ranks_odd[i]);
            if (!dump || !dump->host) {
                cf_strvec_clear(&hosts);
                return NULL;
            }
            cf_strvec_push(&hosts, dump->host);
        }
    char *out = hosts.n ? cf_hostlist_of_set((const char *const *)hosts.v, hosts.n) : NULL;
    cf_strvec_clear(&hosts);
    return out;
}
