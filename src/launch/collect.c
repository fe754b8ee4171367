/* Tolerant collection to rank 0 (cclforge/launch_collect.h): every rank that
 * answers by the deadline is heard, the others are named; connections that
 * never become a rank are strays, counted apart (acceptor.c). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/launch_collect.h"
#include "launch/launch_internal.h"

#define ONE_CLIENT_S 2.0 /* how long one connection may take to prove it is a rank */

static void init(struct cf_collected *c, int world)
{
    memset(c, 0, sizeof *c);
    c->world = world;
    c->blobs = cf_xcalloc((size_t)world, sizeof *c->blobs);
    c->lens = cf_xcalloc((size_t)world, sizeof *c->lens);
    c->fds = cf_xcalloc((size_t)world, sizeof *c->fds);
    c->addrs = cf_xcalloc((size_t)world, sizeof *c->addrs);
    for (int i = 0; i < world; i++)
        c->fds[i] = -1;
}

void cf_launch_collect(int listen_fd, const struct cf_launch_secret *s, const char *tag, int world, double timeout_s,
                       size_t max_blob, struct cf_collected *out)
{
    init(out, world);
    double deadline = cf_now_seconds() + timeout_s;
    struct cf_launch_acceptor_opts ao = { listen_fd, s, tag, world, ONE_CLIENT_S, 0 };
    struct cf_launch_acceptor *a = cf_launch_acceptor_new(&ao);
    cf_launch_acceptor_claim(a, 0);
    int pending = world - 1; /* ranks whose blob has not arrived */
    struct strbuf refused = STRBUF_INIT;
    int nrefused = 0;
    /* every joined rank whose blob is still coming; the acceptor adds its own fds */
    struct pollfd *pfd = cf_xcalloc((size_t)world + 1, sizeof *pfd);
    int *who = cf_xcalloc((size_t)world, sizeof *who);
    while (pending > 0) {
        int n = 0;
        for (int r = 1; r < world; r++)
            if (out->fds[r] >= 0 && !out->blobs[r]) {
                pfd[n] = (struct pollfd){ out->fds[r], POLLIN, 0 };
                who[n++] = r;
            }
        int ms = cf_launch_ms_left(deadline);
        if (!ms)
            break;
        if (cf_launch_acceptor_poll(a, pfd, n, ms) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        struct cf_launch_event ev;
        while (cf_launch_acceptor_next(a, &ev)) {
            if (ev.refused == CF_REFUSAL_NONE) {
                out->fds[ev.peer.rank] = ev.peer.fd;
                memcpy(out->addrs[ev.peer.rank], ev.peer.addr, sizeof out->addrs[0]);
            } else if (nrefused++ < 3) { /* one of this run's ranks, refused after it proved the secret */
                if (refused.len)
                    cf_sb_adds(&refused, "; ");
                cf_launch_event_describe(&ev, world, &refused);
            }
        }
        for (int i = 0; i < n; i++) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            int r = who[i];
            cf_error rerr = CF_ERROR_INIT;
            if (cf_launch_recv(out->fds[r], &out->blobs[r], &out->lens[r], max_blob, deadline, &rerr) < 0) {
                close(out->fds[r]); /* it died mid-way: it counts as missing */
                out->fds[r] = -1;
                out->blobs[r] = NULL;
            } else {
                pending--;
            }
            cf_error_clear(&rerr);
        }
    }
    free(pfd);
    free(who);
    cf_launch_acceptor_free(a, &out->strays);
    close(listen_fd);
    for (int r = 1; r < world; r++)
        out->n_missing += out->blobs[r] == NULL;
    out->refused = refused.len ? cf_sb_detach(&refused) : NULL;
    cf_sb_release(&refused);
}

void cf_launch_collect_reply(struct cf_collected *c, const void *reply, size_t len, double timeout_s)
{
    double deadline = cf_now_seconds() + timeout_s;
    for (int r = 1; r < c->world; r++) {
        if (c->fds[r] < 0)
            continue;
        cf_error err = CF_ERROR_INIT;
        if (c->blobs[r])
            cf_launch_send(c->fds[r], reply, len, deadline, &err);
        cf_error_clear(&err);
        close(c->fds[r]);
        c->fds[r] = -1;
    }
}

void cf_collected_release(struct cf_collected *c)
{
    for (int r = 0; c->blobs && r < c->world; r++) {
        free(c->blobs[r]);
        if (c->fds[r] >= 0)
            close(c->fds[r]);
    }
    free(c->blobs);
    free(c->lens);
    free(c->fds);
    free(c->addrs);
    free(c->refused);
    memset(c, 0, sizeof *c);
}

int cf_launch_send_collect(const char *addr, int port, const struct cf_launch_secret *s, const char *tag, int rank,
                           int world, const void *blob, size_t len, double timeout_s, double reply_timeout_s,
                           unsigned char **reply, size_t *reply_len, cf_error *err)
{
    *reply = NULL;
    *reply_len = 0;
    struct cf_launch_peer peer;
    if (cf_launch_connect(addr, port, "rank 0", s, tag, rank, world, timeout_s, &peer, err) < 0)
        return -1;
    int rc = cf_launch_send(peer.fd, blob, len, cf_now_seconds() + timeout_s, err);
    if (rc == 0)
        rc = cf_launch_recv(peer.fd, reply, reply_len, 1 << 16, cf_now_seconds() + reply_timeout_s, err);
    close(peer.fd);
    return rc;
}
