/* One rank's life: start the backend, learn every rank's host and device, run the
 * --pattern search's groups (each a sweep of ops x types x reductions x roots x sizes
 * x placements), agree on each group's result over the world, report the groups and
 * the verdict, say which transports NCCL used, finish. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fabric.h"
#include "cclforge/hostlist.h"
#include "cclforge/path_capacity.h"
#include "smoke/groups.h"
#include "smoke/one_test.h"

#define MAX_SKIP_NOTES 3

/* what every rank tells every other at the start */
struct host_entry {
    char host[64];
    char device[128];
    int32_t pid;
    int32_t unused;
    char links[640]; /* cf_rank_links_format's line: the links to other hosts and GPUs, and their capacity */
};

struct world {
    int n;
    struct host_entry *entries;
    int *host_of;     /* rank -> host index (first appearance in rank order) */
    int *local_index; /* rank -> its place among the ranks of its host */
    int nhosts, per_host;
    char **names;     /* host index -> name */
};

static void world_release(struct world *w)
{
    for (int h = 0; h < w->nhosts; h++)
        free(w->names[h]);
    free(w->names);
    free(w->entries);
    free(w->host_of);
    free(w->local_index);
}

/* the GPU's PCI address in sysfs's form from the backend's device words
 * ("0000:1B:00.0 sm_90"; NVML's 8-digit domain too); "" for none */
static void gpu_bdf(const char *device, char *out, size_t cap)
{
    size_t len = strcspn(device, " ");
    const char *p = device;
    if (len == 16 && !strncmp(p, "0000", 4)) {
        p += 4;
        len -= 4;
    }
    snprintf(out, cap, "%.*s", (int)len, p);
    if (!cf_pci_is_bdf(out))
        out[0] = 0;
}

/* This rank's links to other hosts, in the exchanged form: as many whole entries
 * as fit the table's field. */
static void my_links(const struct cf_smoke_opts *o, const struct cf_smoke_backend *b, char *out, size_t cap)
{
    struct cf_fabric f;
    memset(&f, 0, sizeof f);
    cf_fabric_probe_paths(&f, o->backend != CF_BACKEND_MPI);
    char bdf[16];
    gpu_bdf(b->device, bdf, sizeof bdf);
    const char *ib_disable = getenv("NCCL_IB_DISABLE");
    struct cf_link_use use = {
        .device_memory = o->backend != CF_BACKEND_MPI,
        .gpu_bdf = bdf[0] ? bdf : NULL,
        .socket_ifname = getenv("NCCL_SOCKET_IFNAME"),
        .ib_hca = getenv("NCCL_IB_HCA"),
        .ib_disabled = ib_disable && atoi(ib_disable) == 1,
    };
    struct cf_rank_link l[CF_RANK_LINKS_MAX];
    size_t n = cf_rank_links_pick(&f, &use, l, CF_RANK_LINKS_MAX);
    size_t before_peers = n; /* the links to each peer GPU come last and go all together first */
    while (before_peers && l[before_peers - 1].peer[0])
        before_peers--;
    struct strbuf sb = STRBUF_INIT;
    for (;;) {
        cf_sb_reset(&sb);
        cf_rank_links_format(l, n, &sb);
        if (sb.len < cap || !n)
            break;
        n = n > before_peers ? before_peers : n - 1;
    }
    snprintf(out, cap, "%s", n ? cf_sb_str(&sb) : "");
    cf_sb_release(&sb);
    cf_fabric_release(&f);
}

static int learn_world(struct cf_smoke_backend *b, const struct smoke_rank_setup *setup, struct world *w,
                       char *errbuf, size_t errlen)
{
    memset(w, 0, sizeof *w);
    int n = setup->ctx.nranks;
    struct host_entry mine;
    memset(&mine, 0, sizeof mine);
    snprintf(mine.host, sizeof mine.host, "%.63s", setup->hostname ? setup->hostname : "?");
    snprintf(mine.device, sizeof mine.device, "%s", b->device[0] ? b->device : "?");
    mine.pid = (int32_t)getpid();
    my_links(setup->opts, b, mine.links, sizeof mine.links);
    w->n = n;
    w->entries = cf_xcalloc((size_t)n, sizeof *w->entries);
    if (b->host_allgather(b, &mine, w->entries, sizeof mine, errbuf, errlen) < 0)
        return -1;
    w->host_of = cf_xcalloc((size_t)n, sizeof *w->host_of);
    w->local_index = cf_xcalloc((size_t)n, sizeof *w->local_index);
    w->names = cf_xcalloc((size_t)n, sizeof *w->names);
    int *count = cf_xcalloc((size_t)n, sizeof *count);
    for (int r = 0; r < n; r++) {
        w->entries[r].host[sizeof w->entries[r].host - 1] = 0;
        w->entries[r].device[sizeof w->entries[r].device - 1] = 0;
        w->entries[r].links[sizeof w->entries[r].links - 1] = 0;
        int h = 0;
        while (h < w->nhosts && strcmp(w->names[h], w->entries[r].host))
            h++;
        if (h == w->nhosts)
            w->names[w->nhosts++] = cf_strdup(w->entries[r].host);
        w->host_of[r] = h;
        w->local_index[r] = count[h]++;
    }
    w->per_host = n;
    for (int h = 0; h < w->nhosts; h++)
        w->per_host = count[h] < w->per_host ? count[h] : w->per_host;
    free(count);
    return 0;
}

/* notes for options that only a device backend can honour: said once, by rank 0 */
static void device_notes(const struct cf_smoke_opts *o, const struct cf_smoke_backend *b, struct smoke_sink *sink)
{
    static const struct { const char *key; unsigned feature; const char *flag; } notes[] = {
        { "graph", CF_FEAT_GRAPH, "-G" }, { "registration", CF_FEAT_REGISTER, "-R" }, { "blocking", CF_FEAT_ASYNC, "-z" },
    };
    int asked[] = { o->graph_launches > 0, o->registration, o->blocking };
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++) {
        if (!asked[i])
            continue;
        if (b->features & notes[i].feature)
            cf_smoke_sink_info(sink, notes[i].key, "on");
        else
            cf_smoke_sink_info(sink, notes[i].key, "not run: the %s backend has no %s (%s needs a GPU backend)",
                               b->name, notes[i].feature == CF_FEAT_ASYNC ? "asynchronous collectives"
                                        : notes[i].feature == CF_FEAT_GRAPH ? "device graphs" : "buffer registration",
                               notes[i].flag);
    }
}

static void note_skip(struct strvec *notes, enum cf_smoke_op op, enum cf_smoke_dtype dt, size_t bytes)
{
    const struct cf_smoke_op_info *info = cf_smoke_op_info(op);
    char *why = bytes == 0 ? cf_asprintf("size 0 holds no element")
                : info->share != CF_SHARE_NONE
                    ? cf_asprintf("%s %s at %zu B: each rank's share rounds down to 0 (a multiple of 16 bytes per rank, "
                                  "as nccl-tests)", info->name, cf_smoke_dtype_info(dt)->name, bytes)
                    : cf_asprintf("%s %s at %zu B: smaller than one element", info->name,
                                  cf_smoke_dtype_info(dt)->name, bytes);
    if (notes->n < MAX_SKIP_NOTES && !cf_strvec_contains(notes, why))
        cf_strvec_push(notes, why);
    free(why);
}

/* Every test of the sweep on the current communicator. -1 on a backend error. */
static int sweep(struct smoke_test_ctx *t, struct strvec *skips, long *ran)
{
    const struct cf_smoke_opts *o = t->o;
    for (int op = 0; op < CF_OP_COUNT; op++) {
        if (!(o->ops & (1u << op)))
            continue;
        const struct cf_smoke_op_info *info = cf_smoke_op_info((enum cf_smoke_op)op);
        for (int dt = 0; dt < CF_DT_COUNT; dt++) {
            if (!(o->dtypes & (1u << dt)))
                continue;
            for (int red = 0; red < CF_RED_COUNT; red++) {
                if (info->reduces ? !(o->redops & (1u << red)) : red > 0)
                    continue;
                int first_root = info->rooted ? (o->root >= 0 ? o->root % t->nranks : 0) : 0;
                int last_root = info->rooted && o->root < 0 ? t->nranks - 1 : first_root;
                for (int root = first_root; root <= last_root; root++) {
                    if (cf_smoke_warmup(t, (enum cf_smoke_op)op, (enum cf_smoke_dtype)dt, (enum cf_smoke_redop)red,
                                        root) < 0)
                        return -1;
                    for (size_t bytes = o->sweep.min_bytes; ; bytes = cf_smoke_next_size(&o->sweep, bytes)) {
                        for (int place = 0; place < 2; place++) {
                            int in_place = place == 1;
                            if (!(o->places & (in_place ? CF_PLACE_IN : CF_PLACE_OUT)))
                                continue;
                            int rc = cf_smoke_one_test(t, (enum cf_smoke_op)op, (enum cf_smoke_dtype)dt,
                                                       (enum cf_smoke_redop)red, root, bytes, in_place);
                            if (rc < 0)
                                return -1;
                            if (rc == SMOKE_TEST_SKIPPED)
                                note_skip(skips, (enum cf_smoke_op)op, (enum cf_smoke_dtype)dt, bytes);
                            else
                                (*ran)++;
                        }
                        if (cf_smoke_next_size(&o->sweep, bytes) == 0)
                            break;
                    }
                }
            }
        }
    }
    return 0;
}

static int open_backend(const struct smoke_rank_setup *setup, struct smoke_sink *sink, struct cf_smoke_backend *b,
                        cf_error *err)
{
    if (setup->opts->backend != CF_BACKEND_MPI)
        return cf_smoke_nccl_backend_open(b, setup, sink, err);
    struct smoke_mpi_info mpi;
    if (cf_smoke_mpi_backend_open(b, setup->opts, &mpi, err) < 0)
        return -1;
    cf_smoke_sink_info(sink, "lib_path", "%s", mpi.path);
    cf_smoke_sink_info(sink, "mpi_abi", "%s", mpi.abi);
    cf_smoke_sink_info(sink, "mpi_chosen_by", "%s", mpi.chosen_by);
    return 0;
}

/* Runs the groups of one round this rank is in; fills its group's tally. */
static int run_round(struct smoke_test_ctx *t, const struct smoke_round *round, const struct world *w,
                     struct strvec *skips, long *ran, int *my_group)
{
    struct cf_smoke_backend *b = t->b;
    int wr = t->world_rank;
    int color = cf_smoke_round_color(round, w->host_of[wr], w->local_index[wr]);
    int whole_world = round->ngroups == 1 && color == 0;
    for (int r = 0; whole_world && r < w->n; r++)
        whole_world = cf_smoke_round_color(round, w->host_of[r], w->local_index[r]) == 0;
    *my_group = color;
    int *world_of = NULL;
    int rc = 0;
    if (whole_world) {
        t->rank = wr;
        t->nranks = w->n;
        world_of = cf_xcalloc((size_t)w->n, sizeof *world_of);
        for (int r = 0; r < w->n; r++)
            world_of[r] = r;
    } else {
        cf_smoke_sink_begin(t->sink, 1, "splitting the world into %d group%s", round->ngroups,
                            round->ngroups == 1 ? "" : "s");
        if (b->split(b, color, wr, &t->rank, &t->nranks, t->errbuf, SMOKE_ERRLEN) < 0)
            return -1;
        if (color >= 0) {
            /* world ranks of the group, in group rank order (the key is the world rank) */
            world_of = cf_xcalloc((size_t)t->nranks, sizeof *world_of);
            int k = 0;
            for (int r = 0; r < w->n && k < t->nranks; r++)
                if (cf_smoke_round_color(round, w->host_of[r], w->local_index[r]) == color)
                    world_of[k++] = r;
        }
    }
    t->world_of = world_of;
    if (color >= 0) {
        if (t->o->registration && (b->features & CF_FEAT_REGISTER) &&
            (b->register_buffer(b, t->dsend, t->cap, t->errbuf, SMOKE_ERRLEN) < 0 ||
             b->register_buffer(b, t->drecv, t->cap, t->errbuf, SMOKE_ERRLEN) < 0))
            rc = -1;
        if (rc == 0)
            rc = sweep(t, skips, ran);
    }
    if (!whole_world)
        b->unsplit(b);
    free(world_of);
    t->world_of = NULL;
    t->rank = wr;
    t->nranks = w->n;
    return rc;
}

/* The round's results, agreed over the world: each group's, from its rank 0. */
static int agree_round(struct smoke_test_ctx *t, const struct smoke_round *round, int my_group, int group_rank0,
                       struct smoke_group_result *res)
{
    size_t n = SMOKE_RESULT_WORDS * (size_t)round->ngroups;
    double *v = cf_xcalloc(n, sizeof *v);
    if (my_group >= 0 && group_rank0) {
        struct smoke_group_result mine;
        cf_smoke_tally_result(&t->tally, &mine);
        cf_smoke_result_pack(&mine, v + SMOKE_RESULT_WORDS * (size_t)my_group);
    }
    int rc = t->b->host_sum(t->b, v, n, t->errbuf, SMOKE_ERRLEN);
    for (int g = 0; rc == 0 && g < round->ngroups; g++)
        cf_smoke_result_unpack(v + SMOKE_RESULT_WORDS * (size_t)g, &res[g]);
    free(v);
    return rc;
}

static int search(struct smoke_test_ctx *t, const struct world *w, struct strvec *skips, long *ran)
{
    const struct cf_smoke_opts *o = t->o;
    struct smoke_search *s = cf_smoke_search_new(o->pattern, w->nhosts, w->per_host, o->min_busbw);
    struct smoke_round round;
    struct cf_smoke_group *groups = NULL;
    size_t ngroups = 0;
    int rc = 0, round_no = 0;
    while (rc == 0 && cf_smoke_search_next(s, &round)) {
        round_no++;
        cf_smoke_tally_reset(&t->tally);
        int my_group = -1;
        /* group ids count from 1 over the whole search; pattern all's one group is the world, 0 */
        int base = o->pattern == CF_PATTERN_ALL ? 0 : (int)ngroups + 1;
        int color = cf_smoke_round_color(&round, w->host_of[t->world_rank], w->local_index[t->world_rank]);
        t->group = base + (color > 0 ? color : 0);
        rc = run_round(t, &round, w, skips, ran, &my_group);
        struct smoke_group_result *res = cf_xcalloc((size_t)round.ngroups, sizeof *res);
        /* this rank is its group's rank 0 when no lower world rank shares its color */
        int first = 1;
        for (int r = 0; r < t->world_rank; r++)
            if (cf_smoke_round_color(&round, w->host_of[r], w->local_index[r]) == my_group)
                first = 0;
        /* wait for every group to finish, without spinning, before agreeing */
        if (rc == 0 && t->b->idle_barrier && o->pattern != CF_PATTERN_ALL)
            rc = t->b->idle_barrier(t->b, t->errbuf, SMOKE_ERRLEN);
        if (rc == 0)
            rc = agree_round(t, &round, my_group, first, res);
        if (rc == 0) {
            cf_smoke_search_result(s, &round, res);
            for (int g = 0; g < round.ngroups; g++) {
                groups = cf_xrealloc(groups, (ngroups + 1) * sizeof *groups);
                struct cf_smoke_group *G = &groups[ngroups++];
                memset(G, 0, sizeof *G);
                G->id = base + g;
                G->round = round_no;
                cf_smoke_group_label(&round, g, w->names, G->label, sizeof G->label);
                for (int r = 0; r < w->n; r++)
                    G->nranks += cf_smoke_round_color(&round, w->host_of[r], w->local_index[r]) == g;
                for (int h = 0; h < w->nhosts; h++)
                    G->nhosts += round.by_local_index || round.host_group[h] == g;
                G->avg_busbw = res[g].avg_busbw;
                G->busbw_median = res[g].bw.median;
                G->busbw_spread = res[g].bw.spread;
                G->tests = res[g].tests;
                G->failed = res[g].failed;
            }
        }
        free(res);
        cf_smoke_round_release(&round);
    }
    if (rc == 0 && t->world_rank == 0 && o->pattern != CF_PATTERN_ALL) {
        for (size_t i = 0; i < ngroups; i++) {
            groups[i].bad = cf_smoke_search_bad(s, i);
            groups[i].conclusive = cf_smoke_search_conclusive(s, i);
            if (groups[i].bad || !groups[i].conclusive)
                snprintf(groups[i].why, sizeof groups[i].why, "%s",
                         groups[i].failed      ? "wrong results"
                         : !groups[i].conclusive ? "cannot tell: its band straddles the line, or too few samples"
                         : o->min_busbw > 0    ? "below --min-busbw"
                                               : "slow");
            struct cf_smoke_event ev = { .kind = CF_EV_GROUP, .rank = 0, .local_rank = t->sink->local_rank };
            ev.group = groups[i];
            t->sink->event(t->sink, &ev);
        }
        int bad;
        char *why = cf_smoke_search_inconclusive(s, w->names);
        if (why)
            cf_smoke_sink_info(t->sink, SMOKE_INCONCLUSIVE_KEY, "%s", why);
        free(why);
        /* the bad hosts, one fact each, as the search decided them (the document's
         * "bad_hosts": its exclude: and its report take them from there) */
        unsigned char *is_bad = cf_xcalloc((size_t)w->nhosts + 1, 1);
        const char **named = cf_xcalloc((size_t)w->nhosts + 1, sizeof *named);
        size_t nnamed = 0;
        cf_smoke_search_bad_hosts(s, is_bad);
        for (int h = 0; h < w->nhosts; h++)
            if (is_bad[h])
                named[nnamed++] = w->names[h];
        qsort(named, nnamed, sizeof *named, cf_hostname_natural_ptr_cmp);
        for (size_t i = 0; i < nnamed; i++)
            cf_smoke_sink_info(t->sink, SMOKE_BAD_HOST_KEY, "%s", named[i]);
        free(named);
        free(is_bad);
        char *v = cf_smoke_search_verdict(s, w->names, &bad);
        cf_smoke_sink_text(t->sink, CF_EV_VERDICT, "%s", v);
        if (bad)
            cf_smoke_sink_text(t->sink, CF_EV_PROBLEM, "%s", v);
        free(v);
    }
    free(groups);
    cf_smoke_search_free(s);
    cf_smoke_tally_release(&t->tally);
    return rc;
}

int cf_smoke_rank_main(const struct smoke_rank_setup *setup, struct smoke_sink *sink, struct cf_smoke_report *rep,
                       cf_error *err)
{
    const struct cf_smoke_opts *o = setup->opts;
    struct cf_smoke_backend b;
    struct smoke_test_ctx t;
    memset(&t, 0, sizeof t);
    t.o = o;
    t.b = &b;
    t.sink = sink;
    t.world_rank = t.rank = setup->ctx.rank;
    t.nranks = setup->ctx.nranks;
    rep->rank = t.rank;
    rep->nranks = t.nranks;

    cf_smoke_sink_begin(sink, 0, "starting the %s backend", o->backend == CF_BACKEND_MPI ? "mpi" : "nccl");
    if (o->fault.op == CF_OP_COUNT && o->fault.rank == t.world_rank) {
        if (o->fault.at_finalize)
            rep->finalize_fault = o->fault.action; /* cf_smoke_report_release fires it */
        else
            cf_smoke_fault_fire(o->fault.action);
    }
    if (o->root >= t.nranks)
        return cf_error_set(err, CF_ERR_USAGE, "-r %d: there are only %d ranks (0 to %d)", o->root, t.nranks,
                            t.nranks - 1);
    if (open_backend(setup, sink, &b, err) < 0)
        return -1;
    b.progress = cf_smoke_sink_progress;
    b.progress_ctx = sink;
    int rc = -1;
    if (o->backend == CF_BACKEND_MPI)
        cf_smoke_sink_begin(sink, 1, "MPI_Init");
    int init_rc = b.init(&b, &setup->ctx, t.errbuf, SMOKE_ERRLEN);
    if (b.version[0]) {
        free(rep->lib_version);
        rep->lib_version = cf_strdup(b.version);
    }
    struct world w;
    memset(&w, 0, sizeof w);
    struct strvec skips = STRVEC_INIT;
    long ran = 0;
    if (init_rc < 0)
        goto out;
    if (o->backend == CF_BACKEND_MPI) /* the nccl backend said it as soon as it knew */
        cf_smoke_sink_info(sink, "lib_version", "%s", b.version);
    cf_smoke_sink_info(sink, "hostname", "%s", setup->hostname ? setup->hostname : "?");
    cf_smoke_sink_info(sink, "device", "%s", b.device[0] ? b.device : "?");
    cf_smoke_sink_info(sink, "pid", "%d", (int)getpid());
    cf_smoke_sink_begin(sink, 1, "exchanging host and device names");
    if (learn_world(&b, setup, &w, t.errbuf, SMOKE_ERRLEN) < 0)
        goto out;
    /* under a launcher rank 0 prints the table: it knows every rank's host from here */
    for (int r = 0; r < w.n; r++) {
        char pid[16];
        snprintf(pid, sizeof pid, "%d", (int)w.entries[r].pid);
        cf_smoke_report_set_host(rep, r, "hostname", w.entries[r].host);
        cf_smoke_report_set_host(rep, r, "device", w.entries[r].device);
        cf_smoke_report_set_host(rep, r, "pid", pid);
        cf_smoke_report_set_host(rep, r, "links", w.entries[r].links);
    }
    /* the supervisor learns it from each rank, as it learns the host */
    cf_smoke_sink_info(sink, "links", "%s", w.entries[t.world_rank].links);
    if (t.world_rank == 0)
        device_notes(o, &b, sink);
    if (t.world_rank == 0 && o->backend == CF_BACKEND_MPI)
        cf_smoke_sink_info(sink, "transport", "none: the mpi backend does not use NCCL");

    t.cap = o->sweep.max_bytes + 64;
    t.hsend = cf_xmalloc(t.cap);
    t.hrecv = cf_xmalloc(t.cap);
    cf_smoke_sink_begin(sink, 0, "allocating 2 x %zu bytes", t.cap);
    if (!(t.dsend = b.alloc(&b, t.cap, t.errbuf, SMOKE_ERRLEN)) || !(t.drecv = b.alloc(&b, t.cap, t.errbuf, SMOKE_ERRLEN)))
        goto out;
    if (search(&t, &w, &skips, &ran) < 0)
        goto out;
    if (t.world_rank == 0 && (skips.n || !ran)) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < skips.n; i++)
            cf_sb_addf(&sb, "%s%s", i ? "; " : "", skips.v[i]);
        if (skips.n)
            cf_smoke_sink_info(sink, "skipped", "%s", cf_sb_str(&sb));
        else /* nothing skipped, nothing ran: the search formed no group */
            cf_sb_addf(&sb, "--pattern %s formed no group of %d host%s", cf_smoke_pattern_name(o->pattern), w.nhosts,
                       w.nhosts == 1 ? "" : "s");
        if (!ran)
            cf_smoke_sink_text(sink, CF_EV_PROBLEM, "no test ran: %s", cf_sb_str(&sb));
        cf_sb_release(&sb);
    }
    rc = 0;
out:
    if (rc < 0)
        cf_error_set(err, CF_ERR_FAILED, "%s", t.errbuf);
    if (o->backend != CF_BACKEND_MPI)
        cf_smoke_nccl_report_transport(&b, rc == 0);
    else if (t.world_rank == 0 && o->expect_transport != CF_TRANSPORT_ANY)
        cf_smoke_sink_text(sink, CF_EV_PROBLEM, "--expect-transport %s: the mpi backend does not use NCCL, so there "
                           "is no NCCL transport to prove", cf_smoke_transport_name(o->expect_transport));
    if (t.dsend)
        b.release(&b, t.dsend);
    if (t.drecv)
        b.release(&b, t.drecv);
    free(t.hsend);
    free(t.hrecv);
    b.finalize(&b);
    rep->finalize_later = b.finalize_later;
    rep->leave_by_exit = b.leave_by_exit;
    cf_strvec_clear(&skips);
    world_release(&w);
    return rc;
}
