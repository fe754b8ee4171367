/* Whether this process is one rank of a job a launcher started (mpirun, srun,
 * torchrun, ...), told by the variables the launcher sets in each rank's
 * environment. Such a rank's terminal, when it has one, is the launcher's
 * (Open MPI gives each rank a pty), not the user's: the CLI uses no colour and
 * redraws no progress line there unless asked. */
#ifndef CCLFORGE_LAUNCH_MARK_H
#define CCLFORGE_LAUNCH_MARK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One row: `var` set (non-empty) marks a rank of `launcher`, when `with` is
 * NULL or also set, and var's value is not `except`. */
struct cf_launch_mark {
    const char *launcher; /* "Open MPI", "Slurm srun", "torchrun", ... */
    const char *var;
    const char *with;   /* a second variable that must be set too; NULL: none */
    const char *except; /* a value of var that marks no rank; NULL: none */
};

/* The first row of the table that envp (NULL-terminated "KEY=VALUE") matches,
 * or NULL: not a launcher's rank. */
const struct cf_launch_mark *cf_launch_marked(char *const *envp);
/* The whole table, for the documentation's test and the unit tests. */
const struct cf_launch_mark *cf_launch_marks(size_t *n);

#ifdef __cplusplus
}
#endif
#endif
