/* The keeper of a contained program (cf_spawn_opts.contain): a process
 * between cclforge and the program, the child subreaper of everything the
 * program starts (PR_SET_CHILD_SUBREAPER: a double-forked, setsid() daemon is
 * reparented to it, not to init), which, once the program has ended, timed
 * out or cclforge has gone, kills and reaps every process left, reports how
 * many there were, and then ends as the program ended (its exit code, or its
 * signal). Only async-signal-safe calls: it runs between fork and exit. Used
 * by spawn.c only. */
#ifndef CCLFORGE_UTIL_SPAWN_KEEPER_H
#define CCLFORGE_UTIL_SPAWN_KEEPER_H

#include <signal.h>
#include <sys/types.h>

/* What the keeper writes to its report pipe before it ends. */
struct cf_keeper_report {
    int left_behind; /* processes still there after the program ended, killed */
    int timed_out;   /* the program itself was killed at timeout_s */
};

/* In the keeper, first: its own process group, SIGTERM when cclforge dies
 * (parent: cclforge's pid), the subreaper bit, and the signals it waits for
 * blocked (the mask before, for the program, in *orig). */
void cf_keeper_begin(pid_t parent, sigset_t *orig);
/* In the keeper, once the program (pid prog) runs: waits for it at most
 * timeout_s (0: no limit) or until SIGTERM, SIGINT or SIGHUP, then kills the
 * tree, writes the report to report_fd and ends like the program. */
__attribute__((noreturn)) void cf_keeper_run(pid_t prog, double timeout_s, int report_fd);

#endif
