/* Internals of the launch module: the wire format of the rendezvous and the bounded
 * socket helpers its files share (not a public header; the fuzz target reads it). */
#ifndef CCLFORGE_LAUNCH_INTERNAL_H
#define CCLFORGE_LAUNCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cclforge/launch.h"

/* Every message: "CFL1", a type byte, a big-endian u32 payload length, the payload. */
#define LAUNCH_MAGIC "CFL1"
#define LAUNCH_HEADER_LEN 9
#define LAUNCH_NONCE_LEN 16
#define LAUNCH_TAG_LEN 16
#define LAUNCH_MAC_LEN 32
#define LAUNCH_REFUSAL_MAX 512

enum launch_msg_type {
    MSG_SERVER_HELLO = 'S', /* nonce_s */
    MSG_CLIENT_HELLO = 'C', /* tag, rank, world, nonce_c, mac_c */
    MSG_WELCOME = 'W',      /* mac_s */
    MSG_REFUSE = 'R',       /* reason text */
    MSG_DATA = 'D'          /* a blob */
};

/* Parses a header: 0 and fills type/len when it is well formed and len fits the
 * type's bound (data: max_data), -1 otherwise. */
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

/* Reads or writes exactly len bytes before deadline (cf_now_seconds); -1 with errno-like
 * *why (ETIMEDOUT, ECONNRESET, ...). */
int cf_launch_io_full(int fd, void *buf, size_t len, int writing, double deadline, int *why);
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
