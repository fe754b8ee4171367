/* Rank 0 hands a blob (the NCCL unique id) to every other rank over TCP, with bounded
 * retries and timeouts: peers that start before rank 0 listens retry with backoff;
 * nobody waits longer than the rendezvous timeout. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "smoke/smoke_internal.h"

#define MAGIC "CFSMOKE1"
#define MAGIC_LEN 8
#define MAX_BLOB 4096

static int remaining_ms(double deadline)
{
    double left = deadline - cf_now_seconds();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* Reads or writes exactly len bytes before the deadline. */
static int io_full(int fd, void *buf, size_t len, int writing, double deadline)
{
    char *p = buf;
    while (len) {
        struct pollfd pfd = { fd, writing ? POLLOUT : POLLIN, 0 };
        int ms = remaining_ms(deadline);
        if (ms == 0)
            return -1;
        int r = poll(&pfd, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int resolve(const char *addr, int port, int passive, struct addrinfo **out, cf_error *err)
{
    char port_s[16];
    snprintf(port_s, sizeof port_s, "%d", port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    int rc = getaddrinfo(addr && *addr ? addr : NULL, port_s, &hints, out);
    if (rc)
        return cf_error_set(err, CF_ERR_FAILED, "cannot resolve %s:%d: %s", addr ? addr : "*", port,
                            gai_strerror(rc));
    return 0;
}

int cf_smoke_tcp_listen(const char *addr, int port, int *port_out, cf_error *err)
{
    struct addrinfo *ai;
    if (resolve(addr, port, 1, &ai, err) < 0)
        return -1;
    int fd = -1, last_errno = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 256)) {
            last_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return cf_error_set(err, CF_ERR_FAILED, "cannot listen on %s:%d: %s (is the port in use?)",
                            addr ? addr : "*", port, strerror(last_errno));
    if (port_out) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        getsockname(fd, (struct sockaddr *)&ss, &sl);
        *port_out = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                             : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    return fd;
}

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

static int serve(const struct smoke_rendezvous *rdv, int nranks, const void *data, size_t len, cf_error *err)
{
    int fd = rdv->listen_fd;
    if (fd < 0 && (fd = cf_smoke_tcp_listen(rdv->addr, rdv->port, NULL, err)) < 0)
        return -1;
    double deadline = cf_now_seconds() + rdv->timeout_s;
    unsigned char *seen = cf_xcalloc((size_t)nranks, 1);
    int served = 0, rc = 0;
    unsigned char reply[MAGIC_LEN + 4 + MAX_BLOB];
    memcpy(reply, MAGIC, MAGIC_LEN);
    put_u32(reply + MAGIC_LEN, (uint32_t)len);
    memcpy(reply + MAGIC_LEN + 4, data, len);
    while (served < nranks - 1) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        int ms = remaining_ms(deadline);
        int r = ms ? poll(&pfd, 1, ms) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = cf_error_set(err, CF_ERR_FAILED,
                              "rank 0: only %d of %d ranks fetched the unique id from %s:%d within %.0f s",
                              served, nranks - 1, rdv->addr, rdv->port, rdv->timeout_s);
            break;
        }
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
            continue;
        unsigned char hello[MAGIC_LEN + 8];
        /* a stray or slow client costs at most a second, never the whole rendezvous */
        double client_deadline = cf_now_seconds() + 1.0;
        if (client_deadline > deadline)
            client_deadline = deadline;
        if (io_full(c, hello, sizeof hello, 0, client_deadline) == 0 && !memcmp(hello, MAGIC, MAGIC_LEN)) {
            uint32_t peer = get_u32(hello + MAGIC_LEN), peer_n = get_u32(hello + MAGIC_LEN + 4);
            if (peer_n == (uint32_t)nranks && peer > 0 && peer < (uint32_t)nranks && !seen[peer] &&
                io_full(c, reply, MAGIC_LEN + 4 + len, 1, client_deadline) == 0) {
                seen[peer] = 1;
                served++;
            }
        }
        close(c);
    }
    free(seen);
    close(fd);
    return rc;
}

static int try_fetch(const struct addrinfo *a, int rank, int nranks, void *data, size_t len, double deadline,
                     int *why)
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
        int ms = remaining_ms(deadline);
        if (poll(&pfd, 1, ms < 1000 ? ms : 1000) <= 0 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr) {
            *why = soerr ? soerr : ETIMEDOUT;
            close(fd);
            return -1;
        }
    }
    unsigned char hello[MAGIC_LEN + 8];
    memcpy(hello, MAGIC, MAGIC_LEN);
    put_u32(hello + MAGIC_LEN, (uint32_t)rank);
    put_u32(hello + MAGIC_LEN + 4, (uint32_t)nranks);
    unsigned char head[MAGIC_LEN + 4];
    int rc = -1;
    if (io_full(fd, hello, sizeof hello, 1, deadline) == 0 && io_full(fd, head, sizeof head, 0, deadline) == 0 &&
        !memcmp(head, MAGIC, MAGIC_LEN) && get_u32(head + MAGIC_LEN) == len &&
        io_full(fd, data, len, 0, deadline) == 0)
        rc = 0;
    if (rc)
        *why = EPROTO;
    close(fd);
    return rc;
}

/* Sleeps *backoff (no later than the deadline) and doubles it, up to 1 s;
 * 0 without sleeping when the deadline has passed. */
static int backoff_sleep(double deadline, double *backoff)
{
    double left = deadline - cf_now_seconds();
    if (left <= 0)
        return 0;
    double nap = *backoff < left ? *backoff : left;
    struct timespec ts = { (time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9) };
    nanosleep(&ts, NULL);
    *backoff = *backoff * 2 < 1.0 ? *backoff * 2 : 1.0;
    return 1;
}

static int fetch(const struct smoke_rendezvous *rdv, int rank, int nranks, void *data, size_t len, cf_error *err)
{
    double deadline = cf_now_seconds() + rdv->timeout_s;
    double backoff = 0.02;
    int why = 0, attempts = 0;
    while (1) {
        struct addrinfo *ai;
        cf_error rerr = CF_ERROR_INIT;
        if (resolve(rdv->addr, rdv->port, 0, &ai, &rerr) == 0) {
            for (struct addrinfo *a = ai; a; a = a->ai_next)
                if (try_fetch(a, rank, nranks, data, len, deadline, &why) == 0) {
                    freeaddrinfo(ai);
                    return 0;
                }
            freeaddrinfo(ai);
        } else {
            why = EHOSTUNREACH;
        }
        cf_error_clear(&rerr);
        attempts++;
        if (!backoff_sleep(deadline, &backoff))
            break;
    }
    return cf_error_set(err, CF_ERR_FAILED,
                        "rank %d could not fetch the unique id from rank 0 at %s:%d within %.0f s (%d attempts, "
                        "last error: %s)",
                        rank, rdv->addr, rdv->port, rdv->timeout_s, attempts, strerror(why));
}

int cf_smoke_tcp_share(const struct smoke_rendezvous *rdv, int rank, int nranks, void *data, size_t len, cf_error *err)
{
    if (len > MAX_BLOB)
        return cf_error_set(err, CF_ERR_INTERNAL, "rendezvous blob of %zu bytes is too large", len);
    if (nranks < 2)
        return 0;
    return rank == 0 ? serve(rdv, nranks, data, len, err) : fetch(rdv, rank, nranks, data, len, err);
}

int cf_smoke_tcp_connect(const char *addr, int port, double timeout_s, cf_error *err)
{
    double deadline = cf_now_seconds() + timeout_s;
    double backoff = 0.02;
    int why = 0;
    while (1) {
        struct addrinfo *ai;
        cf_error rerr = CF_ERROR_INIT;
        if (resolve(addr, port, 0, &ai, &rerr) == 0) {
            for (struct addrinfo *a = ai; a; a = a->ai_next) {
                int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
                if (fd < 0) {
                    why = errno;
                    continue;
                }
                if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                    freeaddrinfo(ai);
                    return fd;
                }
                why = errno;
                close(fd);
            }
            freeaddrinfo(ai);
        }
        cf_error_clear(&rerr);
        if (!backoff_sleep(deadline, &backoff))
            break;
    }
    return cf_error_set(err, CF_ERR_FAILED, "cannot connect to %s:%d within %.0f s: %s", addr, port, timeout_s,
                        strerror(why));
}

uint64_t cf_smoke_fnv1a(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
