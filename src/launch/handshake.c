/* The handshake of every rendezvous connection: the server sends a nonce, the client
 * answers with its tag, rank and world size and an HMAC over both nonces under the
 * run's secret, the server checks it and proves the secret back (or refuses with a
 * reason the client reports). A stray program learns nothing and costs one bounded
 * wait; a rank of another run, or with another world size, is told why. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/strbuf.h"
#include "cclforge/syscompat.h"
#include "launch/launch_internal.h"

#define ATTEMPT_S 1.0 /* one connect attempt; a dead address must not eat the whole budget */

static void put_u32(unsigned char *p, uint32_t v)
{
    uint32_t be = htonl(v);
    memcpy(p, &be, 4);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t be;
    memcpy(&be, p, 4);
    return ntohl(be);
}

void cf_launch_client_hello_put(unsigned char out[LAUNCH_CLIENT_HELLO_LEN], const struct launch_client_hello *h)
{
    memcpy(out, h->tag, LAUNCH_TAG_LEN);
    put_u32(out + LAUNCH_TAG_LEN, h->rank);
    put_u32(out + LAUNCH_TAG_LEN + 4, h->world);
    memcpy(out + LAUNCH_TAG_LEN + 8, h->nonce, LAUNCH_NONCE_LEN);
    memcpy(out + LAUNCH_TAG_LEN + 8 + LAUNCH_NONCE_LEN, h->mac, LAUNCH_MAC_LEN);
}

int cf_launch_client_hello_parse(const unsigned char *p, size_t len, struct launch_client_hello *h)
{
    if (len != LAUNCH_CLIENT_HELLO_LEN)
        return -1;
    memcpy(h->tag, p, LAUNCH_TAG_LEN);
    h->rank = get_u32(p + LAUNCH_TAG_LEN);
    h->world = get_u32(p + LAUNCH_TAG_LEN + 4);
    memcpy(h->nonce, p + LAUNCH_TAG_LEN + 8, LAUNCH_NONCE_LEN);
    memcpy(h->mac, p + LAUNCH_TAG_LEN + 8 + LAUNCH_NONCE_LEN, LAUNCH_MAC_LEN);
    return 0;
}

static void tag_field(const char *tag, char out[LAUNCH_TAG_LEN])
{
    memset(out, 0, LAUNCH_TAG_LEN);
    size_t n = strlen(tag);
    memcpy(out, tag, n < LAUNCH_TAG_LEN ? n : LAUNCH_TAG_LEN);
}

/* mac over role, tag, rank, world and the two nonces: the one who speaks first last */
static void handshake_mac(const struct cf_launch_secret *s, const char *role, const char tag[LAUNCH_TAG_LEN],
                          uint32_t rank, uint32_t world, const unsigned char *nonce_a, const unsigned char *nonce_b,
                          unsigned char out[LAUNCH_MAC_LEN])
{
    unsigned char msg[16 + LAUNCH_TAG_LEN + 8 + 2 * LAUNCH_NONCE_LEN];
    memset(msg, 0, 16);
    memcpy(msg, role, strlen(role) < 16 ? strlen(role) : 16);
    memcpy(msg + 16, tag, LAUNCH_TAG_LEN);
    put_u32(msg + 16 + LAUNCH_TAG_LEN, rank);
    put_u32(msg + 20 + LAUNCH_TAG_LEN, world);
    memcpy(msg + 24 + LAUNCH_TAG_LEN, nonce_a, LAUNCH_NONCE_LEN);
    memcpy(msg + 24 + LAUNCH_TAG_LEN + LAUNCH_NONCE_LEN, nonce_b, LAUNCH_NONCE_LEN);
    cf_launch_hmac(s->key, sizeof s->key, msg, sizeof msg, out);
}

static int same_mac(const unsigned char *a, const unsigned char *b)
{
    unsigned char d = 0; /* constant time: the comparison leaks nothing about the secret */
    for (int i = 0; i < LAUNCH_MAC_LEN; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

static int nonce(unsigned char out[LAUNCH_NONCE_LEN], cf_error *err)
{
    size_t got = 0;
    while (got < LAUNCH_NONCE_LEN) {
        ssize_t n = cf_getrandom(out + got, LAUNCH_NONCE_LEN - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return cf_error_set(err, CF_ERR_INTERNAL, "getrandom: %s", strerror(errno));
        got += (size_t)n;
    }
    return 0;
}

static int refuse(int fd, double deadline, cf_error *err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(int fd, double deadline, cf_error *err, const char *fmt, ...)
{
    char why[LAUNCH_REFUSAL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int ignored;
    /* say why, but do not wait long for a client that does not read */
    double until = cf_now_seconds() + 0.2;
    cf_launch_write_msg(fd, MSG_REFUSE, why, strlen(why), until < deadline ? until : deadline, &ignored);
    return cf_error_set(err, CF_ERR_FAILED, "%s", why);
}

int cf_launch_accept_handshake(int fd, const struct cf_launch_secret *s, const char *tag, int world,
                               const unsigned char *taken, double deadline, struct cf_launch_peer *peer,
                               cf_error *err)
{
    unsigned char nonce_s[LAUNCH_NONCE_LEN];
    int why = 0, type = 0;
    if (nonce(nonce_s, err) < 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char from[64] = "?";
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
        cf_launch_addr_string(&ss, from, sizeof from);
    if (cf_launch_write_msg(fd, MSG_SERVER_HELLO, nonce_s, sizeof nonce_s, deadline, &why) < 0)
        return cf_error_set(err, CF_ERR_FAILED, "connection from %s: %s", from, strerror(why));
    unsigned char *payload = NULL;
    size_t len = 0;
    if (cf_launch_read_msg(fd, 0, deadline, &type, &payload, &len, &why) < 0)
        return cf_error_set(err, CF_ERR_FAILED, "connection from %s did not introduce itself: %s", from,
                            why == EPROTO ? "not a cclforge rendezvous client" : strerror(why));
    struct launch_client_hello h;
    int parsed = type == MSG_CLIENT_HELLO ? cf_launch_client_hello_parse(payload, len, &h) : -1;
    free(payload);
    if (parsed < 0)
        return refuse(fd, deadline, err, "connection from %s is not a cclforge rendezvous client", from);
    char want_tag[LAUNCH_TAG_LEN];
    tag_field(tag, want_tag);
    if (memcmp(h.tag, want_tag, LAUNCH_TAG_LEN))
        return refuse(fd, deadline, err, "this port serves cclforge '%.*s', not '%.*s' (%s)", LAUNCH_TAG_LEN,
                      want_tag, LAUNCH_TAG_LEN, h.tag, from);
    unsigned char mac[LAUNCH_MAC_LEN];
    handshake_mac(s, "cclforge-client", h.tag, h.rank, h.world, nonce_s, h.nonce, mac);
    if (!same_mac(mac, h.mac))
        return refuse(fd, deadline, err,
                      "authentication failed for a connection from %s: it does not hold this run's secret (%s "
                      "differs, or it is not one of this run's ranks)",
                      from, CF_LAUNCH_SECRET_ENV);
    if (h.world != (uint32_t)world)
        return refuse(fd, deadline, err,
                      "world size mismatch: rank 0 runs %d ranks, but rank %u (%s) was started for %u: give every "
                      "rank the same world size (WORLD_SIZE, -n, --ntasks)",
                      world, h.rank, from, h.world);
    if (h.rank >= (uint32_t)world)
        return refuse(fd, deadline, err, "rank %u (%s) is outside a world of %d", h.rank, from, world);
    if (taken && taken[h.rank])
        return refuse(fd, deadline, err, "rank %u joined twice (the second time from %s): two processes have the same "
                      "rank", h.rank, from);
    handshake_mac(s, "cclforge-server", h.tag, h.rank, h.world, h.nonce, nonce_s, mac);
    if (cf_launch_write_msg(fd, MSG_WELCOME, mac, sizeof mac, deadline, &why) < 0)
        return cf_error_set(err, CF_ERR_FAILED, "rank %u (%s) left during the handshake: %s", h.rank, from,
                            strerror(why));
    peer->fd = fd;
    peer->rank = (int)h.rank;
    peer->world = (int)h.world;
    snprintf(peer->addr, sizeof peer->addr, "%s", from);
    return 0;
}

/* 0 joined, -1 retry (err: why), -2 final (refused or the server failed to prove itself) */
static int client_handshake(int fd, const struct cf_launch_secret *s, const char *tag, int rank, int world,
                            double deadline, cf_error *err)
{
    int why = 0, type = 0;
    unsigned char *payload = NULL;
    size_t len = 0;
    if (cf_launch_read_msg(fd, 0, deadline, &type, &payload, &len, &why) < 0 || type != MSG_SERVER_HELLO) {
        free(payload);
        cf_error_set(err, CF_ERR_FAILED, "no cclforge rendezvous answered: %s",
                     why == EPROTO || !why ? "another program holds the port" : strerror(why));
        return why == EPROTO || (!why && type != MSG_SERVER_HELLO) ? -2 : -1;
    }
    struct launch_client_hello h;
    tag_field(tag, h.tag);
    h.rank = (uint32_t)rank;
    h.world = (uint32_t)world;
    if (nonce(h.nonce, err) < 0) {
        free(payload);
        return -2;
    }
    handshake_mac(s, "cclforge-client", h.tag, h.rank, h.world, payload, h.nonce, h.mac);
    unsigned char nonce_s[LAUNCH_NONCE_LEN];
    memcpy(nonce_s, payload, LAUNCH_NONCE_LEN);
    free(payload);
    unsigned char out[LAUNCH_CLIENT_HELLO_LEN];
    cf_launch_client_hello_put(out, &h);
    if (cf_launch_write_msg(fd, MSG_CLIENT_HELLO, out, sizeof out, deadline, &why) < 0) {
        cf_error_set(err, CF_ERR_FAILED, "sending the hello: %s", strerror(why));
        return -1;
    }
    if (cf_launch_read_msg(fd, 0, deadline, &type, &payload, &len, &why) < 0) {
        cf_error_set(err, CF_ERR_FAILED, "waiting for rank 0's answer: %s", strerror(why));
        return -1;
    }
    int rc = 0;
    if (type == MSG_REFUSE) {
        cf_error_set(err, CF_ERR_FAILED, "refused by rank 0: %s", (const char *)payload);
        rc = -2;
    } else {
        unsigned char mac[LAUNCH_MAC_LEN];
        handshake_mac(s, "cclforge-server", h.tag, h.rank, h.world, h.nonce, nonce_s, mac);
        if (type != MSG_WELCOME || !same_mac(mac, payload)) {
            cf_error_set(err, CF_ERR_FAILED, "the server's answer failed authentication: it does not hold this "
                         "run's secret (%s)", CF_LAUNCH_SECRET_ENV);
            rc = -2;
        }
    }
    free(payload);
    return rc;
}

/* A non-blocking connect bounded by deadline; returns the fd or -1 with *why. */
static int connect_one(const struct addrinfo *a, double deadline, int *why)
{
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
        *why = errno;
        return -1;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) {
            *why = errno;
            close(fd);
            return -1;
        }
        struct pollfd pfd = { fd, POLLOUT, 0 };
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        int r;
        while ((r = poll(&pfd, 1, cf_launch_ms_left(deadline))) < 0 && errno == EINTR) {
        }
        if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
            *why = r <= 0 ? ETIMEDOUT : soerr ? soerr : errno;
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void nap(double deadline, double *backoff)
{
    double left = deadline - cf_now_seconds();
    double t = *backoff < left ? *backoff : left;
    if (t > 0) {
        struct timespec ts = { (time_t)t, (long)((t - (double)(time_t)t) * 1e9) };
        nanosleep(&ts, NULL);
    }
    *backoff = *backoff * 2 < 1.0 ? *backoff * 2 : 1.0;
}

int cf_launch_connect(const char *addr, int port, const struct cf_launch_secret *s, const char *tag, int rank,
                      int world, double timeout_s, struct cf_launch_peer *peer, cf_error *err)
{
    double deadline = cf_now_seconds() + timeout_s;
    double backoff = 0.02;
    int attempts = 0;
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    struct strbuf last = STRBUF_INIT;
    cf_sb_adds(&last, "none");
    for (;;) {
        struct addrinfo hints, *ai = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        int gai = getaddrinfo(addr, port_s, &hints, &ai);
        if (gai) {
            cf_sb_reset(&last);
            cf_sb_addf(&last, "cannot resolve %s: %s", addr, gai_strerror(gai));
        }
        for (struct addrinfo *a = gai ? NULL : ai; a; a = a->ai_next) {
            int why = 0;
            double attempt = cf_now_seconds() + ATTEMPT_S;
            int fd = connect_one(a, attempt < deadline ? attempt : deadline, &why);
            attempts++;
            char where[64];
            cf_launch_addr_string(a->ai_addr, where, sizeof where);
            if (fd < 0) {
                cf_sb_reset(&last);
                cf_sb_addf(&last, "%s: %s", where, strerror(why));
                continue;
            }
            cf_error herr = CF_ERROR_INIT;
            int rc = client_handshake(fd, s, tag, rank, world, deadline, &herr);
            if (rc == 0) {
                /* joined: plain blocking writes from here on (records, blobs) */
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
                freeaddrinfo(ai);
                cf_sb_release(&last);
                peer->fd = fd;
                peer->rank = 0;
                peer->world = world;
                snprintf(peer->addr, sizeof peer->addr, "%s", where);
                return 0;
            }
            close(fd);
            cf_sb_reset(&last);
            cf_sb_addf(&last, "%s: %s", where, cf_error_message(&herr));
            cf_error_clear(&herr);
            if (rc == -2) {
                freeaddrinfo(ai);
                cf_error_set(err, CF_ERR_FAILED, "rank %d reaching rank 0 at %s:%d: %s", rank, addr, port,
                             cf_sb_str(&last));
                cf_sb_release(&last);
                return -1;
            }
        }
        if (ai)
            freeaddrinfo(ai);
        if (cf_now_seconds() >= deadline)
            break;
        nap(deadline, &backoff);
    }
    cf_error_set(err, CF_ERR_FAILED,
                 "rank %d could not reach rank 0 at %s:%d within %.0f s (%d attempts, last: %s)", rank, addr, port,
                 timeout_s, attempts, cf_sb_str(&last));
    cf_sb_release(&last);
    return -1;
}

int cf_launch_accept_peer(int listen_fd, const struct cf_launch_secret *s, const char *tag, int world,
                          unsigned char *taken, double deadline, struct cf_launch_peer *peer, cf_error *err)
{
    const double one_client_s = 2.0;
    int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0)
        return 1;
    double until = cf_now_seconds() + one_client_s;
    if (cf_launch_accept_handshake(c, s, tag, world, taken, until < deadline ? until : deadline, peer, err) < 0) {
        close(c);
        return -1;
    }
    if (taken)
        taken[peer->rank] = 1;
    return 0;
}
