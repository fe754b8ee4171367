/* NCCL's interface and HCA lists (cclforge/ncclconf.h): parseStringList and
 * matchIfList of misc/utils.cc, and the '^'/'=' prefixes its callers strip. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/ncclconf.h"

void cf_nccl_if_list_parse(const char *value, size_t max, struct cf_nccl_if_list *out)
{
    memset(out, 0, sizeof *out);
    if (!value)
        return;
    if (max > CF_NCCL_IF_MAX)
        max = CF_NCCL_IF_MAX;
    const char *p = value;
    if (*p == '^') {
        out->exclude = 1;
        p++;
    }
    if (*p == '=') {
        out->exact = 1;
        p++;
    }
    size_t len = 0;
    for (;; p++) {
        char c = *p;
        int end = c == ',' || c == ':' || c == '\0';
        if (!end) {
            if (out->n < max) {
                if (len < sizeof out->v[0].name - 1)
                    out->v[out->n].name[len] = c;
                else
                    out->v[out->n].too_long = 1;
            }
            len++;
            continue;
        }
        if (len > 0) {
            if (out->n < max) {
                size_t keep = len < sizeof out->v[0].name - 1 ? len : sizeof out->v[0].name - 1;
                out->v[out->n].name[keep] = 0;
                out->v[out->n].port = c == ':' ? atoi(p + 1) : -1;
                out->n++;
            } else {
                out->truncated = 1;
            }
            len = 0;
        }
        if (c == ':') /* the port runs to the next ',' */
            while (*p && *p != ',')
                p++;
        if (!*p)
            break;
    }
}

int cf_nccl_if_list_match(const struct cf_nccl_if_list *l, const char *name, int port)
{
    int hit = l->n == 0; /* no list: everything matches (before '^' is applied) */
    for (size_t i = 0; i < l->n && !hit; i++) {
        const char *ref = l->v[i].name;
        /* exact: the whole name and its NUL; prefix: the list entry's length */
        int same = l->exact ? !strcmp(name, ref) : !strncmp(name, ref, strlen(ref));
        int port_ok = port == -1 || l->v[i].port == -1 || port == l->v[i].port;
        hit = same && port_ok;
    }
    return hit ^ l->exclude;
}
