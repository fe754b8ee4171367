/* Which launcher started this process, and which rank it is: one table row per launcher. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/host.h"
#include "cclforge/envp.h"
#include "cclforge/launch.h"

/* The variables one launcher sets. */
struct launcher_vars {
    const char *launcher;
    const char *rank, *world, *local_rank;   /* local_rank may be absent: then rank 0..n-1 of one node */
    const char *addr, *port;                  /* where rank 0 is reached, when the launcher says */
    int port_offset;                          /* torchrun's own store already listens on MASTER_PORT */
    const char *run_id[2];                    /* joined with '.': the job's id; "" none */
};

/* Most specific first: cclforge's supervisor may run ranks under mpirun, mpirun inside
 * a Slurm allocation also carries SLURM_*, torchrun started by srun carries both sets. */
static const struct launcher_vars launchers[] = {
    { "cclforge", CF_LAUNCH_RANK_ENV, CF_LAUNCH_WORLD_ENV, CF_LAUNCH_LOCAL_RANK_ENV, CF_LAUNCH_ADDR_ENV,
      CF_LAUNCH_PORT_ENV, 0, { "", "" } },
    { "mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "MASTER_ADDR",
      "MASTER_PORT", 0, { "OMPI_MCA_ess_base_jobid", "" } },
    { "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", 1,
      { "TORCHELASTIC_RUN_ID", "" } },
    { "pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MASTER_ADDR", "MASTER_PORT", 0, { "PMI_KVSNAME", "" } },
    { "srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "MASTER_ADDR", "MASTER_PORT", 0,
      { "SLURM_JOB_ID", "SLURM_STEP_ID" } },
};

/* 1: not set, 0: parsed, -1: malformed */
static int env_int(char *const *envp, const char *key, long max, int *out, cf_error *err)
{
    const char *v = cf_envp_get(envp, key);
    if (!v)
        return 1;
    char *end;
    errno = 0;
    long l = strtol(v, &end, 10);
    if (!*v || *end || errno || l < 0 || l > max)
        return cf_error_set(err, CF_ERR_USAGE, "%s='%s' is not a number from 0 to %ld", key, v, max);
    *out = (int)l;
    return 0;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static int read_port(char *const *envp, const struct launcher_vars *l, struct cf_launch_info *out, cf_error *err)
{
    /* an explicit override wins: the port cclforge itself may listen on */
    int port = 0;
    int rc = env_int(envp, CF_LAUNCH_PORT_ENV, 65535, &port, err);
    if (rc < 0)
        return -1;
    if (rc == 0 && port > 0) {
        out->master_port = port;
        out->port_from = CF_LAUNCH_PORT_ENV;
        return 0;
    }
    rc = env_int(envp, l->port, 65535, &port, err);
    if (rc < 0)
        return -1;
    if (rc == 0 && port > 0) {
        if (port + l->port_offset > 65535)
            return cf_error_set(err, CF_ERR_USAGE, "%s=%d: no room for the port above it (%s uses %s+%d)", l->port,
                                port, l->launcher, l->port, l->port_offset);
        out->master_port = port + l->port_offset;
        out->port_from = l->port_offset ? "MASTER_PORT+1" : l->port;
    }
    return 0;
}

const char *cf_launch_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof launchers / sizeof launchers[0]; i++)
        if (!strcmp(name, launchers[i].launcher))
            return launchers[i].launcher;
    return NULL;
}

int cf_launch_detect(char *const *envp, struct cf_launch_info *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    cf_host_name(out->hostname, sizeof out->hostname);
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const struct launcher_vars *l = &launchers[i];
        if (!cf_envp_get(envp, l->rank) || !cf_envp_get(envp, l->world))
            continue;
        if (env_int(envp, l->rank, 1 << 24, &out->rank, err) < 0 ||
            env_int(envp, l->world, 1 << 24, &out->world, err) < 0)
            return -1;
        out->local_rank = out->rank;
        if (env_int(envp, l->local_rank, 1 << 24, &out->local_rank, err) < 0)
            return -1;
        if (out->world < 1 || out->rank >= out->world)
            return cf_error_set(err, CF_ERR_USAGE, "%s: rank %d is outside world size %d (%s, %s)", l->launcher,
                                out->rank, out->world, l->rank, l->world);
        out->launcher = l->launcher;
        const char *addr = cf_envp_get(envp, l->addr);
        if (addr && strlen(addr) >= sizeof out->master_addr)
            return cf_error_set(err, CF_ERR_USAGE, "%s is longer than %zu characters", l->addr,
                                sizeof out->master_addr - 1);
        copy_str(out->master_addr, sizeof out->master_addr, addr);
        if (read_port(envp, l, out, err) < 0)
            return -1;
        const char *a = l->run_id[0][0] ? cf_envp_get(envp, l->run_id[0]) : NULL;
        const char *b = l->run_id[1][0] ? cf_envp_get(envp, l->run_id[1]) : NULL;
        snprintf(out->run_id, sizeof out->run_id, "%s%s%s", a ? a : "", a && b ? "." : "", b ? b : "");
        return 1;
    }
    return 0;
}
