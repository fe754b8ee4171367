/* A rank's links in the forms they travel in: the one-line text ranks exchange
 * and report to the supervisor, and the "links" array of a smoke document. Both
 * are read back from other processes and saved files: bounded, and an entry of a
 * wrong shape is dropped, never half-read. */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fabric.h"
#include "cclforge/json.h"
#include "cclforge/path_capacity.h"

static const char *const kind_names[CF_LINK_KIND_COUNT] = { "eth", "ib", "roce", "nvlink", "xgmi", "pcie" };
static const char *const limit_names[CF_LIMIT_COUNT] = { "line", "nic-pcie", "gpu-pcie" };

const char *cf_link_kind_name(enum cf_link_kind k)
{
    return (unsigned)k < CF_LINK_KIND_COUNT ? kind_names[k] : "?";
}

const char *cf_link_limit_name(enum cf_link_limit l)
{
    return (unsigned)l < CF_LIMIT_COUNT ? limit_names[l] : "?";
}

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

/* a name or net that the text form carries unchanged */
static int plain(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == ';' || (unsigned char)*s >= 0x7f)
            return 0;
    return 1;
}

int cf_rank_link_set_net(struct cf_rank_link *l, const char *cidr)
{
    l->v4 = l->v4mask = 0;
    l->net[0] = 0;
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    char host[INET_ADDRSTRLEN];
    struct in_addr in;
    if (!slash || (size_t)(slash - cidr) >= sizeof host || strlen(cidr) >= sizeof l->net)
        return 0;
    memcpy(host, cidr, (size_t)(slash - cidr));
    host[slash - cidr] = 0;
    char *end;
    long bits = strtol(slash + 1, &end, 10);
    if (inet_pton(AF_INET, host, &in) != 1 || end == slash + 1 || *end || bits < 0 || bits > 32)
        return 0;
    snprintf(l->net, sizeof l->net, "%s", cidr);
    l->v4 = ntohl(in.s_addr);
    l->v4mask = bits ? 0xffffffffu << (32 - bits) : 0;
    return 1;
}

static int leads_to_gpu(enum cf_link_kind k)
{
    return k == CF_LINK_NVLINK || k == CF_LINK_XGMI;
}

/* the fields of one link, checked: 1 when it is whole. to: where it leads (an
 * interface's network, a GPU link's peer), NULL or "" for nowhere in particular */
static int fill(struct cf_rank_link *l, const char *name, const char *kind, double line, double gbps,
                const char *limit, const char *to)
{
    const char *net = to;
    int k = lookup(kind_names, CF_LINK_KIND_COUNT, kind), lim = lookup(limit_names, CF_LIMIT_COUNT, limit);
    memset(l, 0, sizeof *l);
    if (!name || !name[0] || strlen(name) >= sizeof l->name || !plain(name) || (net && !plain(net)) || k < 0 ||
        lim < 0 || !(gbps > 0 && gbps < 1e6) || !(line >= 0 && line < 1e7))
        return 0;
    snprintf(l->name, sizeof l->name, "%s", name);
    l->kind = (enum cf_link_kind)k;
    l->limit = (enum cf_link_limit)lim;
    l->line_gbit = line;
    l->gbps = gbps;
    if (l->kind == CF_LINK_ETH)
        return cf_rank_link_set_net(l, net); /* an interface is matched by its network: without one it tells nothing */
    if (!to || !to[0])
        return 1;
    if (!leads_to_gpu(l->kind) || strlen(to) >= sizeof l->peer || (strcmp(to, "*") && !cf_pci_is_bdf(to)))
        return 0;
    snprintf(l->peer, sizeof l->peer, "%s", to);
    return 1;
}

void cf_rank_links_format(const struct cf_rank_link *l, size_t n, struct strbuf *out)
{
    for (size_t i = 0; i < n; i++) {
        const char *to = l[i].net[0] ? l[i].net : l[i].peer;
        if (!plain(l[i].name) || !plain(to))
            continue;
        cf_sb_addf(out, "%s%s %s %.6g %.6g %s %s", out->len ? ";" : "", l[i].name, cf_link_kind_name(l[i].kind),
                   l[i].line_gbit, l[i].gbps, cf_link_limit_name(l[i].limit), to[0] ? to : "-");
    }
}

size_t cf_rank_links_parse(const char *text, struct cf_rank_link *out, size_t max)
{
    size_t n = 0;
    while (text && *text && n < max) {
        size_t len = strcspn(text, ";");
        char entry[160], name[64], kind[16], limit[16], net[64], tail;
        double line, gbps;
        if (len < sizeof entry) {
            memcpy(entry, text, len);
            entry[len] = 0;
            if (sscanf(entry, "%63s %15s %lf %lf %15s %63s %c", name, kind, &line, &gbps, limit, net, &tail) == 6 &&
                fill(&out[n], name, kind, line, gbps, limit, strcmp(net, "-") ? net : NULL))
                n++;
        }
        text += len + (text[len] == ';');
    }
    return n;
}

cJSON *cf_rank_links_to_json(const struct cf_rank_link *l, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l[i].name);
        cJSON_AddStringToObject(o, "kind", cf_link_kind_name(l[i].kind));
        cJSON_AddNumberToObject(o, "line_gbit", l[i].line_gbit);
        cJSON_AddNumberToObject(o, "capacity_gbps", l[i].gbps);
        cJSON_AddStringToObject(o, "limit", cf_link_limit_name(l[i].limit));
        if (l[i].net[0])
            cJSON_AddStringToObject(o, "net", l[i].net);
        if (l[i].peer[0])
            cJSON_AddStringToObject(o, "peer", l[i].peer);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

size_t cf_rank_links_from_json(const cJSON *arr, struct cf_rank_link *out, size_t max)
{
    size_t n = 0;
    const cJSON *o;
    if (!cJSON_IsArray(arr))
        return 0;
    cJSON_ArrayForEach(o, arr) {
        if (n == max)
            break;
        const char *name = NULL, *kind = NULL, *limit = NULL, *net = NULL, *peer = NULL;
        double line = NAN, gbps = NAN;
        if (!cJSON_IsObject(o) || cf_json_get_str(o, "name", &name) < 1 || cf_json_get_str(o, "kind", &kind) < 1 ||
            cf_json_get_num(o, "line_gbit", &line) < 1 || cf_json_get_num(o, "capacity_gbps", &gbps) < 1 ||
            cf_json_get_str(o, "limit", &limit) < 1 || cf_json_get_str(o, "net", &net) < 0 ||
            cf_json_get_str(o, "peer", &peer) < 0 || (net && peer))
            continue;
        n += (size_t)fill(&out[n], name, kind, line, gbps, limit, net ? net : peer);
    }
    return n;
}
