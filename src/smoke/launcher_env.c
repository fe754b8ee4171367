/* Which launcher started this process, and which rank it is: one table row per launcher. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke.h"

struct launcher_vars {
    const char *launcher;
    const char *rank, *size, *local_rank; /* local_rank may be absent: then rank 0..n-1 of one node */
    int port_offset; /* added to MASTER_PORT: torchrun's own store already listens on it */
};

/* Most specific first: mpirun inside a Slurm allocation also carries SLURM_*, torchrun
 * started by srun carries both sets too. */
static const struct launcher_vars launchers[] = {
    { "mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", 0 },
    { "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", 1 },
    { "pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", 0 },
    { "srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", 0 },
};

static const char *cf_env_get(char *const *envp, const char *key)
{
    size_t klen = strlen(key);
    for (; envp && *envp; envp++)
        if (!strncmp(*envp, key, klen) && (*envp)[klen] == '=')
            return *envp + klen + 1;
    return NULL;
}

static int env_int(char *const *envp, const char *key, int *out, cf_error *err)
{
    const char *v = cf_env_get(envp, key);
    if (!v)
        return 1;
    char *end;
    errno = 0;
    long l = strtol(v, &end, 10);
    if (!*v || *end || errno || l < 0 || l > 1 << 24)
        return cf_error_set(err, CF_ERR_USAGE, "%s='%s' is not a rank number", key, v);
    *out = (int)l;
    return 0;
}

int cf_smoke_detect_launcher(char *const *envp, struct cf_smoke_launch_env *out, cf_error *err)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const struct launcher_vars *l = &launchers[i];
        if (!cf_env_get(envp, l->rank) || !cf_env_get(envp, l->size))
            continue;
        int rc = env_int(envp, l->rank, &out->rank, err);
        if (rc == 0)
            rc = env_int(envp, l->size, &out->size, err);
        if (rc < 0)
            return -1;
        out->local_rank = out->rank;
        if (l->local_rank && env_int(envp, l->local_rank, &out->local_rank, err) < 0)
            return -1;
        if (out->size < 1 || out->rank >= out->size)
            return cf_error_set(err, CF_ERR_USAGE, "%s: rank %d is outside world size %d (%s, %s)", l->launcher,
                                out->rank, out->size, l->rank, l->size);
        out->launcher = l->launcher;
        const char *addr = cf_env_get(envp, "MASTER_ADDR");
        if (addr && strlen(addr) < sizeof out->master_addr)
            memcpy(out->master_addr, addr, strlen(addr) + 1);
        int port = 0;
        if (env_int(envp, "MASTER_PORT", &port, err) < 0)
            return -1;
        if (port > 0) {
            port += l->port_offset;
            if (port > 65535)
                return cf_error_set(err, CF_ERR_USAGE, "MASTER_PORT=%d: no room for the port above it", port - 1);
            out->master_port = port;
        }
        /* an explicit override wins: the port cclforge's id server listens on */
        int own = 0;
        if (env_int(envp, "CCLFORGE_SMOKE_PORT", &own, err) < 0)
            return -1;
        if (own > 0 && own <= 65535)
            out->master_port = own;
        return 1;
    }
    return 0;
}
