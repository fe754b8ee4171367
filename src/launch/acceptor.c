/* The server side of the handshake, for every pending connection of a port at
 * once (cclforge/launch.h): one poll over the listening socket and all pending
 * handshakes, each with its own deadline, so a connection that never speaks
 * costs the others nothing. Nothing here blocks: the server's hello, welcome and
 * refusals are a few dozen bytes written once into an empty socket buffer, and
 * the client's hello is gathered as it arrives. A connection becomes a rank only
 * when its MAC verified; every other one is a stray, counted and closed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "launch/launch_internal.h"

#define DEFAULT_MAX_PENDING 256
/* accepts per round: the hellos of connections already pending are read between
 * bursts, so a flood of new ones does not push a real rank out before it spoke */
#define ACCEPT_BURST 64
/* out of file descriptors with nothing pending to close: stop accepting this long */
#define FD_PAUSE_S 0.05

struct pending {
    int fd;
    double since, deadline;
    unsigned char nonce[LAUNCH_NONCE_LEN];
    unsigned char buf[LAUNCH_HEADER_LEN + LAUNCH_CLIENT_HELLO_LEN];
    size_t have;
    char addr[64];
};

struct cf_launch_acceptor {
    struct cf_launch_acceptor_opts o;
    char tag[LAUNCH_TAG_LEN];
    unsigned char *taken; /* [world]: ranks that joined */
    struct pending *p;
    int n;
    struct cf_launch_event *ev;
    size_t n_ev, ev_head, ev_cap;
    struct cf_launch_strays strays;
    struct pollfd *pfd;
    size_t pfd_cap;
    double paused_until;
};

struct cf_launch_acceptor *cf_launch_acceptor_new(const struct cf_launch_acceptor_opts *o)
{
    struct cf_launch_acceptor *a = cf_xcalloc(1, sizeof *a);
    a->o = *o;
    if (a->o.max_pending <= 0)
        a->o.max_pending = DEFAULT_MAX_PENDING;
    if (a->o.world < 1)
        a->o.world = 1;
    cf_launch_tag_field(o->tag, a->tag);
    a->taken = cf_xcalloc((size_t)a->o.world, 1);
    a->p = cf_xcalloc((size_t)a->o.max_pending, sizeof *a->p);
    if (o->listen_fd >= 0) /* accept in bursts until EAGAIN */
        fcntl(o->listen_fd, F_SETFL, fcntl(o->listen_fd, F_GETFL) | O_NONBLOCK);
    return a;
}

void cf_launch_acceptor_claim(struct cf_launch_acceptor *a, int rank)
{
    if (rank >= 0 && rank < a->o.world)
        a->taken[rank] = 1;
}

int cf_launch_acceptor_pending(const struct cf_launch_acceptor *a)
{
    return a->n;
}

const struct cf_launch_strays *cf_launch_acceptor_strays(const struct cf_launch_acceptor *a)
{
    return &a->strays;
}

static void push_event(struct cf_launch_acceptor *a, const struct cf_launch_event *ev)
{
    if (a->n_ev == a->ev_cap) {
        a->ev_cap = a->ev_cap ? 2 * a->ev_cap : 8;
        a->ev = cf_xrealloc(a->ev, a->ev_cap * sizeof *a->ev);
    }
    a->ev[a->n_ev++] = *ev;
}

int cf_launch_acceptor_next(struct cf_launch_acceptor *a, struct cf_launch_event *ev)
{
    if (a->ev_head == a->n_ev)
        return 0;
    *ev = a->ev[a->ev_head++];
    if (a->ev_head == a->n_ev)
        a->ev_head = a->n_ev = 0;
    return 1;
}

/* Removes pending i (the last one takes its place); closes it unless it joined. */
static void drop(struct cf_launch_acceptor *a, int i, enum cf_launch_stray_kind kind, int keep_fd)
{
    if (kind < CF_STRAY_KINDS)
        cf_launch_strays_add(&a->strays, kind, a->p[i].addr);
    if (!keep_fd)
        close(a->p[i].fd);
    a->p[i] = a->p[--a->n];
}

/* One message in one non-blocking write: it fits an empty socket buffer, and a
 * client that does not read is not waited for. */
static int send_now(int fd, int type, const void *payload, size_t len)
{
    unsigned char msg[LAUNCH_HEADER_LEN + LAUNCH_REFUSAL_LEN + LAUNCH_MAC_LEN];
    if (len > sizeof msg - LAUNCH_HEADER_LEN)
        return -1;
    cf_launch_header_put(msg, type, (uint32_t)len);
    memcpy(msg + LAUNCH_HEADER_LEN, payload, len);
    ssize_t n;
    while ((n = send(fd, msg, LAUNCH_HEADER_LEN + len, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR) {
    }
    return n == (ssize_t)(LAUNCH_HEADER_LEN + len) ? 0 : -1;
}

/* A refusal: MAC'd when the client proved the secret (h not NULL), zero otherwise. */
static void refuse(struct cf_launch_acceptor *a, const struct pending *p, enum cf_launch_refusal code,
                   const struct launch_client_hello *h)
{
    struct launch_refusal r;
    memset(&r, 0, sizeof r);
    r.code = (unsigned char)code;
    if (h) {
        r.value = (uint32_t)a->o.world;
        cf_launch_refusal_mac(a->o.secret, h, p->nonce, &r);
    }
    unsigned char out[LAUNCH_REFUSAL_LEN];
    cf_launch_refusal_put(out, &r);
    send_now(p->fd, MSG_REFUSE, out, sizeof out);
}

static void evict_oldest(struct cf_launch_acceptor *a)
{
    int old = 0;
    for (int i = 1; i < a->n; i++)
        if (a->p[i].since < a->p[old].since)
            old = i;
    drop(a, old, CF_STRAY_EVICTED, 0);
}

void cf_launch_acceptor_adopt(struct cf_launch_acceptor *a, int fd)
{
    if (a->n == a->o.max_pending)
        evict_oldest(a);
    struct pending *p = &a->p[a->n];
    memset(p, 0, sizeof *p);
    p->fd = fd;
    p->since = cf_now_seconds();
    p->deadline = p->since + a->o.per_conn_s;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        cf_launch_addr_string(&ss, p->addr, sizeof p->addr);
    else
        snprintf(p->addr, sizeof p->addr, "?");
    a->n++;
    if (cf_launch_nonce(p->nonce, NULL) < 0 || send_now(fd, MSG_SERVER_HELLO, p->nonce, sizeof p->nonce) < 0)
        drop(a, a->n - 1, CF_STRAY_LEFT, 0);
}

/* The whole hello is here: a rank, a refused rank of this run, or a stray. */
static void finish(struct cf_launch_acceptor *a, int i)
{
    struct pending *p = &a->p[i];
    struct launch_client_hello h;
    if (cf_launch_client_hello_parse(p->buf + LAUNCH_HEADER_LEN, LAUNCH_CLIENT_HELLO_LEN, &h) < 0) {
        refuse(a, p, CF_REFUSAL_NOT_CLIENT, NULL);
        drop(a, i, CF_STRAY_NOT_CLIENT, 0);
        return;
    }
    enum cf_launch_refusal code = CF_REFUSAL_NONE;
    unsigned char mac[LAUNCH_MAC_LEN];
    if (memcmp(h.tag, a->tag, LAUNCH_TAG_LEN))
        code = CF_REFUSAL_WRONG_TAG;
    if (!code) {
        cf_launch_handshake_mac(a->o.secret, "cclforge-client", h.tag, h.rank, h.world, p->nonce, h.nonce, NULL, 0,
                                mac);
        if (!cf_launch_same_mac(mac, h.mac))
            code = CF_REFUSAL_BAD_MAC;
    }
    if (code) { /* before the secret was proved: a code, and nothing else, goes back */
        refuse(a, p, code, NULL);
        drop(a, i, cf_launch_refusal_stray(code), 0);
        return;
    }
    /* one of this run's ranks: what is wrong with it may end the rendezvous */
    code = h.world != (uint32_t)a->o.world ? CF_REFUSAL_WORLD
           : h.rank >= (uint32_t)a->o.world ? CF_REFUSAL_RANK
           : a->taken[h.rank]                ? CF_REFUSAL_TWICE
                                             : CF_REFUSAL_NONE;
    struct cf_launch_event ev;
    memset(&ev, 0, sizeof ev);
    ev.refused = code;
    ev.claimed_rank = h.rank;
    ev.claimed_world = h.world;
    memcpy(ev.peer.addr, p->addr, sizeof ev.peer.addr);
    ev.peer.fd = -1;
    if (code) {
        refuse(a, p, code, &h);
        push_event(a, &ev);
        drop(a, i, CF_STRAY_KINDS, 0);
        return;
    }
    cf_launch_handshake_mac(a->o.secret, "cclforge-server", h.tag, h.rank, h.world, h.nonce, p->nonce, NULL, 0, mac);
    if (send_now(p->fd, MSG_WELCOME, mac, sizeof mac) < 0) {
        drop(a, i, CF_STRAY_LEFT, 0); /* it will try again */
        return;
    }
    a->taken[h.rank] = 1;
    ev.peer.fd = p->fd;
    ev.peer.rank = (int)h.rank;
    ev.peer.world = (int)h.world;
    push_event(a, &ev);
    drop(a, i, CF_STRAY_KINDS, 1);
}

/* Reads what has arrived of pending i's hello, without waiting. */
static void advance(struct cf_launch_acceptor *a, int i)
{
    struct pending *p = &a->p[i];
    for (;;) {
        size_t need = p->have < LAUNCH_HEADER_LEN ? LAUNCH_HEADER_LEN : sizeof p->buf;
        ssize_t n = recv(p->fd, p->buf + p->have, need - p->have, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            drop(a, i, CF_STRAY_LEFT, 0);
            return;
        }
        p->have += (size_t)n;
        if (p->have == LAUNCH_HEADER_LEN) {
            int type;
            uint32_t len;
            if (cf_launch_header_parse(p->buf, 0, &type, &len) < 0 || type != MSG_CLIENT_HELLO) {
                refuse(a, p, CF_REFUSAL_NOT_CLIENT, NULL);
                drop(a, i, CF_STRAY_NOT_CLIENT, 0);
                return;
            }
        }
        if (p->have == sizeof p->buf) {
            finish(a, i);
            return;
        }
    }
}

static void accept_burst(struct cf_launch_acceptor *a, double now)
{
    for (int k = 0; k < ACCEPT_BURST; k++) {
        int c = accept4(a->o.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c >= 0) {
            cf_launch_acceptor_adopt(a, c);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue;
        if ((errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) && a->n) {
            evict_oldest(a); /* an fd for the next one */
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            a->paused_until = now + FD_PAUSE_S;
        return;
    }
}

int cf_launch_acceptor_poll(struct cf_launch_acceptor *a, struct pollfd *extra, int n_extra, int ms)
{
    double now = cf_now_seconds();
    int listening = a->o.listen_fd >= 0 && now >= a->paused_until;
    size_t total = (size_t)n_extra + (size_t)listening + (size_t)a->n;
    if (total > a->pfd_cap) {
        a->pfd_cap = total;
        a->pfd = cf_xrealloc(a->pfd, a->pfd_cap * sizeof *a->pfd);
    }
    struct pollfd *pfd = a->pfd;
    for (int i = 0; i < n_extra; i++)
        pfd[i] = (struct pollfd){ extra[i].fd, extra[i].events, 0 };
    int base = n_extra;
    if (listening)
        pfd[base++] = (struct pollfd){ a->o.listen_fd, POLLIN, 0 };
    double soonest = a->o.listen_fd >= 0 && !listening ? a->paused_until : 0;
    for (int i = 0; i < a->n; i++) {
        pfd[base + i] = (struct pollfd){ a->p[i].fd, POLLIN, 0 };
        if (!soonest || a->p[i].deadline < soonest)
            soonest = a->p[i].deadline;
    }
    if (soonest) {
        int left = cf_launch_ms_left(soonest);
        if (ms < 0 || left < ms)
            ms = left;
    }
    int r = poll(pfd, (nfds_t)total, ms);
    if (r < 0)
        return -1;
    int ready = 0;
    for (int i = 0; i < n_extra; i++) {
        extra[i].revents = pfd[i].revents;
        ready += pfd[i].revents != 0;
    }
    /* downwards: a removal moves the last one, already seen, into the hole */
    for (int i = a->n - 1; i >= 0; i--)
        if (pfd[base + i].revents)
            advance(a, i);
    now = cf_now_seconds();
    for (int i = a->n - 1; i >= 0; i--)
        if (a->p[i].deadline <= now)
            drop(a, i, CF_STRAY_SILENT, 0);
    if (listening && pfd[n_extra].revents)
        accept_burst(a, now);
    return ready;
}

void cf_launch_acceptor_free(struct cf_launch_acceptor *a, struct cf_launch_strays *strays)
{
    if (!a)
        return;
    while (a->n)
        drop(a, a->n - 1, CF_STRAY_SILENT, 0);
    for (size_t i = a->ev_head; i < a->n_ev; i++)
        if (a->ev[i].peer.fd >= 0)
            close(a->ev[i].peer.fd);
    if (strays)
        *strays = a->strays;
    free(a->taken);
    free(a->p);
    free(a->ev);
    free(a->pfd);
    free(a);
}
