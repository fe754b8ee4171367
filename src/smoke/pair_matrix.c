/* The host x host model of a smoke document (cclforge/smoke_matrix.h), from its
 * typed model (the reader checked a saved document's fields and indexes); the
 * size of the picture is capped before allocating. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/hostlist.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/sorted_names.h"
#include "smoke/stats.h"

/* host pairs x sizes a report draws at most (12 bytes each), and hosts (one
 * size's cells in one allocation of under 64 MB) */
#define MAX_CELLS (1u << 24)
#define MAX_HOSTS 2048
#define MAX_SIZES 64

static const char *const class_names[CF_PAIR_CLASS_COUNT] = { "untested", "ok", "slow", "failed" };

const char *cf_pair_class_name(enum cf_pair_class c)
{
    return c < CF_PAIR_CLASS_COUNT ? class_names[c] : "?";
}

/* a group of the document */
struct group {
    int id;
    long a, b;        /* host indexes (first-seen order), -1 unknown */
    int nhosts;
    int failed, bad;
    double spread;
    double busbw;     /* its median busbw, else its average */
    long *members;    /* non-pairs: host indexes from the rows */
    size_t nmembers;
};

/* ids sorted for look-up */
struct id_ix {
    int id;
    size_t ix;
};

struct build {
    const struct cf_smoke_doc *d;
    struct cf_sorted_names names; /* the ranks' host names, by name */
    long *host_of_rank;      /* rank -> host index (first-seen order), -1 none */
    char **first;            /* host names in first-seen order (the model's) */
    size_t nnames;
    struct group *groups;
    size_t ngroups;
    struct id_ix *ids;       /* by id */
};

static int field_error(cf_error *err, const char *what, const char *fix)
{
    return cf_error_set(err, CF_ERR_FORMAT, "smoke document: %s (%s)", what, fix);
}

static long host_lookup(const struct build *b, const char *name, size_t len)
{
    long rank = cf_sorted_names_find(&b->names, name, len);
    return rank >= 0 ? b->host_of_rank[rank] : -1;
}

/* The hosts: the ranks' host names, each once, in the order first seen. */
static void load_hosts(struct build *b)
{
    const struct cf_smoke_doc *d = b->d;
    const char **names = cf_xcalloc(d->nlisted + 1, sizeof *names);
    for (size_t r = 0; r < d->nlisted; r++)
        names[r] = d->ranks[r].hostname && d->ranks[r].hostname[0] ? d->ranks[r].hostname : NULL;
    cf_sorted_names_build(&b->names, names, d->nlisted, NULL);
    b->host_of_rank = cf_xcalloc(d->nlisted + 1, sizeof *b->host_of_rank);
    b->first = cf_xcalloc(d->nlisted + 1, sizeof *b->first);
    for (size_t r = 0; r < d->nlisted; r++) {
        b->host_of_rank[r] = -1;
        if (!names[r])
            continue;
        /* the first rank of that name: equal names sort by position */
        size_t first = (size_t)cf_sorted_names_find(&b->names, names[r], strlen(names[r]));
        if (first == r) {
            b->host_of_rank[r] = (long)b->nnames;
            b->first[b->nnames++] = d->ranks[r].hostname;
        } else {
            b->host_of_rank[r] = b->host_of_rank[first];
        }
    }
    free(names);
}

static int id_ix_cmp(const void *a, const void *b)
{
    int x = ((const struct id_ix *)a)->id, y = ((const struct id_ix *)b)->id;
    return (x > y) - (x < y);
}

static long group_lookup(const struct build *b, int id)
{
    struct id_ix probe = { id, 0 };
    const struct id_ix *hit = bsearch(&probe, b->ids, b->ngroups, sizeof *b->ids, id_ix_cmp);
    return hit ? (long)hit->ix : -1;
}

/* "a+b" where both halves are known hosts (a name may hold a '+') */
static void split_pair_label(const struct build *b, const char *label, struct group *g)
{
    for (const char *p = strchr(label, '+'); p; p = strchr(p + 1, '+')) {
        long x = host_lookup(b, label, (size_t)(p - label)), y = host_lookup(b, p + 1, strlen(p + 1));
        if (x >= 0 && y >= 0) {
            g->a = x;
            g->b = y;
            return;
        }
    }
}

static void add_member(struct group *g, long h)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (g->members[i] == h)
            return;
    if (g->nmembers >= 64) /* enough to tell a pair from a larger group */
        return;
    if (!g->members)
        g->members = cf_xcalloc(64, sizeof *g->members);
    g->members[g->nmembers++] = h;
}

static void load_groups(struct build *b)
{
    const struct cf_smoke_doc *d = b->d;
    b->groups = cf_xcalloc(d->ngroups + 1, sizeof *b->groups);
    b->ids = cf_xcalloc(d->ngroups + 1, sizeof *b->ids);
    for (size_t i = 0; i < d->ngroups; i++) {
        const struct cf_smoke_group *dg = &d->groups[i];
        struct group *g = &b->groups[b->ngroups];
        g->id = dg->id;
        g->a = g->b = -1;
        g->nhosts = dg->nhosts;
        g->failed = dg->failed != 0;
        g->bad = dg->bad;
        g->spread = dg->busbw_spread;
        g->busbw = isfinite(dg->busbw_median) ? dg->busbw_median : dg->avg_busbw;
        if (g->nhosts == 2)
            split_pair_label(b, dg->label, g);
        b->ids[b->ngroups] = (struct id_ix){ g->id, b->ngroups };
        b->ngroups++;
    }
    qsort(b->ids, b->ngroups, sizeof *b->ids, id_ix_cmp);
}

/* group members from the ranks each row names (rank_time_us) */
static void members_from_rows(struct build *b)
{
    const struct cf_smoke_doc *d = b->d;
    for (size_t i = 0; i < d->nrows; i++) {
        const struct cf_smoke_row *r = &d->rows[i];
        long gi = group_lookup(b, r->group);
        if (gi < 0 || !r->rank_of)
            continue;
        for (int k = 0; k < r->nranks; k++) {
            int rk = r->rank_of[k];
            if (rk >= 0 && (size_t)rk < d->nlisted && b->host_of_rank[rk] >= 0)
                add_member(&b->groups[gi], b->host_of_rank[rk]);
        }
    }
    for (size_t i = 0; i < b->ngroups; i++) {
        struct group *g = &b->groups[i];
        if (g->a < 0 && g->nmembers == 2) {
            g->a = g->members[0];
            g->b = g->members[1];
        }
        if (g->nmembers == 0 && g->a >= 0) {
            add_member(g, g->a);
            add_member(g, g->b);
        }
    }
}

static int is_pairwise(const struct build *b)
{
    if (!b->ngroups)
        return 0;
    for (size_t i = 0; i < b->ngroups; i++)
        if (b->groups[i].a < 0 || b->groups[i].a == b->groups[i].b)
            return 0;
    return 1;
}

/* Which hosts are bad: the run's search decided it, once, and wrote them in
 * "bad_hosts"; this only reads them. A document without the field (written before
 * it) names nobody, and says so (m->bad_hosts_known = 0). */
static int load_bad(const struct build *b, struct cf_pair_matrix *m, unsigned char *bad_by_first, cf_error *err)
{
    const struct cf_smoke_doc *d = b->d;
    m->bad_hosts_known = d->bad_hosts_known;
    for (size_t i = 0; i < d->bad_hosts.n; i++) {
        long h = host_lookup(b, d->bad_hosts.v[i], strlen(d->bad_hosts.v[i]));
        if (h < 0)
            return field_error(err, "\"bad_hosts\" names a host that no rank ran on", "name hosts of \"ranks\" only");
        bad_by_first[h] = 1;
    }
    return 0;
}

/* a row of the document, as the matrix reads it */
struct row {
    const char *op;
    double bytes, busbw, spread;
    int ok;
    long group;
};

static void read_row(const struct build *b, const struct cf_smoke_row *d, struct row *r)
{
    const struct cf_smoke_op_info *op = cf_smoke_op_info(d->op);
    r->op = op ? op->name : "?";
    r->bytes = (double)d->bytes;
    r->busbw = d->busbw;
    r->spread = d->busbw_spread;
    r->ok = d->ok;
    r->group = group_lookup(b, d->group);
}

/* the (op, bytes) keys of the pairs' rows: ops in the order they first ran, then bytes */
static int collect_sizes(struct build *b, struct cf_pair_matrix *m, cf_error *err)
{
    struct strvec ops = STRVEC_INIT;
    m->size = cf_xcalloc(MAX_SIZES + 1, sizeof *m->size);
    for (size_t i = 0; i < b->d->nrows; i++) {
        struct row r;
        read_row(b, &b->d->rows[i], &r);
        if (r.group < 0 || b->groups[r.group].a < 0)
            continue;
        size_t k = 0;
        while (k < m->nsizes && (strcmp(m->size[k].op, r.op) || m->size[k].bytes != r.bytes))
            k++;
        if (k < m->nsizes)
            continue;
        if (m->nsizes == MAX_SIZES) {
            cf_strvec_clear(&ops);
            return cf_error_set(err, CF_ERR_FAILED, "smoke document: more than 64 test sizes in pairs (a report "
                                                    "draws up to 64 sizes)");
        }
        if (!cf_strvec_contains(&ops, r.op))
            cf_strvec_push(&ops, r.op);
        m->size[m->nsizes].op = cf_strdup(r.op);
        m->size[m->nsizes].bytes = r.bytes;
        m->nsizes++;
    }
    /* order: op as first run, then bytes (a handful of keys: insertion sort) */
    for (size_t i = 1; i < m->nsizes; i++) {
        struct cf_pair_size key = m->size[i];
        size_t j = i;
        for (; j > 0; j--) {
            const struct cf_pair_size *p = &m->size[j - 1];
            size_t po = 0, ko = 0;
            while (po < ops.n && strcmp(ops.v[po], p->op))
                po++;
            while (ko < ops.n && strcmp(ops.v[ko], key.op))
                ko++;
            if (po < ko || (po == ko && p->bytes <= key.bytes))
                break;
            m->size[j] = m->size[j - 1];
        }
        m->size[j] = key;
    }
    cf_strvec_clear(&ops);
    m->shown = 0;
    for (size_t i = 1; i < m->nsizes; i++)
        if (m->size[i].bytes > m->size[m->shown].bytes)
            m->shown = i;
    return 0;
}

static int fill_cells(struct build *b, struct cf_pair_matrix *m, const size_t *disp, cf_error *err)
{
    size_t n = m->nhosts;
    if (m->pairwise && n > MAX_HOSTS)
        return cf_error_set(err, CF_ERR_FAILED, "smoke document: %zu hosts; a report draws a matrix of up to %d", n,
                            MAX_HOSTS);
    if (m->nsizes && n * n > MAX_CELLS / m->nsizes)
        return cf_error_set(err, CF_ERR_FAILED,
                            "smoke document: %zu hosts x %zu test sizes is more than a report draws (%u pairs x sizes)",
                            n, m->nsizes, MAX_CELLS);
    unsigned short *count = cf_xcalloc(n * n * (m->nsizes ? m->nsizes : 1) + 1, sizeof *count);
    for (size_t s = 0; s < m->nsizes; s++) {
        m->size[s].cell = cf_xcalloc(n * n + 1, sizeof *m->size[s].cell);
        for (size_t i = 0; i < n * n; i++) {
            m->size[s].cell[i].busbw = NAN;
            m->size[s].cell[i].spread = -1;
        }
    }
    /* every pair's class from its group's judgement, at every size it ran */
    for (size_t i = 0; i < b->d->nrows; i++) {
        struct row r;
        read_row(b, &b->d->rows[i], &r);
        if (r.group < 0 || b->groups[r.group].a < 0)
            continue;
        const struct group *g = &b->groups[r.group];
        size_t s = 0;
        while (s < m->nsizes && (strcmp(m->size[s].op, r.op) || m->size[s].bytes != r.bytes))
            s++;
        if (s == m->nsizes)
            continue;
        size_t x = disp[g->a], y = disp[g->b];
        struct cf_pair_cell *c = &m->size[s].cell[x * n + y];
        unsigned short *k = &count[s * n * n + x * n + y];
        if (*k == 0) {
            c->busbw = 0;
            c->cls = g->failed ? CF_PAIR_FAILED : g->bad ? CF_PAIR_SLOW : CF_PAIR_OK;
            c->spread = (float)g->spread;
        }
        if (*k < 65535)
            (*k)++;
        c->busbw += (float)r.busbw;
        if (!r.ok)
            c->cls = CF_PAIR_FAILED;
        if (r.spread >= 0 && r.spread > c->spread)
            c->spread = (float)r.spread;
    }
    for (size_t s = 0; s < m->nsizes; s++) {
        struct cf_pair_cell *cell = m->size[s].cell;
        double *vals = cf_xcalloc(n * n / 2 + 1, sizeof *vals);
        size_t nv = 0;
        for (size_t x = 0; x < n; x++)
            for (size_t y = 0; y < n; y++) {
                struct cf_pair_cell *c = &cell[x * n + y];
                unsigned short k = count[s * n * n + x * n + y];
                if (!k)
                    continue;
                c->busbw /= k;
                cell[y * n + x] = *c; /* symmetric; a pair ran once */
            }
        for (size_t x = 0; x < n; x++)
            for (size_t y = x + 1; y < n; y++) {
                const struct cf_pair_cell *c = &cell[x * n + y];
                if (c->cls == CF_PAIR_OK || c->cls == CF_PAIR_SLOW)
                    vals[nv++] = c->busbw;
                m->npairs_tested += s == m->shown && c->cls != CF_PAIR_UNTESTED;
            }
        if (nv)
            m->size[s].median = cf_smoke_median(vals, nv);
        free(vals);
    }
    free(count);
    return 0;
}

/* The pairs' own figures (each group's median or average over its tests) as one
 * more "size", drawn first when some pair has no row of its own at a size (the
 * run's table holds the rows of rank 0's groups only), so that no pair that ran
 * reads as untested. */
static void add_group_key(struct build *b, struct cf_pair_matrix *m, const size_t *disp)
{
    size_t n = m->nhosts, pairs = 0, complete = 1;
    for (size_t i = 0; i < b->ngroups; i++)
        pairs += b->groups[i].a >= 0;
    for (size_t s = 0; s < m->nsizes; s++) {
        size_t have = 0;
        for (size_t x = 0; x < n; x++)
            for (size_t y = x + 1; y < n; y++)
                have += m->size[s].cell[x * n + y].cls != CF_PAIR_UNTESTED;
        complete &= have >= pairs;
    }
    if ((complete && m->nsizes) || !pairs || n > MAX_HOSTS || n * n * (m->nsizes + 1) > MAX_CELLS ||
        m->nsizes >= MAX_SIZES)
        return;
    struct cf_pair_size *k = &m->size[m->nsizes];
    k->op = cf_strdup("every test");
    k->bytes = -1;
    k->cell = cf_xcalloc(n * n + 1, sizeof *k->cell);
    for (size_t i = 0; i < n * n; i++) {
        k->cell[i].busbw = NAN;
        k->cell[i].spread = -1;
    }
    double *vals = cf_xcalloc(pairs + 1, sizeof *vals);
    size_t nv = 0;
    for (size_t i = 0; i < b->ngroups; i++) {
        const struct group *g = &b->groups[i];
        if (g->a < 0)
            continue;
        struct cf_pair_cell c = { (float)g->busbw, (float)g->spread,
                                  g->failed ? CF_PAIR_FAILED : g->bad ? CF_PAIR_SLOW : CF_PAIR_OK };
        size_t x = disp[g->a], y = disp[g->b];
        k->cell[x * n + y] = k->cell[y * n + x] = c;
        if (!g->failed)
            vals[nv++] = g->busbw;
    }
    if (nv)
        k->median = cf_smoke_median(vals, nv);
    free(vals);
    m->shown = m->nsizes++;
}

/* Each host's links, from its ranks' "links" (each link once per host), and the
 * capacity of every pair's path. */
#define HOST_LINKS_MAX 256 /* 8 GPUs with a link to each peer, and the host's ports */
static void load_links(const struct build *b, struct cf_pair_matrix *m, const size_t *disp)
{
    size_t n = m->nhosts, any = 0;
    m->links = cf_xcalloc(n + 1, sizeof *m->links);
    m->nlinks = cf_xcalloc(n + 1, sizeof *m->nlinks);
    for (size_t r = 0; r < b->d->nlisted; r++) {
        long hi = b->host_of_rank[r];
        const struct cf_rank_link *got = b->d->ranks[r].links;
        size_t k = b->d->ranks[r].nlinks;
        if (hi < 0 || !k)
            continue;
        size_t d = disp[hi];
        if (!m->links[d])
            m->links[d] = cf_xcalloc(HOST_LINKS_MAX, sizeof *m->links[d]);
        for (size_t i = 0; i < k; i++) {
            size_t j = 0;
            const struct cf_rank_link *have = m->links[d];
            while (j < m->nlinks[d] && (strcmp(have[j].name, got[i].name) || have[j].kind != got[i].kind ||
                                        strcmp(have[j].peer, got[i].peer)))
                j++;
            if (j == m->nlinks[d] && j < HOST_LINKS_MAX)
                m->links[d][m->nlinks[d]++] = got[i];
        }
        any = 1;
    }
    if (!any) { /* nothing recorded: no capacity anywhere */
        free(m->links);
        free(m->nlinks);
        m->links = NULL;
        m->nlinks = NULL;
        return;
    }
    if (!m->pairwise)
        return;
    m->capacity = cf_xcalloc(n * n + 1, sizeof *m->capacity);
    for (size_t x = 0; x < n; x++)
        for (size_t y = x + 1; y < n; y++)
            m->capacity[x * n + y] = m->capacity[y * n + x] =
                (float)cf_path_capacity(m->links[x], m->nlinks[x], m->links[y], m->nlinks[y], NULL);
}

/* Each group's capacity from its hosts (a group whose hosts are not all known from
 * its rows has none); the words of the first one that has one. */
static void group_capacities(const struct build *b, struct cf_pair_matrix *m, const size_t *disp)
{
    m->ngroups = b->ngroups;
    if (!m->links || !b->ngroups)
        return;
    m->group_capacity = cf_xcalloc(b->ngroups + 1, sizeof *m->group_capacity);
    for (size_t i = 0; i < b->ngroups; i++) {
        const struct group *g = &b->groups[i];
        double cap = 0;
        struct strbuf w = STRBUF_INIT;
        struct strbuf *words = m->group_example ? NULL : &w;
        if (g->nmembers == 1 && g->nhosts <= 1) {
            size_t h = disp[g->members[0]];
            cap = cf_gpu_capacity(m->links[h], m->nlinks[h], words);
        } else if (g->nmembers >= 2 && (size_t)g->nhosts == g->nmembers) {
            size_t lx = 0, ly = 0;
            int known = 1; /* one pair of its hosts without a known path: the group's is unknown */
            for (size_t x = 0; x < g->nmembers; x++)
                for (size_t y = x + 1; y < g->nmembers; y++) {
                    size_t hx = disp[g->members[x]], hy = disp[g->members[y]];
                    double c = cf_pair_matrix_capacity(m, hx, hy, NULL);
                    known &= c > 0;
                    if (c > 0 && (cap == 0 || c < cap)) {
                        cap = c;
                        lx = hx;
                        ly = hy;
                    }
                }
            if (!known)
                cap = 0;
            if (cap > 0 && words) {
                cf_sb_addf(words, "%s \xe2\x86\x94 %s, the slowest pair of its hosts: ", m->host[lx], m->host[ly]);
                cf_pair_matrix_capacity(m, lx, ly, words);
            }
        }
        m->group_capacity[i] = (float)cap;
        if (words && cap > 0) {
            m->group_example = cf_sb_detach(&w);
            m->group_example_ix = i;
        }
        cf_sb_release(&w);
    }
}

void cf_pair_share_text(double share, char *buf, size_t cap)
{
    double pct = 100 * share;
    snprintf(buf, cap, pct < 1 && pct > 0 ? "%.2g %%" : "%.0f %%", pct);
}

double cf_pair_matrix_capacity(const struct cf_pair_matrix *m, size_t a, size_t b, struct strbuf *words)
{
    if (!m->links || a >= m->nhosts || b >= m->nhosts || a == b)
        return 0;
    if (m->capacity && !words)
        return m->capacity[a * m->nhosts + b];
    return cf_path_capacity(m->links[a], m->nlinks[a], m->links[b], m->nlinks[b], words);
}

static void release_build(struct build *b)
{
    for (size_t i = 0; i < b->ngroups; i++)
        free(b->groups[i].members);
    free(b->groups);
    free(b->ids);
    cf_sorted_names_release(&b->names);
    free(b->host_of_rank);
    free(b->first);
}

int cf_pair_matrix_build(const struct cf_smoke_doc *d, struct cf_pair_matrix *m, cf_error *err)
{
    memset(m, 0, sizeof *m);
    m->conclusive = d->conclusive;
    m->inconclusive_why = cf_strdup(d->inconclusive_why);
    struct build b = { .d = d };
    size_t *disp = NULL;
    unsigned char *bad = NULL;
    int rc = -1;
    load_hosts(&b);
    load_groups(&b);
    members_from_rows(&b);
    m->pairwise = is_pairwise(&b);
    m->nhosts = b.nnames;
    bad = cf_xcalloc(m->nhosts + 1, 1);
    if (load_bad(&b, m, bad, err) < 0)
        goto out;
    if (!m->conclusive) /* numbers that cannot tell name nobody, whatever the field says */
        memset(bad, 0, m->nhosts);
    /* display order: bad hosts first, each part in natural order */
    m->host = cf_xcalloc(m->nhosts + 1, sizeof *m->host);
    m->host_bad = cf_xcalloc(m->nhosts + 1, 1);
    m->bad = cf_xcalloc(m->nhosts + 1, sizeof *m->bad);
    size_t nb = 0, ng = 0;
    for (size_t h = 0; h < m->nhosts; h++)
        if (bad[h])
            m->bad[nb++] = b.first[h];
    m->nbad = nb;
    qsort(m->bad, nb, sizeof *m->bad, cf_hostname_natural_ptr_cmp);
    char **good = cf_xcalloc(m->nhosts + 1, sizeof *good);
    for (size_t h = 0; h < m->nhosts; h++)
        if (!bad[h])
            good[ng++] = b.first[h];
    qsort(good, ng, sizeof *good, cf_hostname_natural_ptr_cmp);
    m->exclude = cf_hostlist_compress((const char *const *)m->bad, nb);
    for (size_t i = 0; i < nb; i++) {
        m->host[i] = cf_strdup(m->bad[i]);
        m->host_bad[i] = 1;
    }
    for (size_t i = 0; i < ng; i++)
        m->host[nb + i] = cf_strdup(good[i]);
    free(good);
    for (size_t i = 0; i < nb; i++)
        m->bad[i] = m->host[i];
    /* first-seen index -> display index */
    disp = cf_xcalloc(m->nhosts + 1, sizeof *disp);
    for (size_t i = 0; i < m->nhosts; i++)
        disp[host_lookup(&b, m->host[i], strlen(m->host[i]))] = i;
    if (collect_sizes(&b, m, err) < 0 || fill_cells(&b, m, disp, err) < 0)
        goto out;
    load_links(&b, m, disp);
    group_capacities(&b, m, disp);
    if (m->pairwise) {
        add_group_key(&b, m, disp);
        m->npairs_tested = 0;
        for (size_t x = 0; m->nsizes && x < m->nhosts; x++)
            for (size_t y = x + 1; y < m->nhosts; y++)
                m->npairs_tested += m->size[m->shown].cell[x * m->nhosts + y].cls != CF_PAIR_UNTESTED;
    }
    rc = 0;
out:
    free(disp);
    free(bad);
    release_build(&b);
    if (rc < 0)
        cf_pair_matrix_release(m);
    return rc;
}

void cf_pair_matrix_release(struct cf_pair_matrix *m)
{
    for (size_t i = 0; i < m->nhosts && m->host; i++)
        free(m->host[i]);
    free(m->host);
    free(m->host_bad);
    free(m->bad); /* its names are host's */
    for (size_t s = 0; s < m->nsizes; s++) {
        free(m->size[s].op);
        free(m->size[s].cell);
    }
    free(m->size);
    free(m->inconclusive_why);
    free(m->exclude);
    for (size_t h = 0; h < m->nhosts && m->links; h++)
        free(m->links[h]);
    free(m->links);
    free(m->nlinks);
    free(m->capacity);
    free(m->group_capacity);
    free(m->group_example);
    memset(m, 0, sizeof *m);
}

static int worse(const struct cf_pair_cell *x, const struct cf_pair_cell *y)
{
    if (x->cls != y->cls)
        return x->cls > y->cls;
    return x->busbw < y->busbw;
}

size_t cf_pair_matrix_worst(const struct cf_pair_matrix *m, size_t s, struct cf_pair_ref *out, size_t max)
{
    if (s >= m->nsizes || !max)
        return 0;
    const struct cf_pair_cell *cell = m->size[s].cell;
    size_t n = m->nhosts, k = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            const struct cf_pair_cell *c = &cell[a * n + b];
            if (c->cls == CF_PAIR_UNTESTED)
                continue;
            if (k == max && !worse(c, &cell[out[k - 1].a * n + out[k - 1].b]))
                continue;
            size_t j = k < max ? k++ : max - 1;
            while (j > 0 && worse(c, &cell[out[j - 1].a * n + out[j - 1].b])) {
                out[j] = out[j - 1];
                j--;
            }
            out[j] = (struct cf_pair_ref){ a, b };
        }
    return k;
}
