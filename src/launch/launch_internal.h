/* Internals of the launch module: the wire format of the rendezvous and the bounded
 * socket helpers its files share (not a public header; the fuzz target reads it). */
#ifndef CCLFORGE_LAUNCH_INTERNAL_H
#define CCLFORGE_LAUNCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/launch.h"

/* Every message: "CFL2", a type byte, a big-endian u32 payload length, the payload.
 * Version 2: refusals are codes, not text (version 1 echoed text a peer chose). */
#define LAUNCH_MAGIC "CFL2"
#define LAUNCH_MAGIC_FAMILY "CFL" /* + another digit: a cclforge of another protocol version */
#define LAUNCH_HEADER_LEN 9
#define LAUNCH_NONCE_LEN 16
#define LAUNCH_TAG_LEN 16
#define LAUNCH_MAC_LEN 32
/* a refusal: code (1 byte), value (u32: rank 0's world size where the code has one),
 * MAC (zero for refusals sent before the client's MAC verified) */
#define LAUNCH_REFUSAL_LEN (1 + 4 + LAUNCH_MAC_LEN)

enum launch_msg_type {
    MSG_SERVER_HELLO = 'S', /* nonce_s */
    MSG_CLIENT_HELLO = 'C', /* tag, rank, world, nonce_c, mac_c */
    MSG_WELCOME = 'W',      /* mac_s */
    MSG_REFUSE = 'R',       /* code, value, mac_r (enum cf_launch_refusal) */
    MSG_DATA = 'D'          /* a blob */
};

/* Parses a header: 0 and fills type/len when it is well formed and len fits the
 * type's bound (data: max_data), -1 otherwise, -2 for the magic of another
 * protocol version. */
int cf_launch_header_parse(const unsigned char hdr[LAUNCH_HEADER_LEN], size_t max_data, int *type, uint32_t *len);
void cf_launch_header_put(unsigned char hdr[LAUNCH_HEADER_LEN], int type, uint32_t len);

struct launch_client_hello {
    char tag[LAUNCH_TAG_LEN];
    uint32_t rank, world;
    unsigned char nonce[LAUNCH_NONCE_LEN];
    unsigned char mac[LAUNCH_MAC_LEN];
};
#define LAUNCH_CLIENT_HELLO_LEN (LAUNCH_TAG_LEN + 8 + LAUNCH_NONCE_LEN + LAUNCH_MAC_LEN)
int cf_launch_client_hello_parse(const unsigned char *p, size_t len, struct launch_client_hello *h);
void cf_launch_client_hello_put(unsigned char out[LAUNCH_CLIENT_HELLO_LEN], const struct launch_client_hello *h);

struct launch_refusal {
    unsigned char code;    /* enum cf_launch_refusal */
    uint32_t value;
    unsigned char mac[LAUNCH_MAC_LEN];
};
int cf_launch_refusal_parse(const unsigned char *p, size_t len, struct launch_refusal *r);
void cf_launch_refusal_put(unsigned char out[LAUNCH_REFUSAL_LEN], const struct launch_refusal *r);

/* The tag as the hello carries it: NUL-padded to LAUNCH_TAG_LEN bytes. */
void cf_launch_tag_field(const char *tag, char out[LAUNCH_TAG_LEN]);
/* HMAC under the run's secret over role, tag, rank, world, the two nonces (the one
 * who speaks first last) and extra (a refusal's code and value; NULL for none). */
void cf_launch_handshake_mac(const struct cf_launch_secret *s, const char *role, const char tag[LAUNCH_TAG_LEN],
                             uint32_t rank, uint32_t world, const unsigned char *nonce_a,
                             const unsigned char *nonce_b, const unsigned char *extra, size_t extra_len,
                             unsigned char out[LAUNCH_MAC_LEN]);
/* Constant-time comparison of two MACs. */
int cf_launch_same_mac(const unsigned char *a, const unsigned char *b);
/* The refusal's MAC: role "cclforge-refusal", extra = code and value. */
void cf_launch_refusal_mac(const struct cf_launch_secret *s, const struct launch_client_hello *h,
                           const unsigned char nonce_s[LAUNCH_NONCE_LEN], struct launch_refusal *r);
/* A fresh nonce (getrandom). */
int cf_launch_nonce(unsigned char out[LAUNCH_NONCE_LEN], cf_error *err);
/* Client side of the handshake on a connected fd: 0 joined, -1 retry (err: why),
 * -2 final (refused, or the server failed to prove itself). err's text holds
 * only our own words and numbers, never bytes the server sent. server names the
 * other side in it ("rank 0", "the supervisor"). */
int cf_launch_client_handshake(int fd, const struct cf_launch_secret *s, const char *tag, int rank, int world,
                               const char *server, double deadline, cf_error *err);
/* Server side: an already connected fd joins the acceptor's pending handshakes
 * (the fuzz target's socketpair; accepted connections arrive this way too). */
void cf_launch_acceptor_adopt(struct cf_launch_acceptor *a, int fd);
/* Pending handshakes right now. */
int cf_launch_acceptor_pending(const struct cf_launch_acceptor *a);

/* refusal.c: the stray kind an unauthenticated refusal counts as; the client's
 * sentence for a refusal (value trusted only when authenticated); the tally. */
enum cf_launch_stray_kind cf_launch_refusal_stray(enum cf_launch_refusal code);
void cf_launch_refusal_client_text(unsigned code, uint32_t value, int authenticated, const char *server,
                                   const char *tag, int rank, int world, struct strbuf *out);
void cf_launch_strays_add(struct cf_launch_strays *s, enum cf_launch_stray_kind kind, const char *addr);

/* Milliseconds left before deadline, for poll (0 when passed). */
int cf_launch_ms_left(double deadline);
/* One message: header, then its payload (malloc'd, NUL-terminated; data bounded by
 * max_data). -1 with *why = EPROTO for a malformed header. */
int cf_launch_read_msg(int fd, size_t max_data, double deadline, int *type, unsigned char **payload, size_t *len,
                       int *why);
int cf_launch_write_msg(int fd, int type, const void *payload, size_t len, double deadline, int *why);
/* Numeric form of a socket address ("10.0.0.1", "::1"). */
void cf_launch_addr_string(const void *sockaddr, char *out, size_t cap);

#endif
