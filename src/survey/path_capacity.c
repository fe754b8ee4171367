/* The capacity of the path between two hosts, from the links of their ranks
 * (cclforge/path_capacity.h). A busbw is one direction's bytes per second over
 * the slowest hop, which is what each capacity here is. */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "cclforge/path_capacity.h"

static const char *const limit_words[CF_LIMIT_COUNT] = { "line rate", "the NIC's PCIe link", "the GPU's PCIe link" };

static int is_port(const struct cf_rank_link *l)
{
    return l->kind == CF_LINK_IB || l->kind == CF_LINK_ROCE;
}

/* the sum over a host's distinct IB/RoCE ports (its ranks may name one twice) */
static double ports_sum(const struct cf_rank_link *l, size_t n, size_t *count, const struct cf_rank_link **slowest)
{
    double sum = 0;
    *count = 0;
    *slowest = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!is_port(&l[i]))
            continue;
        size_t j = 0;
        while (j < i && !(is_port(&l[j]) && !strcmp(l[j].name, l[i].name)))
            j++;
        if (j < i)
            continue;
        sum += l[i].gbps;
        (*count)++;
        if (!*slowest || l[i].gbps < (*slowest)->gbps)
            *slowest = &l[i];
    }
    return sum;
}

static int same_net(const struct cf_rank_link *x, const struct cf_rank_link *y)
{
    return x->kind == CF_LINK_ETH && y->kind == CF_LINK_ETH && x->v4mask && y->v4mask &&
           (x->v4 & x->v4mask) == (y->v4 & x->v4mask) && (y->v4 & y->v4mask) == (x->v4 & y->v4mask);
}

static void link_words(const struct cf_rank_link *l, struct strbuf *w)
{
    cf_sb_addf(w, "%s %.4g Gb/s", l->name, l->line_gbit);
    if (l->limit != CF_LIMIT_LINE && (unsigned)l->limit < CF_LIMIT_COUNT)
        cf_sb_addf(w, " capped at %.3g GB/s by %s", l->gbps, limit_words[l->limit]);
}

static int is_gpu_link(const struct cf_rank_link *l)
{
    return l->kind == CF_LINK_NVLINK || l->kind == CF_LINK_XGMI || l->kind == CF_LINK_PCIE;
}

/* whether one of l names GPU bdf by its total link (peer ""): a GPU of the group */
static int names_gpu(const struct cf_rank_link *l, size_t n, const char *bdf)
{
    for (size_t i = 0; i < n; i++)
        if (is_gpu_link(&l[i]) && !l[i].peer[0] && !strcasecmp(l[i].name, bdf))
            return 1;
    return 0;
}

/* what GPU g (its total link) brings to the others named in l: its links to them
 * and to NVSwitches when its peers are listed ("*" or a peer's PCI function), else
 * its total */
static double gpu_share(const struct cf_rank_link *l, size_t n, const struct cf_rank_link *g, int *listed)
{
    double sum = 0;
    *listed = 0;
    for (size_t i = 0; i < n; i++) {
        if (!l[i].peer[0] || l[i].kind != g->kind || strcmp(l[i].name, g->name))
            continue;
        *listed = 1;
        if (!strcmp(l[i].peer, "*") || (strcasecmp(l[i].peer, g->name) && names_gpu(l, n, l[i].peer)))
            sum += l[i].gbps;
    }
    return *listed ? sum : g->gbps;
}

double cf_gpu_capacity(const struct cf_rank_link *l, size_t n, struct strbuf *words)
{
    const struct cf_rank_link *low = NULL;
    double low_gbps = 0;
    int low_listed = 0;
    size_t gpus = 0;
    for (size_t i = 0; i < n; i++)
        gpus += is_gpu_link(&l[i]) && !l[i].peer[0];
    for (size_t i = 0; i < n; i++) {
        if (!is_gpu_link(&l[i]) || l[i].peer[0])
            continue;
        int listed;
        double c = gpus > 1 ? gpu_share(l, n, &l[i], &listed) : (listed = 0, l[i].gbps);
        if (!low || c < low_gbps) {
            low = &l[i];
            low_gbps = c;
            low_listed = listed;
        }
    }
    if (!low || low_gbps <= 0)
        return 0; /* a GPU that reaches none of the others directly: over PCIe, at a rate not recorded */
    if (words)
        cf_sb_addf(words, "%s of GPU %s%s, %.3g GB/s, the slowest of %zu GPU%s' links", cf_link_kind_name(low->kind),
                   low->name, low_listed ? " to the others" : "", low_gbps, gpus, gpus == 1 ? "" : "s");
    return low_gbps;
}

double cf_path_capacity(const struct cf_rank_link *a, size_t na, const struct cf_rank_link *b, size_t nb,
                        struct strbuf *words)
{
    size_t ca, cb;
    const struct cf_rank_link *sa, *sb;
    double pa = ports_sum(a, na, &ca, &sa), pb = ports_sum(b, nb, &cb, &sb);
    if (pa > 0 && pb > 0) {
        const struct cf_rank_link *lo = pa <= pb ? sa : sb;
        if (words) {
            cf_sb_addf(words, "IB/RoCE ports: %zu on one host (%.3g GB/s), %zu on the other (%.3g GB/s), the smaller; ",
                       pa <= pb ? ca : cb, pa <= pb ? pa : pb, pa <= pb ? cb : ca, pa <= pb ? pb : pa);
            link_words(lo, words);
        }
        return pa <= pb ? pa : pb;
    }
    const struct cf_rank_link *bx = NULL, *by = NULL;
    double best = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            double c = a[i].gbps < b[j].gbps ? a[i].gbps : b[j].gbps;
            if (same_net(&a[i], &b[j]) && c > best) {
                best = c;
                bx = &a[i];
                by = &b[j];
            }
        }
    if (best > 0 && words) {
        link_words(bx, words);
        cf_sb_adds(words, " \xe2\x86\x94 ");
        link_words(by, words);
        struct in_addr net = { htonl(bx->v4 & bx->v4mask) };
        char text[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &net, text, sizeof text);
        cf_sb_addf(words, " on the network %s/%d both hosts share", text, __builtin_popcount(bx->v4mask));
    }
    return best;
}
