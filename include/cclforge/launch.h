/* Launchers and rendezvous: which launcher started this process and which rank it
 * is (mpirun, srun, torchrun, PMI, cclforge's own supervisor), and a small TCP
 * rendezvous between the ranks of one run: rank 0 listens on every address of its
 * port (as torch's TCPStore does), every connection proves it belongs to the run
 * (HMAC-SHA256 over a per-run secret, both ways), every wait is bounded, and once
 * joined rank 0 can broadcast one blob to all.
 *
 * Used by `smoke` (the NCCL unique id, the supervisor's record channel) and by
 * `doctor --gather`. The library never prints: errors come back as cf_error. */
#ifndef CCLFORGE_LAUNCH_H
#define CCLFORGE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

struct pollfd;

#ifdef __cplusplus
extern "C" {
#endif

/* ---- which launcher, which rank ---- */

struct cf_launch_info {
    const char *launcher;  /* "cclforge", "mpirun", "torchrun", "pmi", "srun" (static); NULL: none */
    int rank, world, local_rank;
    char hostname[256];    /* cf_host_name() */
    char master_addr[256]; /* where rank 0 is reached; "" when the launcher gave none */
    int master_port;       /* the port cclforge may use there; 0 when none (see launch.h's table) */
    const char *port_from; /* what master_port came from: "MASTER_PORT+1", "CCLFORGE_PORT", ... (static) */
    char run_id[128];      /* the launcher's id of this job ("" unknown): binds a derived secret */
};

/* Reads the rank variables of known launchers from envp (NULL-terminated "KEY=VALUE"),
 * most specific first. Returns 1 when a launcher was found, 0 when none, -1 on
 * malformed values (err names the variable). */
int cf_launch_detect(char *const *envp, struct cf_launch_info *out, cf_error *err);

/* The launcher of that name ("srun"), as cf_launch_info holds it; NULL: none such. */
const char *cf_launch_name(const char *name);
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
/* Why a server refused a connection: a code on the wire, never text the client
 * chose. The first three are decided before the client proved the secret (a
 * stranger gets them, and learns nothing beyond the code); the others only after
 * its MAC verified, so only they may end a rendezvous. */
enum cf_launch_refusal {
    CF_REFUSAL_NONE = 0,
    CF_REFUSAL_NOT_CLIENT, /* not a cclforge hello (another program, another protocol version) */
    CF_REFUSAL_WRONG_TAG,  /* another cclforge channel than this port serves */
    CF_REFUSAL_BAD_MAC,    /* does not hold this run's secret */
    CF_REFUSAL_WORLD,      /* authenticated: started for another world size */
    CF_REFUSAL_RANK,       /* authenticated: its rank lies outside the world */
    CF_REFUSAL_TWICE,      /* authenticated: its rank already joined */
    CF_REFUSAL_COUNT
};
/* 1 when the refusal is sent only after the client's MAC verified. */
int cf_launch_refusal_authenticated(enum cf_launch_refusal code);

/* Connections to a listening port that never completed a valid handshake, by why. */
enum cf_launch_stray_kind {
    CF_STRAY_SILENT,     /* sent no complete hello by its deadline */
    CF_STRAY_LEFT,       /* closed the connection before its hello was complete */
    CF_STRAY_NOT_CLIENT, /* sent something that is not a cclforge hello */
    CF_STRAY_WRONG_TAG,  /* a hello for another channel */
    CF_STRAY_BAD_MAC,    /* a hello without this run's secret */
    CF_STRAY_EVICTED,    /* closed to make room: too many handshakes were pending */
    CF_STRAY_KINDS
};
#define CF_LAUNCH_STRAY_ADDRS 8
struct cf_launch_strays {
    unsigned long count;
    unsigned long kind[CF_STRAY_KINDS];
    size_t n_addrs; /* the first CF_LAUNCH_STRAY_ADDRS distinct addresses, with counts */
    struct {
        char addr[64];
        unsigned long count;
    } addrs[CF_LAUNCH_STRAY_ADDRS];
    unsigned long unlisted; /* strays from further addresses */
};
/* "20 connections never completed a handshake (20 silent), from 127.0.0.1 (20)";
 * appends nothing when there were none. */
void cf_launch_strays_describe(const struct cf_launch_strays *s, struct strbuf *out);
/* A kind's JSON key ("silent", "not_client", ...). */
const char *cf_launch_stray_kind_name(enum cf_launch_stray_kind k);

/* The server side: every pending handshake of one listening socket at once, each
 * bounded by its own deadline, so a connection that never speaks costs nobody
 * else any time. At most max_pending wait (the oldest is closed to make room);
 * connections that never complete a valid handshake are counted as strays and
 * never become a rank. Refusals travel as codes. */
struct cf_launch_acceptor_opts {
    int listen_fd;                        /* not owned; made non-blocking; -1: adopted fds only */
    const struct cf_launch_secret *secret;
    const char *tag;
    int world;
    double per_conn_s;                    /* one connection's bound, from its accept */
    int max_pending;                      /* 0: 256 */
};
struct cf_launch_acceptor;
struct cf_launch_acceptor *cf_launch_acceptor_new(const struct cf_launch_acceptor_opts *o);
/* Marks a rank as joined already (rank 0 itself): another claiming it is refused. */
void cf_launch_acceptor_claim(struct cf_launch_acceptor *a, int rank);
/* One round: polls the listening socket, every pending handshake and the caller's
 * own fds (extra[0..n_extra), whose revents it fills) for at most ms (-1: no bound
 * but the pending deadlines), then accepts, advances and expires handshakes.
 * Returns poll's count of ready extra fds (0 on timeout), -1 when poll failed
 * (errno; EINTR included). */
int cf_launch_acceptor_poll(struct cf_launch_acceptor *a, struct pollfd *extra, int n_extra, int ms);
/* What a round produced, one at a time: a rank that joined (refused ==
 * CF_REFUSAL_NONE, peer.fd open and the caller's), or one of this run's ranks
 * that was refused after it authenticated (peer.fd -1; claimed_* what it said). */
struct cf_launch_event {
    struct cf_launch_peer peer;
    enum cf_launch_refusal refused;
    unsigned claimed_rank, claimed_world;
};
/* 1 and *ev filled, 0 when no event is waiting. */
int cf_launch_acceptor_next(struct cf_launch_acceptor *a, struct cf_launch_event *ev);
/* The server's own sentence for an authenticated refusal event: "world size
 * mismatch: rank 0 runs 2 ranks, but rank 1 (10.0.0.2) was started for 3: ...". */
void cf_launch_event_describe(const struct cf_launch_event *ev, int world, struct strbuf *out);
/* The strays so far (pending handshakes are not counted until they end). */
const struct cf_launch_strays *cf_launch_acceptor_strays(const struct cf_launch_acceptor *a);
/* Closes every pending handshake (counted as silent strays: no complete hello
 * before the wait ended) and every connection of an event not taken, copies the
 * final tally to *strays (may be NULL) and frees; not the listening socket. */
void cf_launch_acceptor_free(struct cf_launch_acceptor *a, struct cf_launch_strays *strays);

/* Client side: connects to addr:port (every address it resolves to), retrying refused
 * or unreachable attempts with backoff until timeout_s, then the handshake. A refusal by
 * the server (wrong world size, duplicate rank, failed authentication) is final.
 * server names the other side in errors ("rank 0", "the supervisor"); they
 * carry our own words and numbers only, never text the server sent. */
int cf_launch_connect(const char *addr, int port, const char *server, const struct cf_launch_secret *s,
                      const char *tag, int rank, int world, double timeout_s, struct cf_launch_peer *peer,
                      cf_error *err);

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
    double timeout_s;       /* bound on joining, and on each broadcast */
    size_t max_blob;        /* largest broadcast accepted; 0: 1 MiB */
};
struct cf_rdv;
/* Rank 0 waits until every other rank joined; the others connect to it. */
int cf_rdv_open(const struct cf_rdv_opts *o, struct cf_rdv **out, cf_error *err);
/* Rank 0: what it listened on ("[::]:29501 (all addresses)"); others: "". */
const char *cf_rdv_listen_desc(const struct cf_rdv *r);
/* What rank 0 advertised and what that resolves to where it runs:
 * "node-a (here 127.0.1.1)". */
const char *cf_rdv_advertised(const struct cf_rdv *r);
/* Rank 0: the connections that never completed a handshake while it waited. */
const struct cf_launch_strays *cf_rdv_strays(const struct cf_rdv *r);
/* Rank 0: the address rank `rank` connected from; others: the address of rank 0 they
 * reached (rank argument ignored). "" when unknown. */
const char *cf_rdv_peer_addr(const struct cf_rdv *r, int rank);

/* Rank 0 sends (*data, *len) to every rank; the others receive into a malloc'd *data. */
int cf_rdv_bcast(struct cf_rdv *r, unsigned char **data, size_t *len, cf_error *err);
void cf_rdv_close(struct cf_rdv *r);

#ifdef __cplusplus
}
#endif
#endif
