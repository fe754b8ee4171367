/* The hang page: the verdict, the groups and every divergence, then one lane
 * per rank (grouped by host, hosts without an odd rank folded) with its last
 * collectives of each group, the divergent number marked, sizes, dtypes and
 * the stack in each one's hover title. Drawn from the model alone, so a page
 * remade from the saved document is the run's own. */
#include <stdlib.h>
#include <string.h>

#include "cclforge/hang.h"
#include "cclforge/hostlist.h"
#include "cclforge/html.h"
#include "cclforge/report.h"
#include "cclforge/sorted_names.h"
#include "report/assets.h"

static int in_list(const int *v, size_t n, int x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static const struct cf_hang_group *group_of(const struct cf_hang_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_groups; i++)
        if (!strcmp(r->groups[i].name, name))
            return &r->groups[i];
    return NULL;
}

static int is_divergent(const struct cf_hang_result *r, const struct cf_hang_entry *e)
{
    const struct cf_hang_group *g = group_of(r, e->group);
    for (size_t k = 0; g && k < g->n_div; k++)
        if (g->div[k].seq == e->seq && !e->is_p2p)
            return 1;
    return 0;
}

static void op_box(struct strbuf *o, const struct cf_hang_result *r, const struct cf_hang_entry *e)
{
    const char *cls = is_divergent(r, e) ? "div" : e->state && !strcmp(e->state, "completed") ? "done"
                      : e->retired == 1 ? "done" : "pending";
    cf_sb_addf(o, "<span class=\"op %s\" title=\"", cls);
    cf_html_textf(o, "group %s #%lld %s\nstate: %s\ninput: %s %s\noutput: %s %s", e->group, (long long)e->seq, e->op,
                  e->state ? e->state : "?", e->in_sizes ? e->in_sizes : "?", e->in_dtypes ? e->in_dtypes : "",
                  e->out_sizes ? e->out_sizes : "?", e->out_dtypes ? e->out_dtypes : "");
    if (e->duration_ms >= 0)
        cf_html_textf(o, "\nduration: %.3f ms", e->duration_ms);
    if (e->stack) {
        cf_html_text(o, "\n");
        cf_html_text(o, e->stack);
    }
    cf_sb_adds(o, "\">");
    cf_html_textf(o, "%s#%lld", e->op, (long long)e->seq);
    cf_sb_adds(o, "</span>");
}

/* where the group's first divergence is one this rank never entered: a hole */
static void never_entered(struct strbuf *o, const struct cf_hang_group *g, int rank)
{
    if (!g->n_div || g->div[0].kind != CF_HANG_NOT_ENTERED || g->div[0].is_p2p ||
        !in_list(g->div[0].ranks_odd, g->div[0].n_odd, rank))
        return;
    cf_sb_adds(o, "<span class=\"op missing\" title=\"");
    cf_html_text(o, g->div[0].why);
    cf_sb_adds(o, "\">");
    cf_html_textf(o, "never entered %s#%lld", g->div[0].op, (long long)g->div[0].seq);
    cf_sb_adds(o, "</span>");
}

/* the last CF_HANG_DOC_LAST collectives of each group of one rank */
static void lane(struct strbuf *o, const struct cf_hang_result *r, const struct cf_hang_dump *d, int odd)
{
    cf_sb_addf(o, "<div class=\"lane%s\"><span class=\"who\">", odd ? " odd" : "");
    cf_html_textf(o, "rank %d", d->rank);
    if (d->gpu >= 0)
        cf_html_textf(o, " GPU %d", d->gpu);
    cf_sb_adds(o, "</span>");
    if (d->refused) {
        cf_sb_adds(o, "<span class=\"error\">");
        cf_html_text(o, d->refused);
        cf_sb_adds(o, "</span></div>\n");
        return;
    }
    for (size_t gi = 0; gi < r->n_groups; gi++) {
        const char *name = r->groups[gi].name;
        size_t total = 0, shown = 0;
        for (size_t i = 0; i < d->n_entries; i++)
            total += !strcmp(d->entries[i].group, name);
        if (!total)
            continue;
        cf_sb_adds(o, "<span class=\"grp\">");
        cf_html_textf(o, "%s:", name);
        cf_sb_adds(o, "</span>");
        for (size_t i = 0; i < d->n_entries; i++)
            if (!strcmp(d->entries[i].group, name) && shown++ + CF_HANG_DOC_LAST >= total)
                op_box(o, r, &d->entries[i]);
        never_entered(o, &r->groups[gi], d->rank);
    }
    cf_sb_adds(o, "</div>\n");
}

static void lanes(struct strbuf *o, const struct cf_hang_result *r)
{
    const struct cf_hang_divergence *first = cf_hang_first(r, NULL);
    const char **hosts = cf_xcalloc(r->n_dumps + 1, sizeof *hosts);
    for (size_t i = 0; i < r->n_dumps; i++)
        hosts[i] = r->dumps[i].host ? r->dumps[i].host : "";
    struct cf_sorted_names idx;
    cf_sorted_names_build(&idx, hosts, r->n_dumps, cf_hostname_natural_cmp);
    size_t i = 0;
    while (i < idx.n) {
        const char *host = hosts[idx.v[i].ix];
        size_t j = i, n_odd = 0;
        while (j < idx.n && !strcmp(hosts[idx.v[j].ix], host)) {
            const struct cf_hang_dump *d = &r->dumps[idx.v[j].ix];
            n_odd += d->refused || (first && in_list(first->ranks_odd, first->n_odd, d->rank));
            j++;
        }
        cf_sb_addf(o, "<details class=\"host\"%s><summary>", n_odd || idx.n <= 64 ? " open" : "");
        cf_html_text(o, *host ? host : "host unknown");
        cf_sb_adds(o, " <span class=\"muted\">");
        cf_html_textf(o, "%zu ranks%s", j - i, n_odd ? ", odd ranks here" : "");
        cf_sb_adds(o, "</span></summary>\n");
        for (size_t k = i; k < j; k++) {
            const struct cf_hang_dump *d = &r->dumps[idx.v[k].ix];
            lane(o, r, d, d->refused || (first && in_list(first->ranks_odd, first->n_odd, d->rank)));
        }
        cf_sb_adds(o, "</details>\n");
        i = j;
    }
    cf_sorted_names_release(&idx);
    free(hosts);
}

static void rank_cell(struct strbuf *o, const int *v, size_t n)
{
    for (size_t i = 0; i < n && i < 64; i++)
        cf_html_textf(o, "%s%d", i ? "," : "", v[i]);
    if (n > 64)
        cf_html_textf(o, ", ... (%zu)", n);
}

static void groups_table(struct strbuf *o, const struct cf_hang_result *r)
{
    cf_sb_adds(o, "<h2>Groups</h2>\n<table><tr><th>group</th><th>ranks</th><th>membership from</th>"
                  "<th>known from #</th><th>last #</th><th>no dump</th><th>divergences</th></tr>\n");
    for (size_t i = 0; i < r->n_groups; i++) {
        const struct cf_hang_group *g = &r->groups[i];
        cf_sb_adds(o, "<tr><td>");
        cf_html_textf(o, "%s%s%s%s", g->name, g->desc ? " (" : "", g->desc ? g->desc : "", g->desc ? ")" : "");
        cf_sb_adds(o, "</td><td>");
        rank_cell(o, g->ranks, g->n_ranks);
        cf_sb_adds(o, "</td><td>");
        cf_html_text(o, g->membership);
        cf_sb_addf(o, "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td>", (long long)g->known_from,
                   (long long)g->last_seq);
        rank_cell(o, g->absent, g->n_absent);
        cf_sb_addf(o, "</td><td class=\"num\">%zu</td></tr>\n", g->n_div);
    }
    cf_sb_adds(o, "</table>\n");
    cf_sb_adds(o, "<h2>Divergences</h2>\n");
    size_t all = 0;
    for (size_t i = 0; i < r->n_groups; i++)
        all += r->groups[i].n_div;
    if (!all) {
        cf_sb_adds(o, "<p class=\"ok\">None: every group's ranks agree through their last collective.</p>\n");
        return;
    }
    cf_sb_addf(o, "<details%s><summary>%zu in all, in order, every group</summary>\n", all <= 50 ? " open" : "", all);
    cf_sb_adds(o, "<table><tr><th>group</th><th>#</th><th>op</th><th>kind</th><th>why</th><th>source</th></tr>\n");
    for (size_t i = 0; i < r->n_groups; i++)
        for (size_t k = 0; k < r->groups[i].n_div; k++) {
            const struct cf_hang_divergence *d = &r->groups[i].div[k];
            cf_sb_adds(o, "<tr><td>");
            cf_html_text(o, r->groups[i].name);
            cf_sb_addf(o, "</td><td class=\"num\">%lld</td><td>", (long long)d->seq);
            cf_html_text(o, d->op);
            cf_sb_adds(o, "</td><td>");
            cf_html_text(o, cf_hang_kind_name(d->kind));
            cf_sb_adds(o, "</td><td>");
            cf_html_text(o, d->why);
            cf_sb_adds(o, "</td><td class=\"mono\">");
            cf_html_text(o, d->where ? d->where : "");
            cf_sb_adds(o, "</td></tr>\n");
        }
    cf_sb_adds(o, "</table></details>\n");
}

void cf_hang_report_html(const struct cf_hang_result *r, const char *json_text, struct strbuf *out)
{
    cf_html_begin(out, "cclforge hang report", cf_report_hang_css);
    struct strbuf v = STRBUF_INIT;
    cf_hang_verdict(r, &v);
    cf_sb_addf(out, "<div class=\"verdict%s\">", cf_hang_exit_code(r) == 0 ? " fine" : "");
    cf_html_text(out, cf_sb_str(&v));
    cf_sb_adds(out, "</div>\n");
    cf_sb_release(&v);
    groups_table(out, r);
    cf_sb_addf(out, "<h2>Ranks</h2>\n<p class=\"muted\">Each rank's last %d collectives of each group; the "
                    "divergent numbers marked, odd ranks in red. Hover a collective for its sizes, dtypes, state "
                    "and stack.</p>\n",
               CF_HANG_DOC_LAST);
    lanes(out, r);
    if (r->notes.n) {
        cf_sb_adds(out, "<h2>Notes</h2>\n<ul>\n");
        for (size_t i = 0; i < r->notes.n; i++) {
            cf_sb_adds(out, "<li>");
            cf_html_text(out, r->notes.v[i]);
            cf_sb_adds(out, "</li>\n");
        }
        cf_sb_adds(out, "</ul>\n");
    }
    cf_html_json(out, "hang-json", json_text ? json_text : "null");
    cf_html_end(out);
}
