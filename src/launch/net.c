/* Bounded socket I/O: listening on every address of a port, reading and writing
 * exactly n bytes before a deadline, and framed messages. Nothing here waits
 * without a deadline, and no write can raise SIGPIPE (MSG_NOSIGNAL). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/strbuf.h"
#include "launch/launch_internal.h"

int cf_launch_ms_left(double deadline)
{
    double left = deadline - cf_now_seconds();
    if (left <= 0)
        return 0;
    return left > 3600 ? 3600 * 1000 : (int)(left * 1000) + 1;
}

/* Waits until fd is ready for events or deadline passes: 0 ready, 1 interrupted
 * (try again), -1 with *why (ETIMEDOUT, ...). */
static int wait_ready(int fd, short events, double deadline, int *why)
{
    struct pollfd pfd = { fd, events, 0 };
    int ms = cf_launch_ms_left(deadline);
    int r = ms ? poll(&pfd, 1, ms) : 0;
    if (r < 0 && errno == EINTR)
        return 1;
    if (r <= 0) {
        *why = r == 0 ? ETIMEDOUT : errno;
        return -1;
    }
    return 0;
}

/* Reads or writes exactly len bytes before deadline (cf_now_seconds); -1 with errno-like
 * *why (ETIMEDOUT, ECONNRESET, ...). */
static int launch_io_full(int fd, void *buf, size_t len, int writing, double deadline, int *why)
{
    char *p = buf;
    while (len) {
        int w = wait_ready(fd, writing ? POLLOUT : POLLIN, deadline, why);
        if (w < 0)
            return -1;
        if (w > 0)
            continue;
        ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n <= 0) {
            *why = n == 0 ? ECONNRESET : errno;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void cf_launch_addr_string(const void *sa, char *out, size_t cap)
{
    const struct sockaddr *s = sa;
    const char *r = NULL;
    if (s->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = sa;
        /* an IPv4 peer on a dual-stack socket reads ::ffff:a.b.c.d: show a.b.c.d */
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
            r = inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], out, (socklen_t)cap);
        else
            r = inet_ntop(AF_INET6, &s6->sin6_addr, out, (socklen_t)cap);
    } else if (s->sa_family == AF_INET) {
        r = inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)cap);
    }
    if (!r)
        snprintf(out, cap, "?");
}

static int bind_listen(int family, int loopback_only, int port, int *fd_out)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (family == AF_INET6) {
        /* one socket for IPv6 and IPv4 alike (TCPStore listens this way too) */
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        s6->sin6_addr = loopback_only ? in6addr_loopback : in6addr_any;
        len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        s4->sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
        len = sizeof *s4;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 1024)) {
        int e = errno;
        close(fd);
        return e;
    }
    *fd_out = fd;
    return 0;
}

int cf_launch_listen(int port, int loopback_only, int *port_out, char *desc, size_t desc_len, cf_error *err)
{
    if (port < 0 || port > 65535)
        return cf_error_set(err, CF_ERR_USAGE, "port %d is outside 0..65535", port);
    int fd = -1;
    /* loopback: IPv4's 127.0.0.1, which every local client resolves "localhost" to first;
     * every address: the IPv6 dual-stack wildcard, or IPv4's where IPv6 is off */
    int e = loopback_only ? bind_listen(AF_INET, 1, port, &fd) : bind_listen(AF_INET6, 0, port, &fd);
    if (e && !loopback_only && (e == EAFNOSUPPORT || e == EADDRNOTAVAIL))
        e = bind_listen(AF_INET, 0, port, &fd);
    if (e)
        return cf_error_set(err, CF_ERR_FAILED, "cannot listen on port %d: %s%s", port, strerror(e),
                            e == EADDRINUSE ? " (another program holds it: choose another with CCLFORGE_PORT)" : "");
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int actual = port;
    int family = AF_INET;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        family = ss.ss_family;
        actual = family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                    : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    if (port_out)
        *port_out = actual;
    if (desc)
        snprintf(desc, desc_len, "%s:%d (%s)", loopback_only ? "127.0.0.1" : family == AF_INET6 ? "[::]" : "0.0.0.0",
                 actual, loopback_only ? "loopback only" : "all addresses");
    return fd;
}

void cf_launch_header_put(unsigned char hdr[LAUNCH_HEADER_LEN], int type, uint32_t len)
{
    memcpy(hdr, LAUNCH_MAGIC, 4);
    hdr[4] = (unsigned char)type;
    uint32_t be = htonl(len);
    memcpy(hdr + 5, &be, 4);
}

int cf_launch_header_parse(const unsigned char hdr[LAUNCH_HEADER_LEN], size_t max_data, int *type, uint32_t *len)
{
    if (memcmp(hdr, LAUNCH_MAGIC, 4))
        return !memcmp(hdr, LAUNCH_MAGIC_FAMILY, 3) && hdr[3] >= '0' && hdr[3] <= '9' ? -2 : -1;
    uint32_t be;
    memcpy(&be, hdr + 5, 4);
    uint32_t n = ntohl(be);
    int t = hdr[4];
    /* each type has one size, or a bound: nothing makes us allocate what we did not ask for */
    static const struct { int type; uint32_t exact, max; } sizes[] = {
        { MSG_SERVER_HELLO, LAUNCH_NONCE_LEN, 0 },
        { MSG_CLIENT_HELLO, LAUNCH_CLIENT_HELLO_LEN, 0 },
        { MSG_WELCOME, LAUNCH_MAC_LEN, 0 },
        { MSG_REFUSE, LAUNCH_REFUSAL_LEN, 0 },
        { MSG_DATA, 0, 0 },
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i].type != t)
            continue;
        uint32_t max = t == MSG_DATA ? (max_data > UINT32_MAX ? UINT32_MAX : (uint32_t)max_data) : sizes[i].max;
        if (sizes[i].exact ? n != sizes[i].exact : n > max)
            return -1;
        *type = t;
        *len = n;
        return 0;
    }
    return -1;
}

/* One message of any type: the header, then the payload (malloc'd, NUL-terminated). */
int cf_launch_read_msg(int fd, size_t max_data, double deadline, int *type, unsigned char **payload, size_t *len,
                       int *why)
{
    unsigned char hdr[LAUNCH_HEADER_LEN];
    uint32_t n;
    *payload = NULL;
    if (launch_io_full(fd, hdr, sizeof hdr, 0, deadline, why) < 0)
        return -1;
    int parsed = cf_launch_header_parse(hdr, max_data, type, &n);
    if (parsed < 0) {
        *why = parsed == -2 ? EPROTONOSUPPORT : EPROTO;
        return -1;
    }
    unsigned char *p = cf_xmalloc((size_t)n + 1);
    if (n && launch_io_full(fd, p, n, 0, deadline, why) < 0) {
        free(p);
        return -1;
    }
    p[n] = 0;
    *payload = p;
    *len = n;
    return 0;
}

/* Header and payload in one sendmsg, not two sends: a small second write waits
 * for the ACK of the first (Nagle), which the peer delays by up to 40 ms (it did:
 * 42 ms per message of a 2-rank gather, strace). */
int cf_launch_write_msg(int fd, int type, const void *payload, size_t len, double deadline, int *why)
{
    unsigned char hdr[LAUNCH_HEADER_LEN];
    if (len > UINT32_MAX) {
        *why = EMSGSIZE;
        return -1;
    }
    cf_launch_header_put(hdr, type, (uint32_t)len);
    struct iovec iov[2] = { { hdr, sizeof hdr }, { (void *)payload, len } };
    int at = 0;
    while (at < 2) {
        if (!iov[at].iov_len) {
            at++;
            continue;
        }
        int w = wait_ready(fd, POLLOUT, deadline, why);
        if (w < 0)
            return -1;
        if (w > 0)
            continue;
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov + at;
        m.msg_iovlen = (size_t)(2 - at);
        ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n <= 0) {
            *why = n == 0 ? ECONNRESET : errno;
            return -1;
        }
        for (size_t left = (size_t)n; left && at < 2;) {
            size_t take = left < iov[at].iov_len ? left : iov[at].iov_len;
            iov[at].iov_base = (char *)iov[at].iov_base + take;
            iov[at].iov_len -= take;
            left -= take;
            if (!iov[at].iov_len)
                at++;
        }
    }
    return 0;
}

int cf_launch_send(int fd, const void *data, size_t len, double deadline, cf_error *err)
{
    int why = 0;
    if (cf_launch_write_msg(fd, MSG_DATA, data, len, deadline, &why) < 0)
        return cf_error_set(err, CF_ERR_FAILED, "sending %zu bytes: %s", len, strerror(why));
    return 0;
}

int cf_launch_recv(int fd, unsigned char **data, size_t *len, size_t max_len, double deadline, cf_error *err)
{
    int type = 0, why = 0;
    if (cf_launch_read_msg(fd, max_len, deadline, &type, data, len, &why) < 0)
        return cf_error_set(err, CF_ERR_FAILED, "receiving: %s",
                            why == EPROTO ? "not a cclforge message, or larger than allowed"
                            : why == EPROTONOSUPPORT ? "a message of another cclforge rendezvous protocol version"
                                                     : strerror(why));
    if (type != MSG_DATA) {
        free(*data);
        *data = NULL;
        return cf_error_set(err, CF_ERR_FAILED, "receiving: unexpected message type '%c'", type);
    }
    return 0;
}
