/* The rendezvous: rank 0 listens on every address of its port and waits (bounded)
 * until every other rank has joined through the authenticated handshake; then one
 * blob can be broadcast from it. A star of connections, enough for a unique id. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/strbuf.h"
#include "launch/launch_internal.h"

#define DEFAULT_MAX_BLOB (1u << 20)
#define ONE_CLIENT_S 2.0 /* how long one connection may take to prove it is a rank */

struct cf_rdv {
    int rank, world;
    double timeout_s;
    size_t max_blob;
    struct cf_launch_peer *peers; /* rank 0: one per rank (fd -1 for itself) */
    struct cf_launch_peer up;     /* the others: the connection to rank 0 */
    char listen_desc[128];
    char advertised[512];
    struct cf_launch_strays strays; /* rank 0: connections that never became a rank */
};

/* "node1 (here 127.0.1.1, 10.0.0.1)": what the name means where rank 0 runs */
static void describe_advertised(const char *addr, char *out, size_t cap)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, addr && *addr ? addr : "(no address given)");
    if (addr && *addr && getaddrinfo(addr, NULL, &hints, &ai) == 0) {
        struct strvec here = STRVEC_INIT;
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
            char s[64];
            cf_launch_addr_string(a->ai_addr, s, sizeof s);
            if (!cf_strvec_contains(&here, s))
                cf_strvec_push(&here, s);
        }
        freeaddrinfo(ai);
        cf_sb_adds(&sb, " (here ");
        for (size_t i = 0; i < here.n; i++)
            cf_sb_addf(&sb, "%s%s", i ? ", " : "", here.v[i]);
        cf_sb_adds(&sb, ")");
        cf_strvec_clear(&here);
    }
    snprintf(out, cap, "%s", cf_sb_str(&sb));
    cf_sb_release(&sb);
}

static int missing_ranks(const struct cf_rdv *r, struct strbuf *sb)
{
    int missing = 0;
    for (int i = 1; i < r->world; i++) {
        if (r->peers[i].fd >= 0)
            continue;
        if (missing < 16)
            cf_sb_addf(sb, "%s%d", missing ? ", " : "", i);
        missing++;
    }
    if (missing > 16)
        cf_sb_addf(sb, " and %d more", missing - 16);
    return missing;
}

/* Every pending handshake at once (acceptor.c): a stray costs no rank any time.
 * Only a refusal of one of this run's ranks, after its MAC verified, ends the
 * wait early: a rank with another world size, or two with one rank, is a broken
 * launch, said now rather than after the timeout. */
static int serve_joins(struct cf_rdv *r, int listen_fd, const struct cf_rdv_opts *o, cf_error *err)
{
    double deadline = cf_now_seconds() + o->timeout_s;
    struct cf_launch_acceptor_opts ao = { listen_fd, o->secret, o->tag, r->world, ONE_CLIENT_S, 0 };
    struct cf_launch_acceptor *a = cf_launch_acceptor_new(&ao);
    cf_launch_acceptor_claim(a, 0); /* rank 0 is this process: another one claiming it is a broken launch */
    int joined = 0, rc = 0;
    while (joined < r->world - 1 && rc == 0) {
        int ms = cf_launch_ms_left(deadline);
        if (!ms) {
            struct strbuf which = STRBUF_INIT, strays = STRBUF_INIT;
            int missing = missing_ranks(r, &which);
            cf_launch_strays_describe(cf_launch_acceptor_strays(a), &strays);
            rc = cf_error_set(err, CF_ERR_FAILED,
                              "rank 0: %d of %d ranks did not join within %.0f s (missing rank%s %s); listening on "
                              "%s, advertised %s%s%s",
                              missing, r->world - 1, o->timeout_s, missing == 1 ? "" : "s", cf_sb_str(&which),
                              r->listen_desc, r->advertised, strays.len ? "; " : "", cf_sb_str(&strays));
            cf_sb_release(&which);
            cf_sb_release(&strays);
            break;
        }
        if (cf_launch_acceptor_poll(a, NULL, 0, ms) < 0 && errno != EINTR) {
            rc = cf_error_set(err, CF_ERR_FAILED, "rank 0: poll: %s", strerror(errno));
            break;
        }
        struct cf_launch_event ev;
        while (rc == 0 && cf_launch_acceptor_next(a, &ev)) {
            if (ev.refused == CF_REFUSAL_NONE) {
                r->peers[ev.peer.rank] = ev.peer;
                joined++;
                continue;
            }
            struct strbuf why = STRBUF_INIT;
            cf_launch_event_describe(&ev, r->world, &why);
            rc = cf_error_set(err, CF_ERR_FAILED, "rank 0: %s", cf_sb_str(&why));
            cf_sb_release(&why);
        }
    }
    cf_launch_acceptor_free(a, &r->strays);
    return rc;
}

int cf_rdv_open(const struct cf_rdv_opts *o, struct cf_rdv **out, cf_error *err)
{
    *out = NULL;
    if (o->world < 1 || o->rank < 0 || o->rank >= o->world) {
        if (o->listen_fd >= 0)
            close(o->listen_fd);
        return cf_error_set(err, CF_ERR_USAGE, "rendezvous: rank %d of %d is not a rank", o->rank, o->world);
    }
    struct cf_rdv *r = cf_xcalloc(1, sizeof *r);
    r->rank = o->rank;
    r->world = o->world;
    r->timeout_s = o->timeout_s;
    r->max_blob = o->max_blob ? o->max_blob : DEFAULT_MAX_BLOB;
    r->up.fd = -1;
    describe_advertised(o->addr, r->advertised, sizeof r->advertised);
    if (o->rank != 0) {
        if (o->listen_fd >= 0)
            close(o->listen_fd);
        if (cf_launch_connect(o->addr, o->port, "rank 0", o->secret, o->tag, o->rank, o->world, o->timeout_s, &r->up,
                              err) < 0) {
            free(r);
            return -1;
        }
        *out = r;
        return 0;
    }
    r->peers = cf_xcalloc((size_t)o->world, sizeof *r->peers);
    for (int i = 0; i < o->world; i++)
        r->peers[i].fd = -1;
    int listen_fd = o->listen_fd;
    if (listen_fd >= 0) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        char a[64] = "?";
        int port = 0;
        if (getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0) {
            cf_launch_addr_string(&ss, a, sizeof a);
            port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                            : ntohs(((struct sockaddr_in *)&ss)->sin_port);
        }
        snprintf(r->listen_desc, sizeof r->listen_desc, "%s:%d (a socket given by the launcher)", a, port);
    } else if (o->world > 1) {
        listen_fd = cf_launch_listen(o->port, 0, NULL, r->listen_desc, sizeof r->listen_desc, err);
        if (listen_fd < 0) {
            cf_rdv_close(r);
            return cf_error_prefix(err, "rank 0");
        }
    }
    int rc = o->world > 1 ? serve_joins(r, listen_fd, o, err) : 0;
    if (listen_fd >= 0)
        close(listen_fd); /* everyone is in: nobody else may join */
    if (rc < 0) {
        cf_rdv_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

const char *cf_rdv_listen_desc(const struct cf_rdv *r)
{
    return r->listen_desc;
}

const struct cf_launch_strays *cf_rdv_strays(const struct cf_rdv *r)
{
    return &r->strays;
}

const char *cf_rdv_advertised(const struct cf_rdv *r)
{
    return r->advertised;
}

const char *cf_rdv_peer_addr(const struct cf_rdv *r, int rank)
{
    if (r->rank != 0)
        return r->up.addr;
    return rank > 0 && rank < r->world ? r->peers[rank].addr : "";
}

int cf_rdv_bcast(struct cf_rdv *r, unsigned char **data, size_t *len, cf_error *err)
{
    double deadline = cf_now_seconds() + r->timeout_s;
    if (r->rank != 0) {
        if (cf_launch_recv(r->up.fd, data, len, r->max_blob, deadline, err) < 0)
            return cf_error_prefix(err, "rank %d waiting for rank 0's broadcast", r->rank);
        return 0;
    }
    for (int i = 1; i < r->world; i++)
        if (cf_launch_send(r->peers[i].fd, *data, *len, deadline, err) < 0)
            return cf_error_prefix(err, "rank 0 broadcasting to rank %d (%s)", i, r->peers[i].addr);
    return 0;
}

void cf_rdv_close(struct cf_rdv *r)
{
    if (!r)
        return;
    if (r->up.fd >= 0)
        close(r->up.fd);
    for (int i = 0; r->peers && i < r->world; i++)
        if (r->peers[i].fd >= 0)
            close(r->peers[i].fd);
    free(r->peers);
    free(r);
}
