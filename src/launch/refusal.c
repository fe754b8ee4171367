/* What a rendezvous server can say to a connection it does not take, and what it
 * counts: refusal codes (one table: which are sent only after the client's MAC
 * verified, and which kind of stray the others are), the sentences each side
 * makes of a code, and the tally of strays. Every sentence is our own words and
 * numbers: nothing a peer sent is ever copied into one. */
#include <stdio.h>
#include <string.h>

#include "cclforge/launch.h"
#include "launch/launch_internal.h"

static const struct {
    enum cf_launch_refusal code;
    int authenticated;              /* sent only after the client's MAC verified */
    enum cf_launch_stray_kind stray; /* the unauthenticated ones: how the connection counts */
} refusals[] = {
    { CF_REFUSAL_NOT_CLIENT, 0, CF_STRAY_NOT_CLIENT },
    { CF_REFUSAL_WRONG_TAG, 0, CF_STRAY_WRONG_TAG },
    { CF_REFUSAL_BAD_MAC, 0, CF_STRAY_BAD_MAC },
    { CF_REFUSAL_WORLD, 1, CF_STRAY_KINDS },
    { CF_REFUSAL_RANK, 1, CF_STRAY_KINDS },
    { CF_REFUSAL_TWICE, 1, CF_STRAY_KINDS },
};

/* JSON keys */
static const char *const stray_ids[CF_STRAY_KINDS] = {
    [CF_STRAY_SILENT] = "silent",
    [CF_STRAY_LEFT] = "left",
    [CF_STRAY_NOT_CLIENT] = "not_client",
    [CF_STRAY_WRONG_TAG] = "wrong_tag",
    [CF_STRAY_BAD_MAC] = "bad_mac",
    [CF_STRAY_EVICTED] = "evicted",
};

/* the report's words */
static const char *const stray_names[CF_STRAY_KINDS] = {
    [CF_STRAY_SILENT] = "silent",
    [CF_STRAY_LEFT] = "left early",
    [CF_STRAY_NOT_CLIENT] = "not a cclforge client",
    [CF_STRAY_WRONG_TAG] = "another channel",
    [CF_STRAY_BAD_MAC] = "failed authentication",
    [CF_STRAY_EVICTED] = "closed to make room",
};

int cf_launch_refusal_authenticated(enum cf_launch_refusal code)
{
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        if (refusals[i].code == code)
            return refusals[i].authenticated;
    return 0;
}

enum cf_launch_stray_kind cf_launch_refusal_stray(enum cf_launch_refusal code)
{
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        if (refusals[i].code == code)
            return refusals[i].stray;
    return CF_STRAY_NOT_CLIENT;
}

const char *cf_launch_stray_kind_name(enum cf_launch_stray_kind k)
{
    return k >= 0 && k < CF_STRAY_KINDS ? stray_ids[k] : "?";
}

/* The client's sentence: server is "rank 0" or "the supervisor"; value is
 * trusted only when authenticated says the refusal's MAC verified. */
void cf_launch_refusal_client_text(unsigned code, uint32_t value, int authenticated, const char *server,
                                   const char *tag, int rank, int world, struct strbuf *out)
{
    switch (authenticated || !cf_launch_refusal_authenticated(code) ? code : CF_REFUSAL_COUNT) {
    case CF_REFUSAL_NOT_CLIENT:
        cf_sb_addf(out, "refused by %s: it did not take this rank's hello for cclforge's (another version of "
                        "cclforge there?)", server);
        break;
    case CF_REFUSAL_WRONG_TAG:
        cf_sb_addf(out, "refused by %s: its port serves another cclforge channel than '%s' (each command's "
                        "rendezvous has its own port)", server, tag);
        break;
    case CF_REFUSAL_BAD_MAC:
        cf_sb_addf(out, "refused by %s: authentication failed: this rank does not hold its secret (%s differs, "
                        "or this is not one of that run's ranks)", server, CF_LAUNCH_SECRET_ENV);
        break;
    case CF_REFUSAL_WORLD:
        cf_sb_addf(out, "refused by %s: world size mismatch: %s runs %u ranks, but rank %d was started for %d: "
                        "give every rank the same world size (WORLD_SIZE, -n, --ntasks)",
                   server, server, (unsigned)value, rank, world);
        break;
    case CF_REFUSAL_RANK:
        cf_sb_addf(out, "refused by %s: rank %d is outside its world of %u", server, rank, (unsigned)value);
        break;
    case CF_REFUSAL_TWICE:
        cf_sb_addf(out, "refused by %s: rank %d joined already: two processes have the same rank", server, rank);
        break;
    case CF_REFUSAL_COUNT:
        cf_sb_addf(out, "%s's port answered with a refusal (code %u) that does not prove this run's secret: "
                        "another program may hold the port", server, code);
        break;
    default:
        cf_sb_addf(out, "refused by %s for a reason this cclforge does not know (code %u): run the same "
                        "cclforge on every rank", server, code);
    }
}

void cf_launch_event_describe(const struct cf_launch_event *ev, int world, struct strbuf *out)
{
    switch (ev->refused) {
    case CF_REFUSAL_WORLD:
        cf_sb_addf(out, "world size mismatch: rank 0 runs %d ranks, but rank %u (%s) was started for %u: give "
                        "every rank the same world size (WORLD_SIZE, -n, --ntasks)",
                   world, ev->claimed_rank, ev->peer.addr, ev->claimed_world);
        break;
    case CF_REFUSAL_RANK:
        cf_sb_addf(out, "rank %u (%s) is outside a world of %d", ev->claimed_rank, ev->peer.addr, world);
        break;
    case CF_REFUSAL_TWICE:
        cf_sb_addf(out, "rank %u joined twice (the second time from %s): two processes have the same rank",
                   ev->claimed_rank, ev->peer.addr);
        break;
    default:
        cf_sb_addf(out, "rank %u (%s) joined", ev->claimed_rank, ev->peer.addr);
    }
}

void cf_launch_strays_add(struct cf_launch_strays *s, enum cf_launch_stray_kind kind, const char *addr)
{
    s->count++;
    s->kind[kind]++;
    for (size_t i = 0; i < s->n_addrs; i++)
        if (!strcmp(s->addrs[i].addr, addr)) {
            s->addrs[i].count++;
            return;
        }
    if (s->n_addrs == CF_LAUNCH_STRAY_ADDRS) {
        s->unlisted++;
        return;
    }
    snprintf(s->addrs[s->n_addrs].addr, sizeof s->addrs[0].addr, "%s", addr);
    s->addrs[s->n_addrs++].count = 1;
}

void cf_launch_strays_describe(const struct cf_launch_strays *s, struct strbuf *out)
{
    if (!s->count)
        return;
    cf_sb_addf(out, "%lu connection%s never completed a handshake (", s->count, s->count == 1 ? "" : "s");
    const char *sep = "";
    for (int k = 0; k < CF_STRAY_KINDS; k++)
        if (s->kind[k]) {
            cf_sb_addf(out, "%s%lu %s", sep, s->kind[k], stray_names[k]);
            sep = ", ";
        }
    cf_sb_adds(out, "), from ");
    for (size_t i = 0; i < s->n_addrs; i++)
        cf_sb_addf(out, "%s%s (%lu)", i ? ", " : "", s->addrs[i].addr, s->addrs[i].count);
    if (s->unlisted)
        cf_sb_addf(out, " and %lu from other addresses", s->unlisted);
}
