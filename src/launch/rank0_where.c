/* Where rank 0 is when the launcher does not say (cclforge/launch_collect.h), and
 * Slurm's hostlist expressions ("node[01-03,7],gpu-a": ranges keep their zero
 * padding, brackets may follow any prefix, commas outside brackets separate). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/envp.h"
#include "cclforge/fnv1a.h"
#include "cclforge/launch_collect.h"

#define NAME_MAX_LEN 255

static int expand_one(const char *item, size_t len, size_t max, struct strvec *out, cf_error *err)
{
    const char *lb = memchr(item, '[', len);
    if (!lb) {
        if (!len || len > NAME_MAX_LEN)
            return cf_error_set(err, CF_ERR_FORMAT, "hostlist: an empty or overlong host name");
        if (out->n < max)
            cf_strvec_push_nodup(out, cf_strndup(item, len));
        return 0;
    }
    const char *rb = memchr(lb, ']', len - (size_t)(lb - item));
    if (!rb || rb != item + len - 1 || rb == lb + 1)
        return cf_error_set(err, CF_ERR_FORMAT, "hostlist: '%.*s' has unbalanced brackets", (int)len, item);
    size_t plen = (size_t)(lb - item);
    if (plen > NAME_MAX_LEN)
        return cf_error_set(err, CF_ERR_FORMAT, "hostlist: an overlong prefix");
    for (const char *p = lb + 1; p < rb;) {
        const char *e = memchr(p, ',', (size_t)(rb - p));
        if (!e)
            e = rb;
        const char *dash = memchr(p, '-', (size_t)(e - p));
        char *end;
        unsigned long lo = strtoul(p, &end, 10);
        size_t width = (size_t)((dash ? dash : e) - p);
        if (end != (dash ? dash : e) || width == 0 || width > 9)
            return cf_error_set(err, CF_ERR_FORMAT, "hostlist: '%.*s' is not a number or a range", (int)(e - p), p);
        unsigned long hi = lo;
        if (dash) {
            hi = strtoul(dash + 1, &end, 10);
            if (end != e || dash + 1 == e || hi < lo)
                return cf_error_set(err, CF_ERR_FORMAT, "hostlist: '%.*s' is not a range", (int)(e - p), p);
        }
        for (unsigned long v = lo; v <= hi && out->n < max; v++)
            cf_strvec_pushf(out, "%.*s%0*lu", (int)plen, item, (int)width, v);
        if (out->n >= max)
            return 0;
        p = e + (e < rb);
    }
    return 0;
}

int cf_slurm_hostlist_expand(const char *expr, size_t max, struct strvec *out, cf_error *err)
{
    const char *p = expr;
    while (*p && out->n < max) {
        /* an item ends at a comma outside brackets */
        const char *q = p;
        int depth = 0;
        while (*q && (depth || *q != ',')) {
            depth += *q == '[';
            depth -= *q == ']';
            if (depth < 0 || depth > 1)
                return cf_error_set(err, CF_ERR_FORMAT, "hostlist '%s': unbalanced brackets", expr);
            q++;
        }
        if (depth)
            return cf_error_set(err, CF_ERR_FORMAT, "hostlist '%s': unbalanced brackets", expr);
        if (expand_one(p, (size_t)(q - p), max, out, err) < 0)
            return -1;
        p = *q ? q + 1 : q;
    }
    return 0;
}

/* A port derived from the job id lies below Linux's ephemeral range (32768-60999 by
 * default), which the kernel lends to every outgoing connection: a derived port
 * inside it was found taken (EADDRINUSE) on a busy host. */
enum { DERIVED_PORT_FIRST = 20000, DERIVED_PORT_END = 32768 };

int cf_launch_rank0_where(const struct cf_launch_info *info, char *const *envp, char *addr, size_t addr_cap,
                          int *port, char *how, size_t how_cap, cf_error *err)
{
    const char *from = NULL;
    if (info->master_addr[0]) {
        snprintf(addr, addr_cap, "%s", info->master_addr);
        from = "MASTER_ADDR";
    } else if (info->launcher && !strcmp(info->launcher, "srun")) {
        const char *list = cf_envp_get(envp, "SLURM_STEP_NODELIST");
        const char *var = "SLURM_STEP_NODELIST";
        if (!list) {
            list = cf_envp_get(envp, "SLURM_JOB_NODELIST");
            var = "SLURM_JOB_NODELIST";
        }
        struct strvec nodes = STRVEC_INIT;
        if (!list || cf_slurm_hostlist_expand(list, 1, &nodes, err) < 0 || !nodes.n) {
            cf_strvec_clear(&nodes);
            return list ? cf_error_prefix(err, "%s", var)
                        : cf_error_set(err, CF_ERR_USAGE, "srun set no SLURM_STEP_NODELIST: set MASTER_ADDR");
        }
        snprintf(addr, addr_cap, "%s", nodes.v[0]);
        cf_strvec_clear(&nodes);
        from = var;
    } else if (info->launcher && (!strcmp(info->launcher, "mpirun") || !strcmp(info->launcher, "pmi"))) {
        const char *nodes = cf_envp_get(envp, "OMPI_MCA_orte_num_nodes");
        if (!nodes || strcmp(nodes, "1"))
            return cf_error_set(err, CF_ERR_USAGE,
                                "mpirun across hosts does not say where rank 0 runs: pass -x MASTER_ADDR=<rank 0's "
                                "host> (and -x MASTER_PORT)");
        snprintf(addr, addr_cap, "127.0.0.1");
        from = "one-node mpirun (loopback)";
    } else {
        return cf_error_set(err, CF_ERR_USAGE, "%s gives no address of rank 0: set MASTER_ADDR",
                            info->launcher ? info->launcher : "the launcher");
    }
    if (info->master_port > 0) {
        *port = info->master_port;
        snprintf(how, how_cap, "%s, port from %s", from, info->port_from ? info->port_from : "the launcher");
    } else {
        /* the same port on every rank of one job, whatever host it runs on */
        unsigned span = DERIVED_PORT_END - DERIVED_PORT_FIRST;
        *port = DERIVED_PORT_FIRST + (int)(cf_fnv1a32_str(info->run_id[0] ? info->run_id : "cclforge") % span);
        snprintf(how, how_cap, "%s, port derived from the job id %s", from, info->run_id[0] ? info->run_id : "(none)");
    }
    return 0;
}
