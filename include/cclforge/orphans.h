/* The end of a child subreaper's children. A process with
 * PR_SET_CHILD_SUBREAPER set inherits every orphan of what it started (a
 * rank mpirun left behind, a double-forked daemon), so at its end all that is
 * still alive below it is a child of its own: cf_reap_orphans lets them end
 * on their own for a while, then kills and reaps them until none is left.
 * It calls nothing that allocates but the /proc scan of a kernel without
 * /proc/<pid>/task/<tid>/children, so a forked child (spawn.c's keeper) may
 * run it. */
#ifndef CCLFORGE_ORPHANS_H
#define CCLFORGE_ORPHANS_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cf_orphans_end {
    int killed;         /* children other than `watched` still alive after the grace, killed */
    int watched_reaped; /* `watched` was among those reaped */
    int watched_status; /* its wait status then */
};

/* Reaps every child of the calling process: those that end within grace_s
 * (0: none waited for), then SIGKILL rounds over what is left, each reaped,
 * until no child is left or kill_s more seconds have passed (a process stuck
 * in the kernel cannot die sooner; one cannot fork once SIGKILL is pending,
 * so each round leaves fewer). watched (0: none) is a child whose wait status
 * the caller wants, and is not counted in killed. */
void cf_reap_orphans(pid_t watched, double grace_s, double kill_s, struct cf_orphans_end *out);

#ifdef __cplusplus
}
#endif
#endif
