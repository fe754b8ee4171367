/* The variables that mark a process as one rank of a launcher's job: one row each. */
#include "cclforge/launch_mark.h"

#include <string.h>

#include "cclforge/envp.h"
#include "cclforge/launch.h"

/* A row names a variable the launcher sets in every rank and that a user's
 * own shell does not carry. Slurm: salloc's shell has SLURM_JOB_ID but no
 * step; srun's tasks (and srun --pty) have SLURM_STEP_ID with SLURM_PROCID;
 * salloc's interactive step (LaunchParameters=use_interactive_step) is the
 * user's shell, step 4294967290 (SLURM_INTERACTIVE_STEP). sbatch's script has
 * SLURM_PROCID but no step, and its output is a file. */
static const struct cf_launch_mark marks[] = {
    { "cclforge", CF_LAUNCH_RANK_ENV, NULL, NULL },
    { "Open MPI", "OMPI_COMM_WORLD_RANK", NULL, NULL },
    { "Open MPI", "OMPI_COMM_WORLD_SIZE", NULL, NULL },
    { "PMIx", "PMIX_RANK", NULL, NULL },
    { "PMI (MPICH, Intel MPI, Hydra)", "PMI_RANK", NULL, NULL },
    { "PMI (MPICH, Intel MPI, Hydra)", "PMI_SIZE", NULL, NULL },
    { "MVAPICH2", "MV2_COMM_WORLD_RANK", NULL, NULL },
    { "Slurm srun", "SLURM_STEP_ID", "SLURM_PROCID", "4294967290" },
    { "torchrun", "TORCHELASTIC_RUN_ID", NULL, NULL },
    { "torchrun", "GROUP_RANK", "WORLD_SIZE", NULL },
    { "torch.distributed.launch", "LOCAL_RANK", "WORLD_SIZE", NULL },
    { "Horovod", "HOROVOD_RANK", NULL, NULL },
    { "Flux", "FLUX_TASK_RANK", NULL, NULL },
    { "HPE Cray PALS", "PALS_RANKID", NULL, NULL },
    { "Cray ALPS aprun", "ALPS_APP_PE", NULL, NULL },
    { "IBM jsrun", "JSM_NAMESPACE_RANK", NULL, NULL },
};

static int set(char *const *envp, const char *key)
{
    const char *v = cf_envp_get(envp, key);
    return v && *v;
}

const struct cf_launch_mark *cf_launch_marked(char *const *envp)
{
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const struct cf_launch_mark *m = &marks[i];
        if (!set(envp, m->var) || (m->with && !set(envp, m->with)))
            continue;
        if (m->except && !strcmp(cf_envp_get(envp, m->var), m->except))
            continue;
        return m;
    }
    return NULL;
}

const struct cf_launch_mark *cf_launch_marks(size_t *n)
{
    *n = sizeof marks / sizeof marks[0];
    return marks;
}
