/* Launchers and rendezvous: which launcher started this process and which rank it
 * is (mpirun, srun, torchrun, PMI, cclforge's own supervisor), and a small TCP
 * rendezvous between the ranks of one run: rank 0 listens on every address of its
 * port (as torch's TCPStore does), every connection proves it belongs to the run
 * (HMAC-SHA256 over a per-run secret, both ways), every wait is bounded, and once
 * joined rank 0 can gather one blob from every rank and broadcast one to all.
 *
 * Used by `smoke` (the NCCL unique id, the supervisor's record channel) and by
 * `doctor --gather`. The library never prints: errors come back as cf_error. */
#ifndef CCLFORGE_LAUNCH_H
#define CCLFORGE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- which launcher, which rank ---- */

struct cf_launch_info {
    const char *launcher;  /* "cclforge", "mpirun", "torchrun", "pmi", "srun" (static); NULL: none */
    int rank, world, local_rank;
    char hostname[256];    /* gethostname() */
    char master_addr[256]; /* where rank 0 is reached; "" when the launcher gave none */
    int master_port;       /* the port cclforge may use there; 0 when none (see launch.h's table) */
    const char *port_from; /* what master_port came from: "MASTER_PORT+1", "CCLFORGE_PORT", ... (static) */
    char run_id[128];      /* the launcher's id of this job ("" unknown): binds a derived secret */
};

/* Reads the rank variables of known launchers from envp (NULL-terminated "KEY=VALUE"),
 * most specific first. Returns 1 when a launcher was found, 0 when none, -1 on
 * malformed values (err names the variable). */
int cf_launch_detect(char *const *envp, struct cf_launch_info *out, cf_error *err);

/* The environment variables of cclforge's own launcher (what its supervisor sets). */
#define CF_LAUNCH_RANK_ENV "CCLFORGE_RANK"
#define CF_LAUNCH_WORLD_ENV "CCLFORGE_WORLD_SIZE"
#define CF_LAUNCH_LOCAL_RANK_ENV "CCLFORGE_LOCAL_RANK"
#define CF_LAUNCH_ADDR_ENV "CCLFORGE_MASTER_ADDR"
#define CF_LAUNCH_PORT_ENV "CCLFORGE_PORT" /* also overrides any launcher's port */

/* ---- the per-run secret ---- */

#define CF_LAUNCH_SECRET_ENV "CCLFORGE_SECRET" /* 64 hex digits */
struct cf_launch_secret {
    unsigned char key[32];
    int derived; /* 1: made from the launcher's job id and address (binds a connection to
                  * the run, but anyone who can read those can make it); 0: random */
};
/* A fresh random secret (getrandom), and its hex form for CCLFORGE_SECRET. */
int cf_launch_secret_random(struct cf_launch_secret *s, char hex[65], cf_error *err);
/* The secret of this run: CCLFORGE_SECRET when set (malformed is an error), else one
 * derived from info's run id, master address and port. */
int cf_launch_secret_for(const struct cf_launch_info *info, char *const *envp, struct cf_launch_secret *s,
                         cf_error *err);
/* HMAC-SHA256 (RFC 2104), exposed for the tests' RFC 4231 vectors. */
void cf_launch_hmac(const unsigned char *key, size_t key_len, const void *msg, size_t msg_len,
                    unsigned char out[32]);

/* ---- sockets ---- */

/* Listens on port (0: ephemeral) of every address (IPv6 dual-stack, else IPv4), or of
 * loopback only when loopback_only. Fills *port_out and desc ("[::]:29501 (all
 * addresses)"). Returns the fd or -1. */
int cf_launch_listen(int port, int loopback_only, int *port_out, char *desc, size_t desc_len, cf_error *err);

/* An authenticated connection. tag names what the channel is for ("smoke", "smoke-records",
 * "doctor"): both sides must agree on it, the rank, the world size and the secret. */
struct cf_launch_peer {
    int fd;
    int rank, world;
    char addr[64]; /* the other side's numeric address */
};
/* Server side of one connection already accepted: handshake bounded by deadline
 * (cf_now_seconds). taken (world bytes, may be NULL) marks ranks that already joined:
 * a second one is refused. On success fills *peer (fd = fd) and returns 0; on failure
 * refuses with a reason the client reports, and returns -1 (err says why; the caller
 * closes fd). */
int cf_launch_accept_handshake(int fd, const struct cf_launch_secret *s, const char *tag, int world,
                               const unsigned char *taken, double deadline, struct cf_launch_peer *peer,
                               cf_error *err);
/* Accepts one connection waiting on listen_fd and runs the server handshake on
 * it, bounded by a few seconds for one client (a silent stray costs no more)
 * and by deadline. Returns 0 with *peer filled and taken[peer->rank] set; 1
 * when nothing was there to accept; -1 when the connection was refused and
 * closed (err says why). */
int cf_launch_accept_peer(int listen_fd, const struct cf_launch_secret *s, const char *tag, int world,
                          unsigned char *taken, double deadline, struct cf_launch_peer *peer, cf_error *err);
/* Client side: connects to addr:port (every address it resolves to), retrying refused
 * or unreachable attempts with backoff until timeout_s, then the handshake. A refusal by
 * the server (wrong world size, duplicate rank, failed authentication) is final. */
int cf_launch_connect(const char *addr, int port, const struct cf_launch_secret *s, const char *tag, int rank,
                      int world, double timeout_s, struct cf_launch_peer *peer, cf_error *err);

/* One framed message on an authenticated connection, bounded by deadline and max_len. */
int cf_launch_send(int fd, const void *data, size_t len, double deadline, cf_error *err);
int cf_launch_recv(int fd, unsigned char **data, size_t *len, size_t max_len, double deadline, cf_error *err);

/* ---- the rendezvous ---- */

struct cf_rdv_opts {
    const char *addr;       /* where rank 0 is reached (MASTER_ADDR); rank 0 reports it */
    int port;               /* rank 0 listens on it (every address); 0 only with listen_fd */
    int listen_fd;          /* >= 0: rank 0 uses this listening socket instead (it takes ownership) */
    int rank, world;
    const struct cf_launch_secret *secret;
    const char *tag;
    double timeout_s;       /* bound on joining, and on each gather and broadcast */
    size_t max_blob;        /* largest blob accepted; 0: 1 MiB */
};
struct cf_rdv;
/* Rank 0 waits until every other rank joined; the others connect to it. */
int cf_rdv_open(const struct cf_rdv_opts *o, struct cf_rdv **out, cf_error *err);
/* Rank 0: what it listened on ("[::]:29501 (all addresses)"); others: "". */
const char *cf_rdv_listen_desc(const struct cf_rdv *r);
/* What rank 0 advertised and what that resolves to where it runs:
 * "cf14-h0 (here 127.0.1.1)". */
const char *cf_rdv_advertised(const struct cf_rdv *r);
/* Rank 0: the address rank `rank` connected from; others: the address of rank 0 they
 * reached (rank argument ignored). "" when unknown. */
const char *cf_rdv_peer_addr(const struct cf_rdv *r, int rank);

struct cf_rdv_blob {
    unsigned char *data;
    size_t len;
};
/* Every rank gives one blob; rank 0 gets all `world` of them in rank order (*all,
 * freed with cf_rdv_blobs_free); the others get *all = NULL. */
int cf_rdv_gather(struct cf_rdv *r, const void *blob, size_t len, struct cf_rdv_blob **all, cf_error *err);
void cf_rdv_blobs_free(struct cf_rdv_blob *all, int n);
/* Rank 0 sends (*data, *len) to every rank; the others receive into a malloc'd *data. */
int cf_rdv_bcast(struct cf_rdv *r, unsigned char **data, size_t *len, cf_error *err);
void cf_rdv_close(struct cf_rdv *r);

#ifdef __cplusplus
}
#endif
#endif
