/* Several hosts as HTML (cclforge/report.h), drawn from the hosts' view
 * (cclforge/doctor_doc.h: the consolidation -- shared facts, each difference
 * with its groups of hosts, findings -- over every host): hosts alike
 * (cf_hosts_alike) in one row, minority values marked, findings with the
 * same meaning on many hosts listed once with their hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/doctor_doc.h"
#include "cclforge/report.h"
#include "cclforge/hostlist.h"
#include "cclforge/html.h"
#include "report/assets.h"

/* The hosts that share a value, each once, in natural order, as a hostlist. */
static void hostlist(struct strbuf *out, const char **names, size_t n)
{
    char *hl = cf_hostlist_of_set(names, n);
    cf_html_text(out, hl);
    free(hl);
}

enum { CLIP = 600 }; /* a why that lists every host is cut; the JSON keeps it whole */

static void clipped(struct strbuf *out, const char *s)
{
    size_t len = s ? strlen(s) : 0, cut = CLIP;
    if (len <= CLIP + 80) {
        cf_html_text(out, s);
        return;
    }
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
        cut--; /* not inside a UTF-8 sequence */
    char *head = cf_strndup(s, cut);
    cf_html_text(out, head);
    free(head);
    cf_sb_addf(out, " <span class=\"muted\">[%zu more bytes in the embedded JSON]</span>", len - cut);
}

static const char *sev_class(enum cf_severity sev)
{
    return sev == CF_SEV_INFO ? "info" : cf_severity_name(sev);
}

/* ---- hosts alike: one row per combination of values over the differences ---- */

static void alike(struct strbuf *out, const struct cf_hosts_view *m)
{
    const struct cf_consolidated *c = m->cons;
    struct cf_alike_rows rows;
    cf_hosts_alike(m, &rows);
    cf_sb_addf(out, "<h2>Hosts</h2>\n<p class=\"muted\">Hosts with the same value for every fact that differs share a "
                    "row; a marked cell holds a value fewer hosts have than the most common one.</p>\n"
                    "<table id=\"alike\"><tr><th>hosts</th>");
    for (size_t i = 0; i < c->n_diffs; i++) {
        cf_sb_addf(out, "<th class=\"%s\">", sev_class(c->diffs[i].sev));
        cf_html_text(out, c->diffs[i].label);
        cf_sb_adds(out, "</th>");
    }
    cf_sb_adds(out, "</tr>\n");
    const char **names = cf_xcalloc(m->n ? m->n : 1, sizeof *names);
    for (size_t r = 0; r < rows.n; r++) {
        const struct cf_alike_row *row = &rows.v[r];
        size_t k = row->n_hosts;
        for (size_t i = 0; i < k; i++)
            names[i] = m->labels[row->hosts[i]];
        cf_sb_addf(out, "<tr class=\"hostgroup\" data-count=\"%zu\" data-odd=\"%d\" data-hosts=\"", k, row->odd);
        hostlist(out, names, k);
        cf_sb_addf(out, "\"><td><span class=\"count\">%zu host%s%s</span><div class=\"hosts\">", k, k == 1 ? "" : "s",
                   k > 1 ? " alike" : "");
        hostlist(out, names, k);
        cf_sb_adds(out, "</div></td>");
        for (size_t i = 0; i < c->n_diffs; i++) {
            int g = row->groups[i];
            const char *v = g >= 0 ? c->diffs[i].groups[g].value : "(no survey)";
            cf_sb_addf(out, "<td class=\"%s\" data-diff=\"", g == 0 ? "same" : "odd");
            cf_html_text(out, c->diffs[i].label);
            cf_sb_adds(out, "\" data-value=\"");
            cf_html_text(out, v);
            cf_sb_adds(out, "\">");
            cf_html_text(out, v);
            cf_sb_adds(out, "</td>");
        }
        cf_sb_adds(out, "</tr>\n");
    }
    cf_sb_adds(out, "</table>\n");
    free(names);
    cf_alike_rows_release(&rows);
}

/* ---- each difference with the hosts on each side ---- */

static void differences(struct strbuf *out, const struct cf_hosts_view *m)
{
    const struct cf_consolidated *c = m->cons;
    if (!c->n_diffs) {
        cf_sb_adds(out, "<h2>Differences</h2>\n<p id=\"nodiff\">Every compared fact is the same on every host.</p>\n");
        return;
    }
    cf_sb_adds(out, "<h2>Differences</h2>\n<table id=\"differences\"><tr><th>severity</th><th>fact</th><th>value</th>"
                    "<th>hosts</th></tr>\n");
    for (size_t i = 0; i < c->n_diffs; i++) {
        const struct cf_fact_diff *d = &c->diffs[i];
        for (size_t g = 0; g < d->n_groups; g++) {
            const struct strvec *hosts = &d->groups[g].hosts;
            cf_sb_adds(out, "<tr class=\"diffgroup\" data-diff=\"");
            cf_html_text(out, d->label);
            cf_sb_addf(out, "\" data-odd=\"%d\" data-hosts=\"", g != 0);
            hostlist(out, (const char **)hosts->v, hosts->n);
            cf_sb_adds(out, "\">");
            if (g == 0) {
                const char *sev = sev_class(d->sev);
                cf_sb_addf(out, "<th rowspan=\"%zu\" class=\"%s\">%s</th><th rowspan=\"%zu\">", d->n_groups, sev, sev,
                           d->n_groups);
                cf_html_text(out, d->label);
                cf_sb_adds(out, "</th>");
            }
            cf_sb_addf(out, "<td class=\"%s\">", g ? "odd" : "same");
            cf_html_text(out, d->groups[g].value);
            cf_sb_addf(out, "</td><td><span class=\"count\">%zu</span> <span class=\"hosts\">", hosts->n);
            hostlist(out, (const char **)hosts->v, hosts->n);
            cf_sb_adds(out, "</span></td></tr>\n");
        }
    }
    cf_sb_adds(out, "</table>\n");
}

/* ---- findings, the same one on many hosts once (cf_findings_group) ---- */

/* the hosts of a group, as a hostlist */
static void group_hosts(struct strbuf *out, const struct cf_hosts_view *m, const struct cf_finding_group *g)
{
    const char **names = cf_xcalloc(g->n_hosts + 1, sizeof *names);
    for (size_t k = 0; k < g->n_hosts; k++)
        names[k] = m->labels[g->hosts[k]];
    hostlist(out, names, g->n_hosts);
    free(names);
}

static void findings(struct strbuf *out, const struct cf_hosts_view *m)
{
    struct cf_finding_groups gs;
    cf_findings_group(&m->cons->findings, m->labels, m->n, &gs);
    cf_sb_adds(out, "<h2>Findings</h2>\n");
    if (!gs.n)
        cf_sb_adds(out, "<p id=\"nofindings\">No finding on any host.</p>\n");
    static const enum cf_severity order[] = { CF_SEV_ERROR, CF_SEV_WARNING, CF_SEV_INFO };
    for (size_t s = 0; s < 3; s++) {
        const char *sev = cf_severity_name(order[s]);
        size_t count = 0;
        for (size_t i = 0; i < gs.n; i++)
            count += gs.v[i].f->severity == order[s];
        if (!count)
            continue;
        cf_sb_addf(out, "<section class=\"sev\" id=\"findings-%s\"><h3 class=\"%s\">%s (%zu)</h3>\n<table><tr>"
                        "<th>finding</th><th>subject</th><th>why</th><th>remedy</th><th>hosts</th></tr>\n",
                   sev, sev, sev, count);
        for (size_t i = 0; i < gs.n; i++) {
            const struct cf_finding_group *g = &gs.v[i];
            if (g->f->severity != order[s])
                continue;
            cf_sb_addf(out, "<tr class=\"finding\" data-severity=\"%s\" data-id=\"", sev);
            cf_html_text(out, g->f->id);
            cf_sb_adds(out, "\" data-hosts=\"");
            group_hosts(out, m, g);
            cf_sb_addf(out, "\"><td class=\"%s mono\">", sev);
            cf_html_text(out, g->f->id);
            cf_sb_adds(out, "</td><td>");
            cf_html_text(out, g->subject);
            cf_sb_adds(out, "</td><td>");
            clipped(out, g->f->why);
            cf_sb_adds(out, "</td><td>");
            cf_html_text(out, g->f->remedy);
            cf_sb_adds(out, "</td><td>");
            if (g->n_hosts) {
                cf_sb_addf(out, "<span class=\"count\">%zu</span> <span class=\"hosts\">", g->n_hosts);
                group_hosts(out, m, g);
                cf_sb_adds(out, "</span>");
            } else {
                cf_sb_adds(out, "across hosts");
            }
            cf_sb_adds(out, "</td></tr>\n");
        }
        cf_sb_adds(out, "</table></section>\n");
    }
    cf_finding_groups_release(&gs);
}

static void shared(struct strbuf *out, const struct cf_hosts_view *m)
{
    cf_sb_adds(out, "<h2>Shared by every host</h2>\n<table id=\"shared\"><tr><th>fact</th><th>value</th></tr>\n");
    for (size_t i = 0; i < m->cons->n_shared; i++) {
        cf_sb_adds(out, "<tr><td>");
        cf_html_text(out, m->cons->shared[i].label);
        cf_sb_adds(out, "</td><td>");
        cf_html_text(out, m->cons->shared[i].value);
        cf_sb_adds(out, "</td></tr>\n");
    }
    cf_sb_adds(out, "</table>\n");
}

void cf_doctor_hosts_html(const struct cf_hosts_view *m, struct strbuf *out)
{
    const struct cf_consolidated *c = m->cons;
    size_t errors = cf_findings_count(&c->findings, CF_SEV_ERROR), warnings = cf_findings_count(&c->findings, CF_SEV_WARNING);
    size_t ndiff = c->n_diffs;
    char title[96];
    snprintf(title, sizeof title, "cclforge doctor: %zu host%s", m->n, m->n == 1 ? "" : "s");
    cf_html_begin(out, title, cf_report_hosts_css);
    cf_sb_addf(out, "<p id=\"summary\" data-hosts=\"%zu\" data-errors=\"%zu\" data-warnings=\"%zu\" "
                    "data-differences=\"%zu\"><span class=\"%s\">%zu error(s)</span>, <span class=\"%s\">%zu "
                    "warning(s)</span>, %zu fact(s) that differ.</p>\n",
               m->n, errors, warnings, ndiff, errors ? "error" : "ok", errors, warnings ? "warning" : "ok", warnings,
               ndiff);
    if (c->reason) {
        cf_sb_adds(out, "<p id=\"reason\">");
        clipped(out, c->reason);
        cf_sb_adds(out, "</p>\n");
    }
    if (m->missing && m->missing->n) {
        cf_sb_adds(out, "<h2 class=\"error\">Not heard from</h2>\n<ul id=\"missing\">");
        for (size_t i = 0; i < m->missing->n; i++) {
            cf_sb_adds(out, "<li>");
            cf_html_text(out, m->missing->v[i]);
            cf_sb_adds(out, "</li>");
        }
        cf_sb_adds(out, "</ul>\n");
    }
    alike(out, m);
    differences(out, m);
    findings(out, m);
    shared(out, m);
    /* for tools: the model, without each host's whole report */
    cJSON *j = cf_hosts_view_to_json(m);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    cf_html_json(out, "cclforge-hosts", text);
    free(text);
    cf_html_end(out);
}
