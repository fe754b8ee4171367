/* Collecting one blob from every rank that answers, by a deadline: unlike
 * cf_rdv_open, rank 0 does not give up when a rank is missing, it reports who is
 * (for `doctor --gather`, where a host that does not answer is a finding, not a
 * hang). Connections use the authenticated handshake of cclforge/launch.h; rank 0
 * answers every rank that sent one reply (the verdict). Also: where rank 0 is
 * when the launcher does not say (srun's node list, a one-node mpirun), and
 * Slurm hostlist expressions. */
#ifndef CCLFORGE_LAUNCH_COLLECT_H
#define CCLFORGE_LAUNCH_COLLECT_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/launch.h"
#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cf_collected {
    int world;
    unsigned char **blobs; /* [world]; NULL for ranks that sent nothing (rank 0's own is the caller's) */
    size_t *lens;
    int *fds;              /* [world]: open connections, for the reply; -1 */
    char (*addrs)[64];     /* where each rank connected from */
    int n_missing;         /* ranks 1..world-1 that did not answer */
    char *refused;         /* the first refusals of this run's ranks (another world size, a rank twice); NULL */
    struct cf_launch_strays strays; /* connections that never completed a handshake */
};
/* Rank 0: accepts on listen_fd (it takes ownership and closes it) until every
 * other rank sent its blob or timeout_s passed; missing ranks are data. */
void cf_launch_collect(int listen_fd, const struct cf_launch_secret *s, const char *tag, int world, double timeout_s,
                       size_t max_blob, struct cf_collected *out);
/* Rank 0: sends reply to every rank that answered, then closes the connections. */
void cf_launch_collect_reply(struct cf_collected *c, const void *reply, size_t len, double timeout_s);
void cf_collected_release(struct cf_collected *c);
/* Another rank: connects (retrying until timeout_s), sends blob, waits for the reply
 * (malloc'd into *reply) for at most reply_timeout_s. */
int cf_launch_send_collect(const char *addr, int port, const struct cf_launch_secret *s, const char *tag, int rank,
                           int world, const void *blob, size_t len, double timeout_s, double reply_timeout_s,
                           unsigned char **reply, size_t *reply_len, cf_error *err);

/* Where rank 0 listens when the launcher gives no MASTER_ADDR: srun's first node
 * (SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST: Slurm places task 0 on it), or
 * loopback for a one-node mpirun (OMPI_MCA_orte_num_nodes=1). The port, when no
 * MASTER_PORT/CCLFORGE_PORT is set: a hash of the job id into 20000-32767 (below
 * Linux's ephemeral ports), the same on every rank. how says which rule gave them. -1 when neither is known. */
int cf_launch_rank0_where(const struct cf_launch_info *info, char *const *envp, char *addr, size_t addr_cap,
                          int *port, char *how, size_t how_cap, cf_error *err);

/* Expands a Slurm hostlist ("node[01-03,7],gpu-a") into names, at most max.
 * -1 on a malformed expression (err says where). */
int cf_slurm_hostlist_expand(const char *expr, size_t max, struct strvec *out, cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
