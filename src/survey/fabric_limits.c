/* The limits a container or a login shell puts on NCCL: /dev/shm's size, the
 * locked-memory limit IB needs, the verbs device nodes, the ephemeral port range,
 * and how many ranks of the job share this host (the launcher's variables). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include "survey/fabric_internal.h"
#include "survey/survey_internal.h"

/* Launchers' "ranks on this node" variables, most specific first. */
static const char *const local_size_vars[] = {
    "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
};

static uint64_t rlim(rlim_t v)
{
    return v == RLIM_INFINITY ? UINT64_MAX : (uint64_t)v;
}

void cf_fabric_probe_limits(const struct cf_survey_opts *opts, const char *root, struct cf_fabric *f)
{
    struct cf_fabric_limits *l = &f->limits;
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) == 0)
        l->shm_bytes = (uint64_t)vfs.f_blocks * vfs.f_frsize;
    else
        l->shm_problem = cf_strdup("/dev/shm is not mounted");
    struct rlimit r;
    if (getrlimit(RLIMIT_MEMLOCK, &r) == 0) {
        l->memlock_soft = rlim(r.rlim_cur);
        l->memlock_hard = rlim(r.rlim_max);
    }
    char *dev = cf_asprintf("%s/dev/infiniband", root);
    struct strvec nodes = STRVEC_INIT;
    cf_dir_entries(dev, &nodes);
    l->dev_infiniband = nodes.n > 0;
    for (size_t i = 0; i < nodes.n; i++)
        l->uverbs += cf_starts_with(nodes.v[i], "uverbs");
    cf_strvec_clear(&nodes);
    free(dev);
    char *range = cf_sysfs_line("/proc/sys/net/ipv4/ip_local_port_range");
    if (range && sscanf(range, "%d %d", &l->port_lo, &l->port_hi) != 2)
        l->port_lo = l->port_hi = 0;
    free(range);
    for (size_t i = 0; i < sizeof local_size_vars / sizeof local_size_vars[0] && !l->local_ranks; i++) {
        const char *v = cf_env_get(opts, local_size_vars[i]);
        int n = v ? atoi(v) : 0;
        if (n > 0) {
            l->local_ranks = n;
            l->local_ranks_from = cf_strdup(local_size_vars[i]);
        }
    }
    const char *mp = cf_env_get(opts, "MASTER_PORT");
    l->master_port = mp ? atoi(mp) : 0;
}
