/* Defaults (nccl-tests' where they do not clash with a quick smoke test), the words
 * of --pattern and --expect-transport, and the test-only fault-injection switch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/smoke.h"

void cf_smoke_opts_defaults(struct cf_smoke_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = CF_BACKEND_NCCL;
    o->ops = (1u << CF_OP_COUNT) - 1;
    o->dtypes = 1u << CF_DT_FLOAT32;
    o->redops = 1u << CF_RED_SUM;
    o->places = CF_PLACE_OUT | CF_PLACE_IN;
    o->root = 0;
    o->sweep.min_bytes = 1024;
    o->sweep.max_bytes = 1 << 20;
    o->sweep.step_factor = 4;
    o->sweep.step_bytes = 1 << 20; /* nccl-tests' -i default, used with -f 1 */
    o->warmup_iters = 1;
    o->iters = 20;
    o->check = 1;
    o->average = CF_AVG_MEAN;
    o->op_timeout_s = 60;
    o->connect_timeout_s = 30;
    o->mpirun = "mpirun";
}

/* the index of name in a table of words ("" none), or -1 */
static int word_index(const char *const *words, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (words[i][0] && !strcmp(name, words[i]))
            return (int)i;
    return -1;
}

static const char *const pattern_names[] = {
    [CF_PATTERN_ALL] = "all", [CF_PATTERN_INTRA] = "intra", [CF_PATTERN_INTER] = "inter",
    [CF_PATTERN_PAIRWISE] = "pairwise", [CF_PATTERN_BISECT] = "bisect",
};
/* "any" is the absence of --expect-transport, not a word it takes */
static const char *const transport_names[] = {
    [CF_TRANSPORT_ANY] = "", [CF_TRANSPORT_IB] = "ib", [CF_TRANSPORT_SOCKET] = "socket",
    [CF_TRANSPORT_P2P] = "p2p", [CF_TRANSPORT_SHM] = "shm",
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int cf_smoke_pattern_parse(const char *name, enum cf_smoke_pattern *out)
{
    int i = word_index(pattern_names, COUNT(pattern_names), name);
    if (i >= 0)
        *out = (enum cf_smoke_pattern)i;
    return i >= 0 ? 0 : -1;
}

const char *cf_smoke_pattern_name(enum cf_smoke_pattern p)
{
    return (unsigned)p < COUNT(pattern_names) ? pattern_names[p] : NULL;
}

int cf_smoke_transport_parse(const char *name, enum cf_smoke_transport *out)
{
    int i = word_index(transport_names, COUNT(transport_names), name);
    if (i >= 0)
        *out = (enum cf_smoke_transport)i;
    return i >= 0 ? 0 : -1;
}

const char *cf_smoke_transport_name(enum cf_smoke_transport t)
{
    return (unsigned)t < COUNT(transport_names) && transport_names[t][0] ? transport_names[t] : "any";
}

int cf_smoke_fault_parse(const char *spec, struct cf_smoke_fault *out, cf_error *err)
{
    static const struct { const char *name; enum cf_smoke_fault_action action; } actions[] = {
        { "abort", CF_FAULT_ABORT }, { "hang", CF_FAULT_HANG }, { "exit", CF_FAULT_EXIT },
        { "corrupt", CF_FAULT_CORRUPT }, { "slow", CF_FAULT_SLOW },
    };
    memset(out, 0, sizeof *out);
    if (!spec || !*spec)
        return 0;
    struct strvec parts = STRVEC_INIT;
    cf_strvec_split(&parts, spec, ":", 1);
    int rc = -1;
    char *end;
    errno = 0;
    long rank = parts.n == 3 ? strtol(parts.v[0], &end, 10) : -1;
    if (parts.n != 3 || !*parts.v[0] || *end || errno || rank < 0 || rank > 1 << 24) {
        cf_error_set(err, CF_ERR_USAGE, "fault '%s': expected RANK:ACTION:OP, e.g. 1:abort:all_gather", spec);
        goto out;
    }
    out->rank = (int)rank;
    for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
        if (!strcmp(parts.v[1], actions[i].name))
            out->action = actions[i].action;
    if (out->action == CF_FAULT_NONE) {
        cf_error_set(err, CF_ERR_USAGE, "fault '%s': action '%s' is not abort, hang, exit, corrupt or slow", spec,
                     parts.v[1]);
        goto out;
    }
    if (!strcmp(parts.v[2], "init") || !strcmp(parts.v[2], "finalize")) {
        out->op = CF_OP_COUNT; /* no collective: before the backend starts, or after the verdict */
        out->at_finalize = parts.v[2][0] == 'f';
        if (out->at_finalize && (out->action == CF_FAULT_CORRUPT || out->action == CF_FAULT_SLOW)) {
            out->action = CF_FAULT_NONE;
            cf_error_set(err, CF_ERR_USAGE, "fault '%s': at finalize only abort, hang or exit", spec);
            goto out;
        }
    } else if (cf_smoke_op_parse(parts.v[2], &out->op)) {
        out->action = CF_FAULT_NONE;
        cf_error_set(err, CF_ERR_USAGE, "fault '%s': '%s' is not a collective, 'init' or 'finalize'", spec, parts.v[2]);
        goto out;
    }
    rc = 0;
out:
    cf_strvec_clear(&parts);
    return rc;
}
