/* libFuzzer target for the rendezvous handshake (src/launch): the byte parsers
 * (header, client hello, refusal) over a guarded copy of exactly the input's
 * size, then the input as what a peer sends over a real socketpair, to the
 * server side (acceptor.c) or to the client side (handshake.c). The first byte
 * picks the side; for the server, bit 1 has the target sign the hello with the
 * run's secret over the server's nonce, so the authenticated paths (another world
 * size, a rank twice, a welcome) are reached too.
 * Properties: a parse that succeeds re-encodes to the input; every connection
 * ends as exactly one rank, refused rank or stray, and only a signed hello ever
 * becomes a rank; the server answers only with well-formed messages, and a
 * refusal before the secret was proved is its code and zeros; the client never
 * joins on fuzzed bytes and its error is our own printable words. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cclforge/clock.h"
#include "cclforge/launch.h"
#include "fuzz_guard.h"
#include "launch/launch_internal.h"

static struct cf_launch_secret secret(void)
{
    struct cf_launch_secret s;
    memset(&s, 0, sizeof s);
    memset(s.key, 0x5a, sizeof s.key);
    return s;
}

static void parsers(const uint8_t *data, size_t size)
{
    int type;
    uint32_t len;
    if (size >= LAUNCH_HEADER_LEN && cf_launch_header_parse(data, 4096, &type, &len) == 0) {
        unsigned char again[LAUNCH_HEADER_LEN];
        cf_launch_header_put(again, type, len);
        if (memcmp(again, data, LAUNCH_HEADER_LEN) || !strchr("SCWRD", type) || !type ||
            (type == MSG_REFUSE && len != LAUNCH_REFUSAL_LEN) || (type == MSG_DATA && len > 4096))
            abort();
    }
    struct launch_client_hello h;
    if (cf_launch_client_hello_parse(data, size, &h) == 0) {
        unsigned char again[LAUNCH_CLIENT_HELLO_LEN];
        cf_launch_client_hello_put(again, &h);
        if (size != LAUNCH_CLIENT_HELLO_LEN || memcmp(again, data, size))
            abort();
    }
    struct launch_refusal r;
    if (cf_launch_refusal_parse(data, size, &r) == 0) {
        unsigned char again[LAUNCH_REFUSAL_LEN];
        cf_launch_refusal_put(again, &r);
        if (size != LAUNCH_REFUSAL_LEN || memcmp(again, data, size))
            abort();
        struct strbuf text = STRBUF_INIT; /* any code, any value: our own words */
        cf_launch_refusal_client_text(r.code, r.value, r.mac[0] & 1, "rank 0", "test", 1, 2, &text);
        if (!text.len)
            abort();
        cf_sb_release(&text);
    }
}

/* What fits the socket buffer goes in; then EOF, so nobody waits. */
static void feed(int fd, const uint8_t *data, size_t size)
{
    size_t at = 0;
    while (at < size) {
        ssize_t n = send(fd, data + at, size - at, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n <= 0)
            break;
        at += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void server_side(const uint8_t *data, size_t size, int sign)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    struct cf_launch_secret s = secret();
    struct cf_launch_acceptor_opts o = { -1, &s, "test", 2, 1.0, 0 };
    struct cf_launch_acceptor *a = cf_launch_acceptor_new(&o);
    cf_launch_acceptor_claim(a, 0);
    cf_launch_acceptor_adopt(a, sv[0]);
    unsigned char hello[LAUNCH_HEADER_LEN + LAUNCH_NONCE_LEN];
    if (read(sv[1], hello, sizeof hello) != (ssize_t)sizeof hello) /* the server speaks first, at once */
        abort();
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    struct launch_client_hello h;
    int signed_hello = 0;
    if (sign && size >= LAUNCH_HEADER_LEN + LAUNCH_CLIENT_HELLO_LEN &&
        cf_launch_client_hello_parse(copy + LAUNCH_HEADER_LEN, LAUNCH_CLIENT_HELLO_LEN, &h) == 0) {
        cf_launch_handshake_mac(&s, "cclforge-client", h.tag, h.rank, h.world, hello + LAUNCH_HEADER_LEN, h.nonce,
                                NULL, 0, h.mac);
        cf_launch_client_hello_put(copy + LAUNCH_HEADER_LEN, &h);
        signed_hello = 1;
    }
    feed(sv[1], copy, size);
    for (int round = 0; round < 100 && cf_launch_acceptor_pending(a); round++)
        cf_launch_acceptor_poll(a, NULL, 0, 50);
    if (cf_launch_acceptor_pending(a)) /* EOF came: nobody may still be pending */
        abort();
    struct cf_launch_event ev;
    int events = 0, joined = 0;
    while (cf_launch_acceptor_next(a, &ev)) {
        events++;
        if (ev.refused == CF_REFUSAL_NONE) {
            joined++;
            if (ev.peer.rank != 1 || ev.peer.fd != sv[0])
                abort();
        } else if (!cf_launch_refusal_authenticated(ev.refused) || ev.peer.fd != -1) {
            abort();
        }
    }
    if (events && !signed_hello)
        abort(); /* without the secret, nothing but a stray */
    char want[LAUNCH_TAG_LEN];
    cf_launch_tag_field("test", want);
    int hdr_type;
    uint32_t hdr_len;
    if (signed_hello && cf_launch_header_parse(copy, 0, &hdr_type, &hdr_len) == 0 && hdr_type == MSG_CLIENT_HELLO &&
        !memcmp(h.tag, want, sizeof want) && h.world == 2 && h.rank == 1 && !joined)
        abort(); /* a right hello, signed, joins */
    if (events + cf_launch_acceptor_strays(a)->count != 1)
        abort();
    /* what came back: one well-formed welcome or refusal, or nothing */
    unsigned char back[256];
    ssize_t n = recv(sv[1], back, sizeof back, MSG_DONTWAIT);
    if (n > 0) {
        int type;
        uint32_t len;
        if (n < LAUNCH_HEADER_LEN || cf_launch_header_parse(back, 0, &type, &len) != 0 ||
            (size_t)n != LAUNCH_HEADER_LEN + len || (type != MSG_WELCOME && type != MSG_REFUSE) ||
            (type == MSG_WELCOME) != (joined == 1))
            abort();
        /* a refusal before the secret was proved is its code and zeros: a peer
         * learns nothing else, least of all its own bytes back */
        if (type == MSG_REFUSE && !cf_launch_refusal_authenticated(back[LAUNCH_HEADER_LEN]) &&
            !all_zero(back + LAUNCH_HEADER_LEN + 1, len - 1))
            abort();
    }
    if (joined)
        close(sv[0]);
    cf_launch_acceptor_free(a, NULL);
    close(sv[1]);
    free(copy);
}

static void client_side(const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    struct cf_launch_secret s = secret();
    feed(sv[1], data, size);
    cf_error err = CF_ERROR_INIT;
    int rc = cf_launch_client_handshake(sv[0], &s, "test", 1, 2, "rank 0", cf_now_seconds() + 1.0, &err);
    if (rc == 0) /* a welcome needs the secret over our fresh nonce */
        abort();
    for (const char *m = cf_error_message(&err); *m; m++)
        if (*m < 0x20 || *m > 0x7e)
            abort();
    cf_error_clear(&err);
    close(sv[0]);
    close(sv[1]);
}

static void one(const uint8_t *data, size_t size)
{
    parsers(data, size);
    if (!size)
        return;
    switch (data[0] & 3) {
    case 1:
        server_side(data + 1, size - 1, 0);
        break;
    case 3:
        server_side(data + 1, size - 1, 1);
        break;
    case 2:
        client_side(data + 1, size - 1);
        break;
    }
}

FUZZ_GUARDED_TARGET(one)
