/* Hosts side by side (cclforge/doctor_doc.h): the one rule for hosts alike --
 * the same value for every fact that differs -- used by the hosts page and
 * doctor compare's table, and the model a hosts page embeds. 1,024 hosts with
 * one odd one are two rows. */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor_doc.h"
#include "cclforge/json.h"
#include "cclforge/sorted_names.h"

struct host_sig {
    size_t host;
    size_t nd;
    const int *sig; /* [nd]: the group index per difference */
};

/* by signature (the usual combination, all zeros, first), then by host */
static int cmp_sig(const void *a, const void *b)
{
    const struct host_sig *x = a, *y = b;
    for (size_t i = 0; i < x->nd; i++)
        if (x->sig[i] != y->sig[i])
            return x->sig[i] - y->sig[i];
    return x->host < y->host ? -1 : x->host > y->host;
}

void cf_hosts_alike(const struct cf_hosts_view *v, struct cf_alike_rows *out)
{
    size_t n = v->n, nd = v->cons->n_diffs;
    memset(out, 0, sizeof *out);
    out->groups = cf_xcalloc(n * nd + 1, sizeof *out->groups);
    for (size_t i = 0; i < n * nd; i++)
        out->groups[i] = -1; /* a host no group names (not surveyed) */
    struct cf_sorted_names ix;
    cf_sorted_names_build(&ix, v->labels, n, NULL);
    for (size_t d = 0; d < nd; d++) {
        const struct cf_fact_diff *diff = &v->cons->diffs[d];
        for (size_t g = 0; g < diff->n_groups; g++)
            for (size_t k = 0; k < diff->groups[g].hosts.n; k++) {
                const char *name = diff->groups[g].hosts.v[k];
                long h = cf_sorted_names_find(&ix, name, strlen(name));
                if (h >= 0)
                    out->groups[(size_t)h * nd + d] = (int)g;
            }
    }
    cf_sorted_names_release(&ix);
    struct host_sig *rows = cf_xcalloc(n + 1, sizeof *rows);
    for (size_t h = 0; h < n; h++)
        rows[h] = (struct host_sig){ h, nd, out->groups + h * nd };
    qsort(rows, n, sizeof *rows, cmp_sig);
    out->hosts = cf_xcalloc(n + 1, sizeof *out->hosts);
    out->v = cf_xcalloc(n + 1, sizeof *out->v);
    for (size_t r = 0; r < n;) {
        size_t e = r;
        while (e < n && !memcmp(rows[e].sig, rows[r].sig, nd * sizeof *rows[r].sig))
            e++;
        struct cf_alike_row *row = &out->v[out->n++];
        row->hosts = out->hosts + r;
        row->n_hosts = e - r;
        row->groups = rows[r].sig;
        for (size_t i = r; i < e; i++)
            row->hosts[i - r] = rows[i].host;
        for (size_t d = 0; d < nd; d++)
            row->odd |= row->groups[d] != 0;
        r = e;
    }
    free(rows);
}

void cf_alike_rows_release(struct cf_alike_rows *r)
{
    free(r->v);
    free(r->groups);
    free(r->hosts);
    memset(r, 0, sizeof *r);
}

void *cf_hosts_view_to_json(const struct cf_hosts_view *v)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "schema", "cclforge.doctor-hosts/1");
    cJSON *hosts = cJSON_AddArrayToObject(j, "hosts");
    for (size_t i = 0; i < v->n; i++)
        cJSON_AddItemToArray(hosts, cJSON_CreateString(v->labels[i]));
    cf_consolidated_to_json(v->cons, j);
    if (v->missing)
        cf_json_put_strvec(j, "missing", v->missing);
    return j;
}
