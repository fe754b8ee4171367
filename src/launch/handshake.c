/* The handshake of every rendezvous connection, its wire pieces and its client
 * side: the server sends a nonce, the client answers with its tag, rank and world
 * size and an HMAC over both nonces under the run's secret, the server checks it
 * and proves the secret back, or refuses with a code (refusal.c) that it MACs
 * too once the client proved itself. The server side is acceptor.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
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

void cf_launch_refusal_put(unsigned char out[LAUNCH_REFUSAL_LEN], const struct launch_refusal *r)
{
    out[0] = r->code;
    put_u32(out + 1, r->value);
    memcpy(out + 5, r->mac, LAUNCH_MAC_LEN);
}

int cf_launch_refusal_parse(const unsigned char *p, size_t len, struct launch_refusal *r)
{
    if (len != LAUNCH_REFUSAL_LEN)
        return -1;
    r->code = p[0];
    r->value = get_u32(p + 1);
    memcpy(r->mac, p + 5, LAUNCH_MAC_LEN);
    return 0;
}

void cf_launch_tag_field(const char *tag, char out[LAUNCH_TAG_LEN])
{
    memset(out, 0, LAUNCH_TAG_LEN);
    size_t n = strlen(tag);
    memcpy(out, tag, n < LAUNCH_TAG_LEN ? n : LAUNCH_TAG_LEN);
}

void cf_launch_handshake_mac(const struct cf_launch_secret *s, const char *role, const char tag[LAUNCH_TAG_LEN],
                             uint32_t rank, uint32_t world, const unsigned char *nonce_a,
                             const unsigned char *nonce_b, const unsigned char *extra, size_t extra_len,
                             unsigned char out[LAUNCH_MAC_LEN])
{
    unsigned char msg[16 + LAUNCH_TAG_LEN + 8 + 2 * LAUNCH_NONCE_LEN + 8];
    size_t n = 16 + LAUNCH_TAG_LEN + 8 + 2 * LAUNCH_NONCE_LEN;
    memset(msg, 0, 16);
    memcpy(msg, role, strlen(role) < 16 ? strlen(role) : 16);
    memcpy(msg + 16, tag, LAUNCH_TAG_LEN);
    put_u32(msg + 16 + LAUNCH_TAG_LEN, rank);
    put_u32(msg + 20 + LAUNCH_TAG_LEN, world);
    memcpy(msg + 24 + LAUNCH_TAG_LEN, nonce_a, LAUNCH_NONCE_LEN);
    memcpy(msg + 24 + LAUNCH_TAG_LEN + LAUNCH_NONCE_LEN, nonce_b, LAUNCH_NONCE_LEN);
    if (extra && extra_len <= sizeof msg - n) {
        memcpy(msg + n, extra, extra_len);
        n += extra_len;
    }
    cf_launch_hmac(s->key, sizeof s->key, msg, n, out);
}

void cf_launch_refusal_mac(const struct cf_launch_secret *s, const struct launch_client_hello *h,
                           const unsigned char nonce_s[LAUNCH_NONCE_LEN], struct launch_refusal *r)
{
    unsigned char extra[5];
    extra[0] = r->code;
    put_u32(extra + 1, r->value);
    cf_launch_handshake_mac(s, "cclforge-refusal", h->tag, h->rank, h->world, h->nonce, nonce_s, extra,
                            sizeof extra, r->mac);
}

int cf_launch_same_mac(const unsigned char *a, const unsigned char *b)
{
    unsigned char d = 0; /* constant time: the comparison leaks nothing about the secret */
    for (int i = 0; i < LAUNCH_MAC_LEN; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

int cf_launch_nonce(unsigned char out[LAUNCH_NONCE_LEN], cf_error *err)
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

int cf_launch_client_handshake(int fd, const struct cf_launch_secret *s, const char *tag, int rank, int world,
                               const char *server, double deadline, cf_error *err)
{
    int why = 0, type = 0;
    unsigned char *payload = NULL;
    size_t len = 0;
    if (cf_launch_read_msg(fd, 0, deadline, &type, &payload, &len, &why) < 0 || type != MSG_SERVER_HELLO) {
        free(payload);
        int garbled = why == EPROTO || (!why && type != MSG_SERVER_HELLO);
        cf_error_set(err, CF_ERR_FAILED, "no cclforge rendezvous answered: %s",
                     why == EPROTONOSUPPORT ? "a cclforge of another rendezvous protocol version holds the port "
                                              "(run the same cclforge on every rank)"
                     : garbled ? "another program holds the port"
                               : strerror(why));
        return garbled || why == EPROTONOSUPPORT ? -2 : -1;
    }
    struct launch_client_hello h;
    cf_launch_tag_field(tag, h.tag);
    h.rank = (uint32_t)rank;
    h.world = (uint32_t)world;
    if (cf_launch_nonce(h.nonce, err) < 0) {
        free(payload);
        return -2;
    }
    unsigned char nonce_s[LAUNCH_NONCE_LEN];
    memcpy(nonce_s, payload, LAUNCH_NONCE_LEN);
    free(payload);
    cf_launch_handshake_mac(s, "cclforge-client", h.tag, h.rank, h.world, nonce_s, h.nonce, NULL, 0, h.mac);
    unsigned char out[LAUNCH_CLIENT_HELLO_LEN];
    cf_launch_client_hello_put(out, &h);
    if (cf_launch_write_msg(fd, MSG_CLIENT_HELLO, out, sizeof out, deadline, &why) < 0) {
        cf_error_set(err, CF_ERR_FAILED, "sending the hello: %s", strerror(why));
        return -1;
    }
    if (cf_launch_read_msg(fd, 0, deadline, &type, &payload, &len, &why) < 0) {
        int garbled = why == EPROTO || why == EPROTONOSUPPORT;
        cf_error_set(err, CF_ERR_FAILED, "waiting for %s's answer: %s", server,
                     garbled ? "it is not a message of this cclforge's rendezvous protocol" : strerror(why));
        return garbled ? -2 : -1;
    }
    int rc = -2;
    struct launch_refusal refusal;
    if (type == MSG_REFUSE && cf_launch_refusal_parse(payload, len, &refusal) == 0) {
        /* the code chooses our sentence; its number counts only if the refusal proves the secret */
        struct launch_refusal check = refusal;
        cf_launch_refusal_mac(s, &h, nonce_s, &check);
        int authentic = cf_launch_same_mac(check.mac, refusal.mac);
        struct strbuf text = STRBUF_INIT;
        cf_launch_refusal_client_text(refusal.code, refusal.value, authentic, server, tag, rank, world, &text);
        cf_error_set(err, CF_ERR_FAILED, "%s", cf_sb_str(&text));
        cf_sb_release(&text);
    } else {
        unsigned char mac[LAUNCH_MAC_LEN];
        cf_launch_handshake_mac(s, "cclforge-server", h.tag, h.rank, h.world, h.nonce, nonce_s, NULL, 0, mac);
        if (type == MSG_WELCOME && cf_launch_same_mac(mac, payload))
            rc = 0;
        else
            cf_error_set(err, CF_ERR_FAILED, "the answer of %s failed authentication: it does not hold this "
                         "run's secret (%s)", server, CF_LAUNCH_SECRET_ENV);
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

int cf_launch_connect(const char *addr, int port, const char *server, const struct cf_launch_secret *s,
                      const char *tag, int rank, int world, double timeout_s, struct cf_launch_peer *peer,
                      cf_error *err)
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
            int rc = cf_launch_client_handshake(fd, s, tag, rank, world, server, deadline, &herr);
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
                cf_error_set(err, CF_ERR_FAILED, "rank %d reaching %s at %s:%d: %s", rank, server, addr, port,
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
                 "rank %d could not reach %s at %s:%d within %.0f s (%d attempts, last: %s)", rank, server, addr,
                 port, timeout_s, attempts, cf_sb_str(&last));
    cf_sb_release(&last);
    return -1;
}
