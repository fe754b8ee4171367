/* The bad-node search of --pattern: which hosts test together in each round, and what
 * the results say. Every rank runs the same search on the same numbers (the results
 * are agreed over the world), so all ranks take the same next step.
 *   all       one group: the world
 *   intra     one group per host (its ranks), all at once
 *   inter     one ring per local rank k: the k-th rank of every host, all at once
 *   pairwise  disjoint host pairs in rounds (the circle method), every pair once
 *   bisect    halve the hosts under suspicion until one remains
 * A group is bad when it failed (a wrong element), when its median busbw is under
 * --min-busbw, or, without --min-busbw, under SLOW_RATIO of the best group it is
 * compared with. Medians come with a 90% band (stats.c): a group is slow only when
 * its whole band is under the line (half the best's band, or the bound), fine only
 * when its whole band is over it; else its numbers cannot tell, and a search that
 * needs such a judgement says "inconclusive" and why instead of naming a host.
 * Which hosts are bad is decided here, once (cf_smoke_search_bad_hosts): the verdict
 * names them and the run's document carries them ("bad_hosts", for exclude: and the
 * report). Pairwise: the hosts whose every pair was bad; bisect assumes one bad host
 * and names it, or says why it cannot; others: a bad group of one host, or the hosts
 * in every bad group and in no good one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/hostlist.h"
#include "smoke/groups.h"
#include "smoke/stats.h"

#define SLOW_RATIO 0.5

/* how a bisection ended */
enum bisect_end {
    BISECT_RUNNING, BISECT_CULPRIT, BISECT_LINK, BISECT_NONE_STANDS_OUT, BISECT_WHOLE_PASSED, BISECT_HALVES_PASSED,
    BISECT_BOTH_BAD, BISECT_ONE_HOST, BISECT_UNSURE
};
static const struct { enum bisect_end end; int bad; const char *text; } bisect_words[] = {
    { BISECT_CULPRIT, 1, "bisect: host %s is the bad one" },
    { BISECT_LINK, 1, "bisect: the link between %s and %s is bad; no third host to tell which end" },
    { BISECT_NONE_STANDS_OUT, 0, "bisect: no host stands out" },
    { BISECT_WHOLE_PASSED, 0, "bisect: all hosts together passed --min-busbw: no bad host" },
    { BISECT_HALVES_PASSED, 1, "bisect: every half passed but the whole did not: no single host is bad (a link "
                               "between the halves, or load)" },
    { BISECT_BOTH_BAD, 1, "bisect: both halves are bad: more than one bad host" },
    { BISECT_ONE_HOST, 0, "bisect: one host: nothing to bisect" },
};

/* a set of hosts */
struct hostset {
    int n;
    int *h;
};

struct ran_group {
    struct hostset hosts;
    int local_index; /* -1: all ranks of the hosts */
    struct smoke_group_result r;
};

/* what a group's numbers say against a line */
enum judgement { J_FINE, J_SLOW, J_FAILED, J_UNSURE };

struct smoke_search {
    enum cf_smoke_pattern pattern;
    int nhosts, per_host;
    double min_busbw;
    int round; /* rounds handed out */
    int done;
    struct ran_group *ran; /* every group that ran, for the verdict */
    size_t nran;
    /* bisect */
    enum { PHASE_WHOLE, PHASE_HALF_A, PHASE_HALF_B, PHASE_CHECK } phase;
    struct hostset cand, good, half[2], check;
    int suspect;           /* PHASE_CHECK: the host both halves shared */
    size_t half_best;      /* PHASE_CHECK: the better of the two halves (index in ran) */
    enum bisect_end end;
    size_t unsure[2];      /* BISECT_UNSURE: the group it could not judge, and its yardstick */
};

static void set_add(struct hostset *s, int h, int cap)
{
    for (int i = 0; i < s->n; i++)
        if (s->h[i] == h)
            return;
    if (s->n < cap)
        s->h[s->n++] = h;
}

static int set_has(const struct hostset *s, int h)
{
    for (int i = 0; i < s->n; i++)
        if (s->h[i] == h)
            return 1;
    return 0;
}

static void set_init(struct hostset *s, int cap)
{
    s->n = 0;
    s->h = cf_xcalloc((size_t)cap + 1, sizeof *s->h);
}

void cf_smoke_round_release(struct smoke_round *r)
{
    free(r->host_group);
    memset(r, 0, sizeof *r);
}

int cf_smoke_round_color(const struct smoke_round *r, int host, int local_index)
{
    if (r->by_local_index)
        return local_index < r->ngroups ? local_index : -1;
    return host >= 0 && host < r->nhosts ? r->host_group[host] : -1;
}

struct smoke_search *cf_smoke_search_new(enum cf_smoke_pattern pattern, int nhosts, int per_host, double min_busbw)
{
    struct smoke_search *s = cf_xcalloc(1, sizeof *s);
    s->pattern = pattern;
    s->nhosts = nhosts;
    s->per_host = per_host > 0 ? per_host : 1;
    s->min_busbw = min_busbw;
    set_init(&s->cand, nhosts);
    set_init(&s->good, nhosts);
    set_init(&s->half[0], nhosts);
    set_init(&s->half[1], nhosts);
    set_init(&s->check, nhosts);
    for (int h = 0; h < nhosts; h++)
        set_add(&s->cand, h, nhosts);
    return s;
}

void cf_smoke_search_free(struct smoke_search *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nran; i++)
        free(s->ran[i].hosts.h);
    free(s->ran);
    free(s->cand.h);
    free(s->good.h);
    free(s->half[0].h);
    free(s->half[1].h);
    free(s->check.h);
    free(s);
}

static void finish(struct smoke_search *s, enum bisect_end end)
{
    s->done = 1;
    s->end = end;
}

static void round_new(const struct smoke_search *s, struct smoke_round *r)
{
    memset(r, 0, sizeof *r);
    r->nhosts = s->nhosts;
    r->host_group = cf_xcalloc((size_t)s->nhosts + 1, sizeof *r->host_group);
    for (int h = 0; h < s->nhosts; h++)
        r->host_group[h] = -1;
}

static void round_add_set(struct smoke_round *r, const struct hostset *set)
{
    for (int i = 0; i < set->n; i++)
        r->host_group[set->h[i]] = r->ngroups;
    r->ngroups++;
}

/* The circle method over n (even) seats: seat n-1 stays, the others rotate; with an
 * odd host count the last seat is a bye. Every pair meets once in n-1 rounds. */
static int pairwise_round(const struct smoke_search *s, int round, struct smoke_round *out)
{
    int n = s->nhosts + (s->nhosts % 2);
    if (s->nhosts < 2 || round >= n - 1)
        return 0;
    round_new(s, out);
    for (int i = 0; i < n / 2; i++) {
        int a = i == 0 ? round : (round + i) % (n - 1);
        int b = i == 0 ? n - 1 : (round - i + n - 1) % (n - 1);
        if (a >= s->nhosts || b >= s->nhosts)
            continue; /* the bye */
        out->host_group[a] = out->host_group[b] = out->ngroups++;
    }
    return 1;
}

/* g against --min-busbw, or against SLOW_RATIO of best (NULL, or g itself: nothing to
 * compare with). Slow or fine only when the whole band is on one side of the line. */
static enum judgement judge(const struct smoke_search *s, const struct smoke_group_result *g,
                            const struct smoke_group_result *best)
{
    const struct smoke_bw_figure *f = &g->bw;
    if (g->failed)
        return J_FAILED;
    double below, above; /* slow when hi < below, fine when lo >= above */
    if (s->min_busbw > 0) {
        below = above = s->min_busbw;
    } else {
        if (!best || best == g || best->bw.median <= 0)
            return J_FINE;
        if (!best->bw.have_band)
            return J_UNSURE;
        below = SLOW_RATIO * best->bw.lo;
        above = SLOW_RATIO * best->bw.hi;
    }
    if (!f->have_band)
        return J_UNSURE;
    return f->hi < below ? J_SLOW : f->lo >= above ? J_FINE : J_UNSURE;
}

/* the yardstick among groups: the highest median of those that did not fail */
static const struct smoke_group_result *best_of(const struct ran_group *g, size_t n, size_t *at)
{
    const struct smoke_group_result *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (!g[i].r.failed && (!best || g[i].r.bw.median > best->bw.median)) {
            best = &g[i].r;
            if (at)
                *at = i;
        }
    return best;
}

/* bisect: the two halves to test next, or the end */
static void bisect_plan(struct smoke_search *s)
{
    if (s->cand.n <= 1) {
        finish(s, s->cand.n == 1 ? BISECT_CULPRIT : BISECT_NONE_STANDS_OUT);
        return;
    }
    struct hostset *a = &s->half[0], *b = &s->half[1];
    a->n = b->n = 0;
    int na = (s->cand.n + 1) / 2;
    for (int i = 0; i < s->cand.n; i++)
        set_add(i < na ? a : b, s->cand.h[i], s->nhosts);
    /* a lone host is tested with one shown good, else with one from the other half */
    if (a->n == 1 && s->good.n)
        set_add(a, s->good.h[0], s->nhosts);
    if (b->n == 1 && s->good.n)
        set_add(b, s->good.h[0], s->nhosts);
    if (a->n < 2 && b->n < 2) {
        /* two candidates and nobody to compare them with: the link between them is bad
         * if the whole was (failed, or under the bound); a ratio cannot say */
        int whole_bad = s->nran && judge(s, &s->ran[0].r, NULL) != J_FINE;
        finish(s, whole_bad ? BISECT_LINK : BISECT_NONE_STANDS_OUT);
        return;
    }
    if (a->n < 2)
        set_add(a, b->h[0], s->nhosts);
    if (b->n < 2)
        set_add(b, a->h[0], s->nhosts);
}

int cf_smoke_search_next(struct smoke_search *s, struct smoke_round *out)
{
    memset(out, 0, sizeof *out);
    if (s->done)
        return 0;
    int r = s->round;
    struct hostset every;
    set_init(&every, s->nhosts);
    for (int h = 0; h < s->nhosts; h++)
        set_add(&every, h, s->nhosts);
    int more = 1;
    switch (s->pattern) {
    case CF_PATTERN_ALL:
    case CF_PATTERN_INTER:
        if (r > 0) {
            more = 0;
            break;
        }
        round_new(s, out);
        round_add_set(out, &every);
        if (s->pattern == CF_PATTERN_INTER) {
            out->by_local_index = 1;
            out->ngroups = s->per_host;
        }
        break;
    case CF_PATTERN_INTRA:
        if (r > 0) {
            more = 0;
            break;
        }
        round_new(s, out);
        for (int h = 0; h < s->nhosts; h++)
            out->host_group[h] = out->ngroups++;
        break;
    case CF_PATTERN_PAIRWISE:
        more = pairwise_round(s, r, out);
        break;
    case CF_PATTERN_BISECT:
        if (s->phase == PHASE_HALF_A)
            bisect_plan(s);
        if (s->done) {
            more = 0;
            break;
        }
        round_new(s, out);
        round_add_set(out, s->phase == PHASE_WHOLE    ? &every
                           : s->phase == PHASE_CHECK  ? &s->check
                           : s->phase == PHASE_HALF_A ? &s->half[0]
                                                      : &s->half[1]);
        break;
    }
    free(every.h);
    if (!more)
        return 0;
    s->round++;
    return 1;
}

static void bisect_decide(struct smoke_search *s, size_t ia, size_t ib)
{
    const struct ran_group *ga = &s->ran[ia], *gb = &s->ran[ib];
    /* a group that failed is no yardstick of speed */
    size_t at = 0;
    const struct smoke_group_result *best = best_of(ga, 2, &at);
    at += ia;
    enum judgement ja = judge(s, &ga->r, best), jb = judge(s, &gb->r, best);
    if (ja == J_UNSURE || jb == J_UNSURE) {
        s->unsure[0] = ja == J_UNSURE ? ia : ib;
        s->unsure[1] = at;
        finish(s, BISECT_UNSURE);
        return;
    }
    int bad_a = ja != J_FINE, bad_b = jb != J_FINE;
    const struct hostset *a = &s->half[0], *b = &s->half[1];
    struct hostset keep;
    set_init(&keep, s->nhosts);
    int shared = -1;
    for (int i = 0; i < a->n && shared < 0; i++)
        if (set_has(b, a->h[i]))
            shared = a->h[i];
    if (!bad_a && !bad_b && shared >= 0 && s->min_busbw <= 0) {
        /* the halves are alike, and both hold the host one lent the other: either it
         * is bad, or nobody is. The others without it tell (if they are much faster). */
        s->suspect = shared;
        s->half_best = at;
        s->check.n = 0;
        for (int i = 0; i < s->cand.n; i++)
            if (s->cand.h[i] != shared)
                set_add(&s->check, s->cand.h[i], s->nhosts);
        for (int i = 0; s->check.n < 2 && i < s->good.n; i++)
            set_add(&s->check, s->good.h[i], s->nhosts);
        if (s->check.n >= 2)
            s->phase = PHASE_CHECK;
        else
            finish(s, BISECT_NONE_STANDS_OUT);
    } else if (!bad_a && !bad_b) {
        finish(s, s->min_busbw > 0 ? BISECT_HALVES_PASSED : BISECT_NONE_STANDS_OUT);
    } else if (bad_a != bad_b) {
        /* the good half's hosts are good; suspicion stays with the bad half's others */
        const struct hostset *good = bad_a ? b : a, *bad = bad_a ? a : b;
        for (int i = 0; i < good->n; i++)
            set_add(&s->good, good->h[i], s->nhosts);
        for (int i = 0; i < bad->n; i++)
            if (set_has(&s->cand, bad->h[i]) && !set_has(&s->good, bad->h[i]))
                set_add(&keep, bad->h[i], s->nhosts);
    } else {
        /* both bad: the host they share (one lent to the other half) is the suspect */
        for (int i = 0; i < a->n; i++)
            if (set_has(b, a->h[i]))
                set_add(&keep, a->h[i], s->nhosts);
        if (!keep.n)
            finish(s, BISECT_BOTH_BAD);
    }
    if (!s->done) {
        s->cand.n = 0;
        for (int i = 0; i < keep.n; i++)
            set_add(&s->cand, keep.h[i], s->nhosts);
    }
    free(keep.h);
}

static void record(struct smoke_search *s, const struct smoke_round *round, int g, const struct smoke_group_result *r)
{
    s->ran = cf_xrealloc(s->ran, (s->nran + 1) * sizeof *s->ran);
    struct ran_group *rg = &s->ran[s->nran++];
    set_init(&rg->hosts, s->nhosts);
    for (int h = 0; h < s->nhosts; h++)
        if (round->by_local_index || round->host_group[h] == g)
            set_add(&rg->hosts, h, s->nhosts);
    rg->local_index = round->by_local_index ? g : -1;
    rg->r = *r;
}

void cf_smoke_search_result(struct smoke_search *s, const struct smoke_round *round,
                            const struct smoke_group_result *res)
{
    for (int g = 0; g < round->ngroups; g++)
        record(s, round, g, &res[g]);
    if (s->pattern != CF_PATTERN_BISECT)
        return;
    switch (s->phase) {
    case PHASE_WHOLE:
        /* with a bound, a whole set that passes it needs no search */
        if (s->nhosts < 2) {
            finish(s, BISECT_ONE_HOST);
        } else if (s->min_busbw > 0) {
            enum judgement j = judge(s, &res[0], NULL);
            if (j == J_FINE)
                finish(s, BISECT_WHOLE_PASSED);
            if (j == J_UNSURE) {
                s->unsure[0] = s->unsure[1] = s->nran - 1;
                finish(s, BISECT_UNSURE);
            }
        }
        s->phase = PHASE_HALF_A;
        break;
    case PHASE_HALF_A:
        s->phase = PHASE_HALF_B;
        break;
    case PHASE_HALF_B:
        s->phase = PHASE_HALF_A;
        bisect_decide(s, s->nran - 2, s->nran - 1);
        break;
    case PHASE_CHECK: {
        /* the halves are slow against the others without the suspect, or not */
        enum judgement j = res[0].failed ? J_FINE : judge(s, &s->ran[s->half_best].r, &res[0]);
        if (j == J_UNSURE) {
            s->unsure[0] = s->half_best;
            s->unsure[1] = s->nran - 1;
            finish(s, BISECT_UNSURE);
        } else if (j == J_SLOW) {
            s->cand.n = 0;
            set_add(&s->cand, s->suspect, s->nhosts);
            finish(s, BISECT_CULPRIT);
        } else {
            finish(s, BISECT_NONE_STANDS_OUT);
        }
        break;
    }
    }
}

/* group i against the best of the whole search */
static enum judgement judged(const struct smoke_search *s, size_t i)
{
    return judge(s, &s->ran[i].r, best_of(s->ran, s->nran, NULL));
}

int cf_smoke_search_bad(const struct smoke_search *s, size_t i)
{
    enum judgement j = judged(s, i);
    return j == J_SLOW || j == J_FAILED;
}

int cf_smoke_search_conclusive(const struct smoke_search *s, size_t i)
{
    return judged(s, i) != J_UNSURE;
}

static void add_names(struct strbuf *sb, const struct hostset *set, char *const *names)
{
    for (int i = 0; i < set->n; i++)
        cf_sb_addf(sb, "%s%s", i ? "+" : "", names[set->h[i]]);
}

void cf_smoke_group_label(const struct smoke_round *r, int group, char *const *names, char *out, size_t cap)
{
    struct strbuf sb = STRBUF_INIT;
    int first = 1;
    for (int h = 0; h < r->nhosts; h++) {
        if (!r->by_local_index && r->host_group[h] != group)
            continue;
        cf_sb_addf(&sb, "%s%s", first ? "" : "+", names[h]);
        first = 0;
    }
    if (r->by_local_index)
        cf_sb_addf(&sb, " (local rank %d of each)", group);
    snprintf(out, cap, "%s", cf_sb_str(&sb));
    cf_sb_release(&sb);
}

/* the words of a bisection's end, with the candidate names in their "%s" places */
static void bisect_verdict(const struct smoke_search *s, char *const *names, struct strbuf *sb, int *bad)
{
    for (size_t i = 0; i < sizeof bisect_words / sizeof bisect_words[0]; i++) {
        if (bisect_words[i].end != s->end)
            continue;
        *bad = bisect_words[i].bad;
        const char *fill[2] = { s->cand.n > 0 ? names[s->cand.h[0]] : "?", s->cand.n > 1 ? names[s->cand.h[1]] : "?" };
        int k = 0;
        for (const char *t = bisect_words[i].text; *t; t++) {
            if (t[0] == '%' && t[1] == 's' && k < 2) {
                cf_sb_adds(sb, fill[k++]);
                t++;
            } else {
                cf_sb_addc(sb, *t);
            }
        }
        return;
    }
    cf_sb_adds(sb, "bisect: no verdict");
}

/* "h0+h2 (local rank 1)" */
static void add_label(struct strbuf *sb, const struct ran_group *g, char *const *names)
{
    add_names(sb, &g->hosts, names);
    if (g->local_index >= 0)
        cf_sb_addf(sb, " (local rank %d)", g->local_index);
}

static void add_figure(struct strbuf *sb, const struct smoke_group_result *r)
{
    cf_sb_addf(sb, "median %.3g GB/s", r->bw.median);
    if (r->bw.have_band)
        cf_sb_addf(sb, ", band %.3g-%.3g", r->bw.lo, r->bw.hi);
}

/* Why groups could not be judged: too few samples for a band, or bands that straddle
 * the line. unsure: indices in ran (n of them); yard: the yardstick's, or (size_t)-1. */
static void unsure_why(const struct smoke_search *s, char *const *names, const size_t *unsure, size_t n,
                       size_t judged_of, size_t yard, struct strbuf *sb)
{
    const char *name = cf_smoke_pattern_name(s->pattern);
    int samples = s->ran[unsure[0]].r.samples;
    if (yard != (size_t)-1 && s->ran[yard].r.samples < samples)
        samples = s->ran[yard].r.samples;
    if (samples < SMOKE_MIN_BAND_SAMPLES) {
        cf_sb_addf(sb,
                   "%s: %d timed sample%s per test cannot tell a slow group from a noisy one (a median's 90%% band "
                   "needs %d: --iters %d or more)",
                   name, samples, samples == 1 ? "" : "s", SMOKE_MIN_BAND_SAMPLES, SMOKE_MIN_BAND_SAMPLES);
        return;
    }
    cf_sb_addf(sb, "%s: %zu of %zu group%s cannot be told %s or not at this spread: ", name, n, judged_of,
               judged_of == 1 ? "" : "s", s->min_busbw > 0 ? "below --min-busbw" : "slow");
    for (size_t i = 0; i < n && i < 3; i++) {
        cf_sb_adds(sb, i ? "; " : "");
        add_label(sb, &s->ran[unsure[i]], names);
        cf_sb_adds(sb, " (");
        add_figure(sb, &s->ran[unsure[i]].r);
        cf_sb_adds(sb, ")");
    }
    if (n > 3)
        cf_sb_addf(sb, "; %zu more", n - 3);
    if (s->min_busbw > 0) {
        cf_sb_addf(sb, " against --min-busbw %g GB/s", s->min_busbw);
    } else if (yard != (size_t)-1) {
        cf_sb_adds(sb, " against half of ");
        add_label(sb, &s->ran[yard], names);
        cf_sb_adds(sb, " (");
        add_figure(sb, &s->ran[yard].r);
        cf_sb_adds(sb, ")");
    }
    cf_sb_adds(sb, "; run more --iters or on quieter hosts");
}

char *cf_smoke_search_inconclusive(const struct smoke_search *s, char *const *names)
{
    struct strbuf sb = STRBUF_INIT;
    if (s->pattern == CF_PATTERN_BISECT) {
        if (s->end != BISECT_UNSURE)
            return NULL;
        size_t yard = s->unsure[1] == s->unsure[0] ? (size_t)-1 : s->unsure[1];
        unsure_why(s, names, s->unsure, 1, 1, yard, &sb);
        return cf_sb_detach(&sb);
    }
    size_t *unsure = cf_xcalloc(s->nran + 1, sizeof *unsure), n = 0, yard = (size_t)-1;
    best_of(s->ran, s->nran, &yard);
    for (size_t i = 0; i < s->nran; i++)
        if (judged(s, i) == J_UNSURE)
            unsure[n++] = i;
    if (n)
        unsure_why(s, names, unsure, n, s->nran, yard, &sb);
    free(unsure);
    return n ? cf_sb_detach(&sb) : NULL;
}

/* whether some judgement the search needs cannot be made (cf_smoke_search_inconclusive) */
static int undecided(const struct smoke_search *s)
{
    if (s->pattern == CF_PATTERN_BISECT)
        return s->end == BISECT_UNSURE;
    for (size_t i = 0; i < s->nran; i++)
        if (judged(s, i) == J_UNSURE)
            return 1;
    return 0;
}

int cf_smoke_search_bad_hosts(const struct smoke_search *s, unsigned char *is_bad)
{
    int n = s->nhosts;
    memset(is_bad, 0, (size_t)n);
    if (undecided(s))
        return 0; /* numbers that cannot tell name nobody */
    if (s->pattern == CF_PATTERN_BISECT) {
        if (s->end != BISECT_CULPRIT || s->cand.n != 1)
            return 0;
        is_bad[s->cand.h[0]] = 1;
        return 1;
    }
    int pairwise = s->pattern == CF_PATTERN_PAIRWISE;
    size_t *tested = cf_xcalloc((size_t)n + 1, sizeof *tested), *nbad = cf_xcalloc((size_t)n + 1, sizeof *nbad);
    unsigned char *in_good = cf_xcalloc((size_t)n + 1, 1);
    size_t bad_groups = 0;
    for (size_t i = 0; i < s->nran; i++) {
        const struct hostset *g = &s->ran[i].hosts;
        int isbad = cf_smoke_search_bad(s, i);
        bad_groups += (size_t)isbad;
        for (int k = 0; k < g->n; k++) {
            tested[g->h[k]]++;
            nbad[g->h[k]] += (size_t)isbad;
            in_good[g->h[k]] |= !isbad;
        }
        /* a bad group of one host (intra) names it */
        if (!pairwise && isbad && g->n == 1)
            is_bad[g->h[0]] = 1;
    }
    /* pairwise: a bad host spoils every pair it is in, while a good one is fine with
     * every good peer; so several bad hosts are each named, and noise in one pair
     * names nobody. Else: in every bad group and in no good one. Flag 2: by that
     * rule, which names nobody when it names every host (nothing to tell them by). */
    int by_rule = 0;
    for (int h = 0; h < n; h++) {
        int hit = pairwise ? n >= 3 && tested[h] >= 2 && nbad[h] == tested[h]
                           : bad_groups && nbad[h] == bad_groups && !in_good[h];
        if (hit)
            is_bad[h] |= 2;
        by_rule += hit;
    }
    int count = 0;
    for (int h = 0; h < n; h++) {
        is_bad[h] = by_rule == n ? (is_bad[h] & 1) : is_bad[h] != 0;
        count += is_bad[h];
    }
    free(tested);
    free(nbad);
    free(in_good);
    return count;
}

/* the names of the flagged hosts, in natural order ("h2, h10") */
static void add_bad_names(struct strbuf *sb, const struct smoke_search *s, const unsigned char *is_bad,
                          char *const *names)
{
    const char **v = cf_xcalloc((size_t)s->nhosts + 1, sizeof *v);
    size_t k = 0;
    for (int h = 0; h < s->nhosts; h++)
        if (is_bad[h])
            v[k++] = names[h];
    qsort(v, k, sizeof *v, cf_hostname_natural_ptr_cmp);
    for (size_t i = 0; i < k; i++)
        cf_sb_addf(sb, "%s%s", i ? ", " : "", v[i]);
    free(v);
}

char *cf_smoke_search_verdict(const struct smoke_search *s, char *const *names, int *bad)
{
    struct strbuf sb = STRBUF_INIT;
    *bad = 0;
    char *unsure = cf_smoke_search_inconclusive(s, names);
    if (unsure) {
        /* a search asked for and not decided is no pass, and names nobody */
        *bad = 1;
        cf_sb_addf(&sb, "inconclusive: %s", unsure);
        free(unsure);
        return cf_sb_detach(&sb);
    }
    if (s->pattern == CF_PATTERN_BISECT) {
        bisect_verdict(s, names, &sb, bad);
        return cf_sb_detach(&sb);
    }
    size_t nbad = 0;
    for (size_t i = 0; i < s->nran; i++)
        nbad += (size_t)cf_smoke_search_bad(s, i);
    const char *name = cf_smoke_pattern_name(s->pattern);
    if (!nbad) {
        cf_sb_addf(&sb, "%s: every group passed", name);
        return cf_sb_detach(&sb);
    }
    *bad = 1;
    if (s->pattern == CF_PATTERN_PAIRWISE) {
        unsigned char *is_bad = cf_xcalloc((size_t)s->nhosts + 1, 1);
        int named = cf_smoke_search_bad_hosts(s, is_bad);
        if (named) {
            int first = 0;
            while (!is_bad[first])
                first++;
            size_t pairs = 0;
            for (size_t i = 0; i < s->nran; i++)
                pairs += (size_t)set_has(&s->ran[i].hosts, first);
            cf_sb_addf(&sb, "pairwise: host%s ", named == 1 ? "" : "s");
            add_bad_names(&sb, s, is_bad, names);
            if (named == 1)
                cf_sb_addf(&sb, " is bad: every one of its %zu pairs was", pairs);
            else
                cf_sb_adds(&sb, " are bad: every one of their pairs was");
            cf_sb_addf(&sb, " (%zu of %zu pairs bad)", nbad, s->nran);
        }
        free(is_bad);
        if (named)
            return cf_sb_detach(&sb);
        if (s->nhosts == 2) {
            cf_sb_addf(&sb, "pairwise: the link between %s and %s is bad; no third host to tell which end", names[0],
                       names[1]);
            return cf_sb_detach(&sb);
        }
    }
    cf_sb_addf(&sb, "%s: bad group%s:", name, nbad == 1 ? "" : "s");
    for (size_t i = 0; i < s->nran; i++) {
        if (!cf_smoke_search_bad(s, i))
            continue;
        cf_sb_adds(&sb, " ");
        add_label(&sb, &s->ran[i], names);
    }
    return cf_sb_detach(&sb);
}
