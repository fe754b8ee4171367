/* NCCL's own account of the transports it chose, read from its NCCL_DEBUG=INFO
 * output (NCCL_DEBUG_SUBSYS=INIT,NET): one "Channel NN[/C] : R[D] -> P[D] [send|receive]
 * via KIND/..." line per connection (P2P, SHM, NET/<network>), "Using network X",
 * "NET/Plugin: Loaded net plugin X", and WARN lines. The formats of NCCL 2.12 to 2.28
 * are in tests/fixtures/nccl-log/ (made from NCCL's own format strings). Anything
 * else is ignored; every read is bounded by the line. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke.h"

#define MAX_CONNS 65536

/* A decimal number at *p (advanced); -1 when none. */
static long number(const char **p, const char *end)
{
    long v = 0;
    int digits = 0;
    while (*p < end && isdigit((unsigned char)**p) && digits < 9) {
        v = v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    return digits ? v : -1;
}

static int skip(const char **p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - *p) < n || memcmp(*p, lit, n))
        return -1;
    *p += n;
    return 0;
}

/* "R[...]" : the rank and its bracket (busId in hex before 2.17, nvmlDev after) */
static long rank_with_device(const char **p, const char *end)
{
    long r = number(p, end);
    if (r < 0 || skip(p, end, "[") < 0)
        return -1;
    while (*p < end && **p != ']')
        (*p)++;
    return skip(p, end, "]") < 0 ? -1 : r;
}

static void copy_trimmed(char *dst, size_t cap, const char *s, const char *end)
{
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    size_t n = (size_t)(end - s) < cap - 1 ? (size_t)(end - s) : cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

static void add_conn(struct cf_smoke_nccl_log *log, int rank, int peer, const char *via, const char *via_end)
{
    struct cf_smoke_transport_conn c;
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.peer = peer;
    copy_trimmed(c.via, sizeof c.via, via, via_end);
    const char *slash = memchr(c.via, '/', strlen(c.via));
    copy_trimmed(c.kind, sizeof c.kind, c.via, slash ? slash : c.via + strlen(c.via));
    for (size_t i = 0; i < log->nconns; i++) {
        struct cf_smoke_transport_conn *o = &log->conns[i];
        if (o->rank == rank && o->peer == peer && !strcmp(o->via, c.via)) {
            o->channels++;
            return;
        }
    }
    if (log->nconns >= MAX_CONNS)
        return;
    c.channels = 1;
    log->conns = cf_xrealloc(log->conns, (log->nconns + 1) * sizeof *log->conns);
    log->conns[log->nconns++] = c;
}

/* "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA" (the ring dumps, which
 * list ranks without "->", are not connections) */
static void parse_channel(struct cf_smoke_nccl_log *log, const char *p, const char *end)
{
    if (skip(&p, end, "Channel ") < 0 || number(&p, end) < 0)
        return;
    if (p < end && *p == '/' && (p++, number(&p, end) < 0))
        return;
    if (skip(&p, end, " : ") < 0)
        return;
    long from = rank_with_device(&p, end);
    if (from < 0 || skip(&p, end, " -> ") < 0)
        return;
    long to = rank_with_device(&p, end);
    if (to < 0)
        return;
    if (skip(&p, end, " [send]") < 0)
        skip(&p, end, " [receive]");
    if (skip(&p, end, " via ") < 0)
        return;
    add_conn(log, (int)from, (int)to, p, end);
}

static void set_str(char **dst, const char *s, const char *end)
{
    char buf[128];
    copy_trimmed(buf, sizeof buf, s, end);
    free(*dst);
    *dst = cf_strdup(buf);
}

static void parse_info(struct cf_smoke_nccl_log *log, const char *p, const char *end)
{
    static const char using_net[] = "Using network ";
    static const char plugin[] = "NET/Plugin: Loaded net plugin ";
    if (!skip(&p, end, using_net)) {
        set_str(&log->net, p, end);
    } else if (!skip(&p, end, plugin)) {
        /* "X (v10)": the name without its version */
        const char *v = end;
        while (v > p && v[-1] != '(')
            v--;
        set_str(&log->plugin, p, v > p ? v - 1 : end);
    } else if (!skip(&p, end, "NET/IB : No device found.")) {
        cf_strvec_push(&log->warnings, "NET/IB : No device found.");
    } else {
        parse_channel(log, p, end);
    }
}

void cf_smoke_nccl_log_parse(const char *text, size_t len, struct cf_smoke_nccl_log *out)
{
    memset(out, 0, sizeof *out);
    const char *p = text, *stop = text + len;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        const char *end = nl ? nl : stop;
        /* "host:pid:tid [dev] NCCL INFO msg", "... file:line NCCL WARN msg", maybe after "[time] " */
        static const char info[] = " NCCL INFO ", warn[] = " NCCL WARN ";
        for (const char *q = p; q + sizeof warn - 1 <= end; q++) {
            if (!memcmp(q, info, sizeof info - 1)) {
                parse_info(out, q + sizeof info - 1, end);
                break;
            }
            if (!memcmp(q, warn, sizeof warn - 1)) {
                char buf[512];
                copy_trimmed(buf, sizeof buf, q + sizeof warn - 1, end);
                if (out->warnings.n < 64 && !cf_strvec_contains(&out->warnings, buf))
                    cf_strvec_push(&out->warnings, buf);
                break;
            }
        }
        p = nl ? nl + 1 : stop;
    }
}

void cf_smoke_nccl_log_release(struct cf_smoke_nccl_log *log)
{
    free(log->conns);
    free(log->net);
    free(log->plugin);
    cf_strvec_clear(&log->warnings);
    memset(log, 0, sizeof *log);
}

int cf_smoke_transport_applies(enum cf_smoke_transport expect, const struct cf_smoke_transport_conn *c)
{
    int net = !strcmp(c->kind, "NET");
    switch (expect) {
    case CF_TRANSPORT_IB:
    case CF_TRANSPORT_SOCKET:
        return net;
    case CF_TRANSPORT_P2P:
    case CF_TRANSPORT_SHM:
        return !net;
    default:
        return 0;
    }
}

int cf_smoke_transport_matches(enum cf_smoke_transport expect, const struct cf_smoke_transport_conn *c)
{
    /* NET/<network>/...: the network is IB (NCCL's own), IBext (NVIDIA's plugin) or Socket */
    switch (expect) {
    case CF_TRANSPORT_IB:
        return !strncmp(c->via, "NET/IB", 6);
    case CF_TRANSPORT_SOCKET:
        return !strncmp(c->via, "NET/Socket", 10);
    case CF_TRANSPORT_P2P:
        return !strcmp(c->kind, "P2P");
    case CF_TRANSPORT_SHM:
        return !strcmp(c->kind, "SHM");
    default:
        return 1;
    }
}
