/* launch_mark: which environments mark a launcher's rank. Each row of the table
 * fires alone; the shells and jobs that are the user's own (salloc's shell, its
 * interactive step, sbatch's script, a plain shell with WORLD_SIZE exported)
 * mark nothing; an empty value marks nothing. The Slurm environments are the
 * ones a real Slurm 22.05 gave salloc, srun, srun --pty and sbatch. */
#include "testsupport.h"

#include <stdio.h>
#include <string.h>

#include "cclforge/launch_mark.h"

struct mark_case {
    const char *env[8];
    const char *launcher; /* NULL: no rank */
};

static void test_marks_of_real_environments(void **state)
{
    (void)state;
    static const struct mark_case cases[] = {
        { { "PATH=/bin", "TERM=xterm", NULL }, NULL },
        /* mpirun -n 1 (Open MPI 4): also PMIX_RANK */
        { { "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1", "PMIX_RANK=0", NULL }, "Open MPI" },
        { { "PMIX_RANK=3", NULL }, "PMIx" },
        /* MPICH's Hydra */
        { { "PMI_RANK=1", "PMI_SIZE=2", "PMI_FD=5", NULL }, "PMI (MPICH, Intel MPI, Hydra)" },
        /* salloc's shell: a job, no step */
        { { "SLURM_JOB_ID=1", "SLURM_NTASKS=1", NULL }, NULL },
        /* srun and srun --pty */
        { { "SLURM_JOB_ID=2", "SLURM_PROCID=0", "SLURM_STEP_ID=0", "SLURM_LOCALID=0", NULL }, "Slurm srun" },
        { { "SLURM_JOB_ID=3", "SLURM_PROCID=0", "SLURM_STEP_ID=0", "SLURM_PTY_PORT=43735", NULL }, "Slurm srun" },
        /* salloc with use_interactive_step: the user's shell */
        { { "SLURM_JOB_ID=1", "SLURM_PROCID=0", "SLURM_STEP_ID=4294967290", "SLURM_PTY_PORT=1", NULL }, NULL },
        /* sbatch's script: SLURM_PROCID, no step */
        { { "SLURM_JOB_ID=4", "SLURM_PROCID=0", "SLURM_LOCALID=0", NULL }, NULL },
        { { "SLURM_STEP_ID=0", NULL }, NULL },
        { { "TORCHELASTIC_RUN_ID=none", "RANK=0", "WORLD_SIZE=2", "LOCAL_RANK=0", "GROUP_RANK=0", NULL },
          "torchrun" },
        { { "GROUP_RANK=0", "WORLD_SIZE=2", NULL }, "torchrun" },
        { { "LOCAL_RANK=1", "WORLD_SIZE=2", "RANK=1", NULL }, "torch.distributed.launch" },
        /* WORLD_SIZE or RANK exported in a user's shell alone */
        { { "WORLD_SIZE=8", "RANK=0", NULL }, NULL },
        { { "OMPI_COMM_WORLD_RANK=", "PMI_RANK=", NULL }, NULL },
        { { "CCLFORGE_RANK=1", "CCLFORGE_WORLD_SIZE=2", NULL }, "cclforge" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct cf_launch_mark *m = cf_launch_marked((char *const *)cases[i].env);
        const char *got = m ? m->launcher : NULL;
        if (!got != !cases[i].launcher || (got && strcmp(got, cases[i].launcher)))
            fail_msg("case %zu (%s): got %s, wanted %s", i, cases[i].env[0], got ? got : "no rank",
                     cases[i].launcher ? cases[i].launcher : "no rank");
    }
}

/* Every row fires on its own variables, and not on its first without its second. */
static void test_each_row_fires(void **state)
{
    (void)state;
    size_t n;
    const struct cf_launch_mark *rows = cf_launch_marks(&n);
    assert_true(n >= 10);
    for (size_t i = 0; i < n; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "%s=7", rows[i].var);
        snprintf(b, sizeof b, "%s=7", rows[i].with ? rows[i].with : "UNRELATED");
        char *env[] = { a, b, NULL };
        assert_ptr_equal(cf_launch_marked(env) ? cf_launch_marked(env)->var : NULL, rows[i].var);
        if (rows[i].with) {
            char *alone[] = { a, NULL };
            assert_null(cf_launch_marked(alone));
        }
        if (rows[i].except) {
            snprintf(a, sizeof a, "%s=%s", rows[i].var, rows[i].except);
            assert_null(cf_launch_marked(env));
        }
    }
    assert_null(cf_launch_marked(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_marks_of_real_environments),
        cmocka_unit_test(test_each_row_fires),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
