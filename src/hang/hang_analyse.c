/* The analysis, with fr_trace's semantics as the reference: groups by name,
 * description and ranks; each member's collectives aligned by
 * collective_seq_id; at every number, the ranks that entered it, the ones
 * that never did (their last enqueued collective is below it), another op,
 * other sizes or dtypes (all_gather and reduce_scatter by numel x group
 * size), another state. Every number where ranks disagree is listed, in
 * order, then the sends and receives that do not meet (p2p); the first is
 * the group's answer. A ring that wrapped limits what is
 * known to the numbers every dump still holds. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/hang.h"

static const char *const kind_names[CF_HANG_KIND_COUNT] = {
    [CF_HANG_NOT_ENTERED] = "not-entered", [CF_HANG_OTHER_OP] = "other-op", [CF_HANG_SIZES] = "sizes",
    [CF_HANG_DTYPES] = "dtypes",           [CF_HANG_STATE] = "state",
};

const char *cf_hang_kind_name(enum cf_hang_kind k)
{
    return k < CF_HANG_KIND_COUNT ? kind_names[k] : "unknown";
}

/* ops whose sizes legitimately differ by rank (fr_trace's uneven collectives) */
static const char *const uneven_ops[] = { "all_to_all", "alltoall", "alltoall_base", "all_to_all_single",
                                          "gather",     "scatter",  "barrier" };
/* ops whose output holds group-size shards of the input, and the reverse */
static const char *const gathering_ops[] = { "all_gather", "_all_gather_base", "allgather", "allgather_into_tensor_coalesced",
                                             "all_gather_into_tensor_coalesced" };
static const char *const scattering_ops[] = { "reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced" };

static int in_table(const char *op, const char *const *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(op, t[i]))
            return 1;
    return 0;
}
#define IN(op, t) in_table(op, t, sizeof t / sizeof *t)

static int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void add_rank(int **v, size_t *n, int r)
{
    *v = cf_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = r;
}

/* ---- groups and their members ---- */

struct member {
    int rank;
    const struct cf_hang_dump *dump;  /* NULL: absent */
    const struct cf_hang_entry **at;  /* this group's collectives, by sequence number */
    size_t n_at, cursor;
    int64_t last;                     /* last enqueued (-1 unknown) */
    int64_t first;                    /* the first number its buffer holds */
    int wrapped;
};

static struct cf_hang_group *group_named(struct cf_hang_result *r, const char *name, const char *desc)
{
    for (size_t i = 0; i < r->n_groups; i++)
        if (!strcmp(r->groups[i].name, name)) {
            if (!r->groups[i].desc && desc && *desc)
                r->groups[i].desc = cf_strdup(desc);
            return &r->groups[i];
        }
    r->groups = cf_xrealloc(r->groups, (r->n_groups + 1) * sizeof *r->groups);
    struct cf_hang_group *g = &r->groups[r->n_groups++];
    memset(g, 0, sizeof *g);
    g->name = cf_strdup(name);
    g->desc = desc && *desc ? cf_strdup(desc) : NULL;
    g->known_from = 1;
    return g;
}

static const struct cf_hang_pg_status *status_of(const struct cf_hang_dump *d, const char *group)
{
    for (size_t i = 0; i < d->n_status; i++)
        if (d->status[i].group && !strcmp(d->status[i].group, group))
            return &d->status[i];
    return NULL;
}

static int dump_uses(const struct cf_hang_dump *d, const char *group)
{
    if (status_of(d, group))
        return 1;
    for (size_t i = 0; i < d->n_entries; i++)
        if (!strcmp(d->entries[i].group, group))
            return 1;
    return 0;
}

/* A pg_config entry describes the group when it names it (by key or name) and
 * holds every rank whose dump uses the group; gloo's (keyed by "", the last
 * group created) names none of the entries' groups and is not used. */
static const struct cf_hang_pg_config *config_of(const struct cf_hang_result *r, const char *group)
{
    for (size_t i = 0; i < r->n_dumps; i++) {
        const struct cf_hang_dump *d = &r->dumps[i];
        for (size_t k = 0; !d->refused && k < d->n_config; k++) {
            const struct cf_hang_pg_config *c = &d->config[k];
            if (!c->n_ranks || !(str_eq(c->key, group) || str_eq(c->name, group)))
                continue;
            int consistent = 1;
            for (size_t j = 0; consistent && j < r->n_dumps; j++) {
                const struct cf_hang_dump *o = &r->dumps[j];
                if (o->refused || !dump_uses(o, group))
                    continue;
                int found = 0;
                for (size_t m = 0; m < c->n_ranks && !found; m++)
                    found = c->ranks[m] == o->rank;
                consistent = found;
            }
            if (consistent)
                return c;
        }
    }
    return NULL;
}

static int is_default_group(const struct cf_hang_group *g)
{
    return !strcmp(g->name, "0") || (g->desc && !strcmp(g->desc, "default_pg"));
}

static void find_groups(struct cf_hang_result *r)
{
    int max_rank = -1;
    for (size_t i = 0; i < r->n_dumps; i++) {
        const struct cf_hang_dump *d = &r->dumps[i];
        if (d->rank > max_rank)
            max_rank = d->rank;
        if (d->refused)
            continue;
        for (size_t k = 0; k < d->n_entries; k++)
            group_named(r, d->entries[k].group, d->entries[k].desc);
        for (size_t k = 0; k < d->n_status; k++)
            group_named(r, d->status[k].group, NULL);
    }
    for (size_t gi = 0; gi < r->n_groups; gi++) {
        struct cf_hang_group *g = &r->groups[gi];
        const struct cf_hang_pg_config *c = config_of(r, g->name);
        if (c) {
            g->membership = cf_strdup("pg_config");
            for (size_t k = 0; k < c->n_ranks; k++)
                add_rank(&g->ranks, &g->n_ranks, c->ranks[k]);
        } else {
            g->membership = cf_strdup("entries");
            for (size_t i = 0; i < r->n_dumps; i++)
                if (!r->dumps[i].refused && dump_uses(&r->dumps[i], g->name))
                    add_rank(&g->ranks, &g->n_ranks, r->dumps[i].rank);
        }
        for (size_t k = 0; k < g->n_ranks; k++)
            if (g->ranks[k] > max_rank)
                max_rank = g->ranks[k];
    }
    r->world = max_rank + 1;
    /* the default group holds every rank: 0 to the highest any file or group names */
    for (size_t gi = 0; gi < r->n_groups; gi++) {
        struct cf_hang_group *g = &r->groups[gi];
        if (is_default_group(g) && strcmp(g->membership, "pg_config") && (int)g->n_ranks < r->world) {
            free(g->membership);
            g->membership = cf_strdup("world");
            g->n_ranks = 0;
            for (int k = 0; k < r->world; k++)
                add_rank(&g->ranks, &g->n_ranks, k);
        }
        if (g->n_ranks)
            qsort(g->ranks, g->n_ranks, sizeof *g->ranks, int_cmp);
        size_t w = 0; /* duplicates out */
        for (size_t k = 0; k < g->n_ranks; k++)
            if (!w || g->ranks[w - 1] != g->ranks[k])
                g->ranks[w++] = g->ranks[k];
        g->n_ranks = w;
    }
}

static int by_seq(const void *a, const void *b)
{
    const struct cf_hang_entry *x = *(const struct cf_hang_entry *const *)a, *y = *(const struct cf_hang_entry *const *)b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return (x->record_id > y->record_id) - (x->record_id < y->record_id);
}

static void load_member(struct member *m, const struct cf_hang_group *g)
{
    const struct cf_hang_dump *d = m->dump;
    m->last = -1;
    m->first = 1;
    if (!d)
        return;
    m->at = cf_xcalloc(d->n_entries + 1, sizeof *m->at);
    for (size_t i = 0; i < d->n_entries; i++) {
        const struct cf_hang_entry *e = &d->entries[i];
        if (!e->is_p2p && e->seq > 0 && !strcmp(e->group, g->name))
            m->at[m->n_at++] = e;
    }
    if (m->n_at)
        qsort(m->at, m->n_at, sizeof *m->at, by_seq);
    const struct cf_hang_pg_status *st = status_of(d, g->name);
    m->last = st && st->last_enqueued >= 0 ? st->last_enqueued : -1;
    if (m->n_at && m->at[m->n_at - 1]->seq > m->last)
        m->last = m->at[m->n_at - 1]->seq;
    if (m->last < 0)
        m->last = 0;
    m->wrapped = d->first_record_id > 0;
    if (m->wrapped)
        m->first = m->n_at ? m->at[0]->seq : m->last + 1;
}

/* ---- one sequence number ---- */

/* what a rank issued at one number: one entry, or a coalesced run of them */
struct issued {
    const struct cf_hang_entry *e; /* the first */
    size_t n;
    const char *op, *sizes, *dtypes; /* the pool's */
    int completed;                 /* -1 unknown */
};

static void issued_of(struct cf_hang_result *r, struct member *m, int64_t seq, struct issued *is)
{
    memset(is, 0, sizeof *is);
    while (m->cursor < m->n_at && m->at[m->cursor]->seq < seq)
        m->cursor++;
    size_t k = m->cursor;
    while (k < m->n_at && m->at[k]->seq == seq)
        k++;
    is->n = k - m->cursor;
    if (!is->n)
        return;
    is->e = m->at[m->cursor];
    if (is->n == 1) {
        is->op = is->e->op;
        is->sizes = is->e->in_sizes;
        is->dtypes = is->e->in_dtypes;
    } else {
        struct strbuf op = STRBUF_INIT, sz = STRBUF_INIT, dt = STRBUF_INIT;
        for (size_t i = m->cursor; i < k; i++) {
            const struct cf_hang_entry *e = m->at[i];
            if (!strcmp(e->op, "coalesced"))
                continue;
            cf_sb_addf(&op, "%s%s", op.len ? "+" : "", e->op);
            cf_sb_addf(&sz, "%s%s", sz.len ? "+" : "", e->in_sizes ? e->in_sizes : "?");
            cf_sb_addf(&dt, "%s%s", dt.len ? "+" : "", e->in_dtypes ? e->in_dtypes : "?");
        }
        is->op = op.len ? cf_hang_intern(r, op.buf, op.len) : cf_hang_intern(r, "coalesced", 9);
        is->sizes = cf_hang_intern(r, sz.buf ? sz.buf : "", sz.len);
        is->dtypes = cf_hang_intern(r, dt.buf ? dt.buf : "", dt.len);
        cf_sb_release(&op);
        cf_sb_release(&sz);
        cf_sb_release(&dt);
    }
    const char *state = m->at[k - 1]->state;
    is->completed = state ? !strcmp(state, "completed") : -1;
}

/* the entry's own sizes against the group's size (all_gather, reduce_scatter) */
static int sizes_self_consistent(const struct issued *is, size_t group_size)
{
    const struct cf_hang_entry *e = is->e;
    if (is->n != 1 || e->in_numel < 0 || e->out_numel < 0)
        return 1;
    int64_t gs = (int64_t)group_size;
    if (IN(e->op, gathering_ops))
        return e->out_numel == e->in_numel * gs;
    if (IN(e->op, scattering_ops))
        return e->in_numel == e->out_numel * gs;
    return 1;
}

/* how is differs from ref: CF_HANG_KIND_COUNT when it does not */
static enum cf_hang_kind differs(const struct issued *is, const struct issued *ref, size_t group_size)
{
    if (!str_eq(is->op, ref->op))
        return CF_HANG_OTHER_OP;
    int uneven = is->n == 1 && IN(is->e->op, uneven_ops);
    if (!uneven && (!str_eq(is->sizes, ref->sizes) || (is->n == 1 && ref->n == 1 && !str_eq(is->e->out_sizes, ref->e->out_sizes))))
        return CF_HANG_SIZES;
    if (!sizes_self_consistent(is, group_size))
        return CF_HANG_SIZES;
    if (is->dtypes && ref->dtypes && !str_eq(is->dtypes, ref->dtypes))
        return CF_HANG_DTYPES;
    if (is->completed >= 0 && ref->completed >= 0 && is->completed != ref->completed)
        return CF_HANG_STATE;
    return CF_HANG_KIND_COUNT;
}

static void rank_list(struct strbuf *sb, const int *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i && n > 12 && i == 6) {
            cf_sb_addf(sb, ", ... (%zu in all)", n);
            return;
        }
        cf_sb_addf(sb, "%s%d", i ? "," : "", v[i]);
    }
}

static char *why_of(enum cf_hang_kind kind, const struct cf_hang_divergence *dv, struct member *ms, size_t nm,
                    const struct issued *iss, const struct issued *ref)
{
    struct strbuf sb = STRBUF_INIT;
    cf_sb_adds(&sb, dv->n_odd == 1 ? "rank " : "ranks ");
    rank_list(&sb, dv->ranks_odd, dv->n_odd);
    /* the first odd rank tells the story; the others did the same or worse */
    const struct issued *odd = NULL;
    int64_t last = -1;
    for (size_t i = 0; i < nm; i++)
        if (ms[i].dump && ms[i].rank == dv->ranks_odd[0]) {
            odd = &iss[i];
            last = ms[i].last;
        }
    switch (kind) {
    case CF_HANG_NOT_ENTERED:
        cf_sb_addf(&sb, " never entered it (last enqueued: #%lld)", (long long)last);
        break;
    case CF_HANG_OTHER_OP:
        cf_sb_addf(&sb, " issued %s where the others issued %s", odd && odd->op ? odd->op : "?", ref->op);
        break;
    case CF_HANG_SIZES:
        cf_sb_addf(&sb, " issued %s with sizes %s -> %s where the others have %s -> %s", ref->op,
                   odd && odd->sizes ? odd->sizes : "?", odd && odd->n == 1 && odd->e->out_sizes ? odd->e->out_sizes : "?",
                   ref->sizes ? ref->sizes : "?", ref->n == 1 && ref->e->out_sizes ? ref->e->out_sizes : "?");
        break;
    case CF_HANG_DTYPES:
        cf_sb_addf(&sb, " issued %s in %s where the others use %s", ref->op, odd && odd->dtypes ? odd->dtypes : "?",
                   ref->dtypes ? ref->dtypes : "?");
        break;
    case CF_HANG_STATE:
        cf_sb_addf(&sb, " %s %s where the others %s", odd && odd->completed ? "completed" : "did not complete",
                   ref->op, ref->completed ? "completed it" : "did not");
        break;
    default: break;
    }
    return cf_sb_detach(&sb);
}

/* One number of one group: a divergence appended to g when ranks disagree. */
static void check_seq(struct cf_hang_result *r, struct cf_hang_group *g, struct member *ms, size_t nm, int64_t seq,
                      struct issued *iss)
{
    size_t present = 0;
    for (size_t i = 0; i < nm; i++) {
        if (ms[i].dump)
            issued_of(r, &ms[i], seq, &iss[i]);
        else
            memset(&iss[i], 0, sizeof iss[i]);
        present += iss[i].n > 0;
    }
    if (!present)
        return;
    /* the reference: the first rank's, unless most ranks issued otherwise */
    const struct issued *ref = NULL;
    for (size_t round = 0; round < 3; round++) {
        size_t agree = 0, other = nm;
        for (size_t i = 0; i < nm; i++) {
            if (!iss[i].n)
                continue;
            if (!ref)
                ref = &iss[i];
            if (differs(&iss[i], ref, g->n_ranks) == CF_HANG_KIND_COUNT)
                agree++;
            else if (other == nm)
                other = i;
        }
        if (2 * agree >= present || other == nm)
            break;
        ref = &iss[other];
    }
    struct cf_hang_divergence dv;
    memset(&dv, 0, sizeof dv);
    enum cf_hang_kind kind = CF_HANG_KIND_COUNT;
    for (size_t i = 0; i < nm; i++) {
        if (!ms[i].dump)
            continue;
        enum cf_hang_kind k;
        if (!iss[i].n)
            k = ms[i].last < seq ? CF_HANG_NOT_ENTERED : CF_HANG_KIND_COUNT; /* else: lost, not known */
        else
            k = differs(&iss[i], ref, g->n_ranks);
        if (k == CF_HANG_KIND_COUNT) {
            if (iss[i].n) {
                add_rank(&dv.ranks_in, &dv.n_in, ms[i].rank);
                if (iss[i].e->time_created_ns && (!dv.since_ns || iss[i].e->time_created_ns < dv.since_ns))
                    dv.since_ns = iss[i].e->time_created_ns;
            }
            continue;
        }
        if (k < kind)
            kind = k;
        add_rank(&dv.ranks_odd, &dv.n_odd, ms[i].rank);
    }
    if (kind == CF_HANG_KIND_COUNT) {
        free(dv.ranks_in);
        return;
    }
    /* the odd ranks of the kind named first, then the rest */
    dv.seq = seq;
    dv.kind = kind;
    dv.op = cf_strdup(ref->op);
    dv.where = ref->e->where ? cf_strdup(ref->e->where) : NULL;
    dv.why = why_of(kind, &dv, ms, nm, iss, ref);
    g->div = cf_xrealloc(g->div, (g->n_div + 1) * sizeof *g->div);
    g->div[g->n_div++] = dv;
}

static void analyse_group(struct cf_hang_result *r, struct cf_hang_group *g)
{
    struct member *ms = cf_xcalloc(g->n_ranks + 1, sizeof *ms);
    struct issued *iss = cf_xcalloc(g->n_ranks + 1, sizeof *iss);
    int64_t from = 1, to = 0;
    for (size_t i = 0; i < g->n_ranks; i++) {
        ms[i].rank = g->ranks[i];
        ms[i].dump = cf_hang_dump_of(r, g->ranks[i]);
        if (!ms[i].dump) {
            add_rank(&g->absent, &g->n_absent, g->ranks[i]);
            continue;
        }
        load_member(&ms[i], g);
        if (ms[i].first > from)
            from = ms[i].first;
        if (ms[i].last > to)
            to = ms[i].last;
    }
    g->known_from = from;
    g->last_seq = to;
    /* the numbers some member recorded, in order (a number none recorded has
     * nothing to compare; a counter far ahead costs nothing) */
    for (int64_t seq = from; seq <= to;) {
        check_seq(r, g, ms, g->n_ranks, seq, iss);
        int64_t next = INT64_MAX;
        for (size_t i = 0; i < g->n_ranks; i++) {
            const struct member *m = &ms[i];
            size_t c = m->cursor;
            while (c < m->n_at && m->at[c]->seq <= seq)
                c++;
            if (c < m->n_at && m->at[c]->seq < next)
                next = m->at[c]->seq;
            /* a rank whose last enqueued number is past its entries never entered the next one */
        }
        if (next == INT64_MAX)
            break;
        seq = next;
    }
    for (size_t i = 0; i < g->n_ranks; i++)
        free(ms[i].at);
    free(ms);
    free(iss);
}

/* ---- point to point ---- */

/* "nccl:send 0->1" / "nccl:recv 1<-0": the group-local sender and receiver; -1 unknown ("?") */
static int p2p_peers(const struct cf_hang_entry *e, int *src, int *dst)
{
    const char *sp = e->profiling_name ? strchr(e->profiling_name, ' ') : NULL;
    if (!sp)
        return -1;
    char *end;
    long a = strtol(sp + 1, &end, 10);
    if (end == sp + 1 || a < 0 || a >= CF_HANG_RANKS_MAX)
        return -1;
    int send = !strcmp(e->op, "send");
    if (strncmp(end, send ? "->" : "<-", 2))
        return -1;
    const char *q = end + 2;
    long b = strtol(q, &end, 10);
    if (end == q || b < 0 || b >= CF_HANG_RANKS_MAX)
        return -1; /* recv from any source: no peer to hold to account */
    *src = (int)(send ? a : b);
    *dst = (int)(send ? b : a);
    return 0;
}

struct half {
    int src, dst, recv; /* group-local sender and receiver; a receive or a send */
    size_t order;       /* its place in its rank's dump */
    const struct cf_hang_entry *e;
};

static int by_pair(const void *a, const void *b)
{
    const struct half *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->recv != y->recv)
        return x->recv - y->recv;
    return (x->order > y->order) - (x->order < y->order);
}

/* the k-th send from src to dst and the k-th receive of it: sizes equal, and
 * a send with no receive (or the reverse) names the rank that never posted
 * its half. Group-local ranks are positions in the group's sorted members;
 * each side counts only its own dump's halves (the sender's sends, the
 * receiver's receives). */
static void analyse_p2p(struct cf_hang_result *r, struct cf_hang_group *g)
{
    struct half *h = NULL;
    size_t n = 0;
    for (size_t gi = 0; gi < g->n_ranks; gi++) {
        const struct cf_hang_dump *d = cf_hang_dump_of(r, g->ranks[gi]);
        for (size_t i = 0; d && i < d->n_entries; i++) {
            const struct cf_hang_entry *e = &d->entries[i];
            int src, dst;
            if (!e->is_p2p || strcmp(e->group, g->name) || p2p_peers(e, &src, &dst) < 0)
                continue;
            int recv = !strcmp(e->op, "recv");
            if ((size_t)src >= g->n_ranks || (size_t)dst >= g->n_ranks || src == dst ||
                (size_t)(recv ? dst : src) != gi)
                continue; /* a half that is not this rank's own */
            h = cf_xrealloc(h, (n + 1) * sizeof *h);
            h[n++] = (struct half){ src, dst, recv, i, e };
        }
    }
    if (!n)
        return;
    qsort(h, n, sizeof *h, by_pair);
    for (size_t i = 0; i < n;) {
        size_t j = i, k = 0;
        while (j < n && h[j].src == h[i].src && h[j].dst == h[i].dst)
            j++;
        size_t ns = 0;
        while (i + ns < j && !h[i + ns].recv)
            ns++;
        const struct half *sends = &h[i], *recvs = &h[i + ns];
        size_t nr = j - i - ns;
        int si = h[i].src, di = h[i].dst;
        i = j;
        while (k < ns && k < nr &&
               !(sends[k].e->in_sizes && recvs[k].e->out_sizes && strcmp(sends[k].e->in_sizes, recvs[k].e->out_sizes)))
            k++;
        struct cf_hang_divergence dv;
        memset(&dv, 0, sizeof dv);
        dv.is_p2p = 1;
        const struct cf_hang_entry *ref;
        if (k < ns && k < nr) {
            ref = sends[k].e;
            dv.kind = CF_HANG_SIZES;
            add_rank(&dv.ranks_in, &dv.n_in, g->ranks[si]);
            add_rank(&dv.ranks_odd, &dv.n_odd, g->ranks[di]);
            dv.why = cf_asprintf("rank %d receives %s from rank %d, which sends %s", g->ranks[di],
                                 recvs[k].e->out_sizes, g->ranks[si], sends[k].e->in_sizes);
        } else if (ns != nr) {
            int more_sends = ns > nr;
            ref = more_sends ? sends[nr].e : recvs[ns].e; /* the first without its other half */
            dv.kind = CF_HANG_NOT_ENTERED;
            add_rank(&dv.ranks_in, &dv.n_in, more_sends ? g->ranks[si] : g->ranks[di]);
            add_rank(&dv.ranks_odd, &dv.n_odd, more_sends ? g->ranks[di] : g->ranks[si]);
            dv.why = cf_asprintf("rank %d posted %zu %s%s %s rank %d, which posted %zu matching %s%s",
                                 dv.ranks_in[0], more_sends ? ns : nr, more_sends ? "send" : "recv",
                                 (more_sends ? ns : nr) == 1 ? "" : "s", more_sends ? "to" : "from",
                                 dv.ranks_odd[0], more_sends ? nr : ns, more_sends ? "recv" : "send",
                                 (more_sends ? nr : ns) == 1 ? "" : "s");
        } else {
            continue;
        }
        dv.seq = ref->seq;
        dv.op = cf_strdup(ref->op);
        dv.where = ref->where ? cf_strdup(ref->where) : NULL;
        dv.since_ns = ref->time_created_ns;
        g->div = cf_xrealloc(g->div, (g->n_div + 1) * sizeof *g->div);
        g->div[g->n_div++] = dv;
    }
    free(h);
}

void cf_hang_analyse(struct cf_hang_result *r)
{
    find_groups(r);
    for (size_t i = 0; i < r->n_groups; i++) {
        analyse_group(r, &r->groups[i]);
        analyse_p2p(r, &r->groups[i]);
        const struct cf_hang_group *g = &r->groups[i];
        if (g->known_from > 1)
            cf_strvec_pushf(&r->notes,
                            "group %s: a ring buffer wrapped; what is known starts at collective #%lld", g->name,
                            (long long)g->known_from);
    }
}

const struct cf_hang_divergence *cf_hang_first(const struct cf_hang_result *r, const struct cf_hang_group **group)
{
    const struct cf_hang_divergence *best = NULL;
    for (size_t i = 0; i < r->n_groups; i++) {
        const struct cf_hang_group *g = &r->groups[i];
        if (!g->n_div)
            continue;
        const struct cf_hang_divergence *d = &g->div[0];
        /* the divergence that began first; unknown times after known ones */
        if (!best || (d->since_ns && (!best->since_ns || d->since_ns < best->since_ns))) {
            best = d;
            if (group)
                *group = g;
        }
    }
    return best;
}

int cf_hang_exit_code(const struct cf_hang_result *r)
{
    size_t readable = r->n_dumps - (size_t)r->n_refused;
    if (!readable)
        return 2;
    for (size_t i = 0; i < r->n_groups; i++)
        if (r->groups[i].n_div || r->groups[i].n_absent)
            return 1;
    return 0;
}
