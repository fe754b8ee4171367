/* Several hosts as HTML (cclforge/doctor_report.h): the gather's consolidated
 * model (cf_doctor_consolidate: shared facts, each difference with its groups
 * of hosts, findings) read from its JSON, hosts with the same value for every
 * difference collapsed into one row, minority values marked, findings with the
 * same meaning on many hosts listed once with their hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/doctor.h"
#include "cclforge/report.h"
#include "cclforge/doctor_report.h"
#include "cclforge/hostlist.h"
#include "cclforge/html.h"
#include "cclforge/json.h"
#include "report/assets.h"

struct label_ix {
    const char *label;
    size_t ix;
};

static int by_label(const void *a, const void *b)
{
    return strcmp(((const struct label_ix *)a)->label, ((const struct label_ix *)b)->label);
}

struct model {
    const cJSON *cons;          /* shared, differences, findings, summary, reason, missing */
    const char **labels; size_t n;
    struct label_ix *sorted;    /* labels sorted, for look-ups */
};

static long host_ix(const struct model *m, const char *label, size_t len)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strncmp(m->sorted[mid].label, label, len);
        if (!c && m->sorted[mid].label[len])
            c = 1;
        if (!c)
            return (long)m->sorted[mid].ix;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

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

static const char *sev_class(const char *sev)
{
    return sev && (!strcmp(sev, "error") || !strcmp(sev, "warning")) ? sev : "info";
}

/* ---- hosts alike: one row per combination of values over the differences ---- */

struct host_row {
    size_t host;
    size_t nd;
    int *sig;                   /* [nd]: the group index per difference */
};

static int cmp_sig(const void *a, const void *b)
{
    const struct host_row *x = a, *y = b;
    for (size_t i = 0; i < x->nd; i++)
        if (x->sig[i] != y->sig[i])
            return x->sig[i] - y->sig[i];
    return x->host < y->host ? -1 : x->host > y->host;
}

static void alike(struct strbuf *out, const struct model *m)
{
    const cJSON *diffs = cJSON_GetObjectItemCaseSensitive(m->cons, "differences");
    size_t nd = (size_t)cJSON_GetArraySize(diffs);
    const cJSON **dv = cf_xcalloc(nd ? nd : 1, sizeof *dv);
    size_t k = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, diffs) dv[k++] = d;
    struct host_row *rows = cf_xcalloc(m->n ? m->n : 1, sizeof *rows);
    int *sigs = cf_xcalloc(m->n * (nd ? nd : 1) + 1, sizeof *sigs);
    for (size_t h = 0; h < m->n; h++) {
        rows[h].host = h;
        rows[h].nd = nd;
        rows[h].sig = sigs + h * nd;
        for (size_t i = 0; i < nd; i++)
            rows[h].sig[i] = -1; /* a host no group names (not surveyed) */
    }
    for (size_t i = 0; i < nd; i++) {
        int g = 0;
        const cJSON *grp;
        cJSON_ArrayForEach(grp, cJSON_GetObjectItemCaseSensitive(dv[i], "groups"))
        {
            const cJSON *hn;
            cJSON_ArrayForEach(hn, cJSON_GetObjectItemCaseSensitive(grp, "hosts"))
            {
                long h = cJSON_IsString(hn) ? host_ix(m, hn->valuestring, strlen(hn->valuestring)) : -1;
                if (h >= 0)
                    rows[h].sig[i] = g;
            }
            g++;
        }
    }
    /* the usual combination first: sorted by signature, group 0 is the largest */
    qsort(rows, m->n, sizeof *rows, cmp_sig);
    cf_sb_addf(out, "<h2>Hosts</h2>\n<p class=\"muted\">Hosts with the same value for every fact that differs share a "
                    "row; a marked cell holds a value fewer hosts have than the most common one.</p>\n"
                    "<table id=\"alike\"><tr><th>hosts</th>");
    for (size_t i = 0; i < nd; i++) {
        cf_sb_addf(out, "<th class=\"%s\">", sev_class(cf_json_str(dv[i], "severity")));
        cf_html_text(out, cf_json_str(dv[i], "label"));
        cf_sb_adds(out, "</th>");
    }
    cf_sb_adds(out, "</tr>\n");
    const char **names = cf_xcalloc(m->n ? m->n : 1, sizeof *names);
    for (size_t r = 0; r < m->n;) {
        size_t e = r;
        while (e < m->n && !memcmp(rows[e].sig, rows[r].sig, nd * sizeof *rows[r].sig))
            e++;
        for (size_t i = r; i < e; i++)
            names[i - r] = m->labels[rows[i].host];
        int odd = 0;
        for (size_t i = 0; i < nd; i++)
            odd |= rows[r].sig[i] != 0;
        cf_sb_addf(out, "<tr class=\"hostgroup\" data-count=\"%zu\" data-odd=\"%d\" data-hosts=\"", e - r, odd);
        hostlist(out, names, e - r);
        cf_sb_addf(out, "\"><td><span class=\"count\">%zu host%s%s</span><div class=\"hosts\">", e - r,
                   e - r == 1 ? "" : "s", e - r > 1 ? " alike" : "");
        hostlist(out, names, e - r);
        cf_sb_adds(out, "</div></td>");
        for (size_t i = 0; i < nd; i++) {
            int g = rows[r].sig[i];
            const cJSON *grp = g >= 0 ? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(dv[i], "groups"), g) : NULL;
            const char *v = grp ? cf_json_str(grp, "value") : "(no survey)";
            cf_sb_addf(out, "<td class=\"%s\" data-diff=\"", g == 0 ? "same" : "odd");
            cf_html_text(out, cf_json_str(dv[i], "label"));
            cf_sb_adds(out, "\" data-value=\"");
            cf_html_text(out, v);
            cf_sb_adds(out, "\">");
            cf_html_text(out, v);
            cf_sb_adds(out, "</td>");
        }
        cf_sb_adds(out, "</tr>\n");
        r = e;
    }
    cf_sb_adds(out, "</table>\n");
    free(names);
    free(sigs);
    free(rows);
    free(dv);
}

/* ---- each difference with the hosts on each side ---- */

static void differences(struct strbuf *out, const struct model *m)
{
    const cJSON *diffs = cJSON_GetObjectItemCaseSensitive(m->cons, "differences");
    if (!cJSON_GetArraySize(diffs)) {
        cf_sb_adds(out, "<h2>Differences</h2>\n<p id=\"nodiff\">Every compared fact is the same on every host.</p>\n");
        return;
    }
    cf_sb_adds(out, "<h2>Differences</h2>\n<table id=\"differences\"><tr><th>severity</th><th>fact</th><th>value</th>"
                    "<th>hosts</th></tr>\n");
    const cJSON *d;
    cJSON_ArrayForEach(d, diffs)
    {
        const cJSON *groups = cJSON_GetObjectItemCaseSensitive(d, "groups"), *grp;
        int g = 0, ng = cJSON_GetArraySize(groups);
        cJSON_ArrayForEach(grp, groups)
        {
            const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(grp, "hosts"), *hn;
            size_t nh = (size_t)cJSON_GetArraySize(hosts), k = 0;
            const char **names = cf_xcalloc(nh ? nh : 1, sizeof *names);
            cJSON_ArrayForEach(hn, hosts) names[k++] = cJSON_IsString(hn) ? hn->valuestring : "?";
            cf_sb_adds(out, "<tr class=\"diffgroup\" data-diff=\"");
            cf_html_text(out, cf_json_str(d, "label"));
            cf_sb_addf(out, "\" data-odd=\"%d\" data-hosts=\"", g != 0);
            hostlist(out, names, k);
            cf_sb_adds(out, "\">");
            if (g == 0) {
                const char *sev = sev_class(cf_json_str(d, "severity"));
                cf_sb_addf(out, "<th rowspan=\"%d\" class=\"%s\">%s</th><th rowspan=\"%d\">", ng, sev, sev, ng);
                cf_html_text(out, cf_json_str(d, "label"));
                cf_sb_adds(out, "</th>");
            }
            cf_sb_addf(out, "<td class=\"%s\">", g ? "odd" : "same");
            cf_html_text(out, cf_json_str(grp, "value"));
            cf_sb_addf(out, "</td><td><span class=\"count\">%zu</span> <span class=\"hosts\">", k);
            hostlist(out, names, k);
            cf_sb_adds(out, "</span></td></tr>\n");
            free(names);
            g++;
        }
    }
    cf_sb_adds(out, "</table>\n");
}

/* ---- findings, the same one on many hosts once (cf_findings_group) ---- */

/* the hosts of a group, as a hostlist */
static void group_hosts(struct strbuf *out, const struct model *m, const struct cf_finding_group *g)
{
    const char **names = cf_xcalloc(g->n_hosts + 1, sizeof *names);
    for (size_t k = 0; k < g->n_hosts; k++)
        names[k] = m->labels[g->hosts[k]];
    hostlist(out, names, g->n_hosts);
    free(names);
}

static void findings(struct strbuf *out, const struct model *m)
{
    struct cf_findings all = CF_FINDINGS_INIT;
    cf_findings_from_json(cJSON_GetObjectItemCaseSensitive(m->cons, "findings"), &all);
    struct cf_finding_groups gs;
    cf_findings_group(&all, m->labels, m->n, &gs);
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
    cf_findings_release(&all);
}

static void shared(struct strbuf *out, const struct model *m)
{
    cf_sb_adds(out, "<h2>Shared by every host</h2>\n<table id=\"shared\"><tr><th>fact</th><th>value</th></tr>\n");
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(m->cons, "shared"))
    {
        cf_sb_adds(out, "<tr><td>");
        cf_html_text(out, cf_json_str(s, "label"));
        cf_sb_adds(out, "</td><td>");
        cf_html_text(out, cf_json_str(s, "value"));
        cf_sb_adds(out, "</td></tr>\n");
    }
    cf_sb_adds(out, "</table>\n");
}

/* a count from a saved document, which may hold anything */
static size_t count_of(const cJSON *o, const char *key)
{
    double v = cf_json_num(o, key, 0);
    return v >= 0 && v < 1e15 ? (size_t)v : 0;
}

static void render(struct strbuf *out, struct model *m)
{
    m->sorted = cf_xcalloc(m->n ? m->n : 1, sizeof *m->sorted);
    for (size_t i = 0; i < m->n; i++)
        m->sorted[i] = (struct label_ix){ m->labels[i], i };
    qsort(m->sorted, m->n, sizeof *m->sorted, by_label);
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(m->cons, "summary");
    size_t errors = count_of(sum, "errors"), warnings = count_of(sum, "warnings");
    size_t ndiff = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m->cons, "differences"));
    char title[96];
    snprintf(title, sizeof title, "cclforge doctor: %zu host%s", m->n, m->n == 1 ? "" : "s");
    cf_html_begin(out, title, cf_report_hosts_css);
    cf_sb_addf(out, "<p id=\"summary\" data-hosts=\"%zu\" data-errors=\"%zu\" data-warnings=\"%zu\" "
                    "data-differences=\"%zu\"><span class=\"%s\">%zu error(s)</span>, <span class=\"%s\">%zu "
                    "warning(s)</span>, %zu fact(s) that differ.</p>\n",
               m->n, errors, warnings, ndiff, errors ? "error" : "ok", errors, warnings ? "warning" : "ok", warnings,
               ndiff);
    const char *reason = cf_json_str(m->cons, "reason");
    if (reason) {
        cf_sb_adds(out, "<p id=\"reason\">");
        clipped(out, reason);
        cf_sb_adds(out, "</p>\n");
    }
    const cJSON *missing = cJSON_GetObjectItemCaseSensitive(m->cons, "missing"), *x;
    if (cJSON_GetArraySize(missing)) {
        cf_sb_adds(out, "<h2 class=\"error\">Not heard from</h2>\n<ul id=\"missing\">");
        cJSON_ArrayForEach(x, missing) if (cJSON_IsString(x))
        {
            cf_sb_adds(out, "<li>");
            cf_html_text(out, x->valuestring);
            cf_sb_adds(out, "</li>");
        }
        cf_sb_adds(out, "</ul>\n");
    }
    alike(out, m);
    differences(out, m);
    findings(out, m);
    shared(out, m);
    /* for tools: the model, without each host's whole report */
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "schema", "cclforge.doctor-hosts/1");
    cJSON *hosts = cJSON_AddArrayToObject(j, "hosts");
    for (size_t i = 0; i < m->n; i++)
        cJSON_AddItemToArray(hosts, cJSON_CreateString(m->labels[i]));
    static const char *const keys[] = { "shared", "differences", "findings", "summary", "reason", "missing" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m->cons, keys[i]);
        if (v)
            cJSON_AddItemToObject(j, keys[i], cJSON_Duplicate(v, 1));
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    cf_html_json(out, "cclforge-hosts", text);
    free(text);
    cf_html_end(out);
    free(m->sorted);
}

/* ---- the two kinds of input ---- */

static int from_gather(const cJSON *doc, struct strbuf *out)
{
    struct model m = { doc, NULL, 0, NULL };
    const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(doc, "hosts"), *h;
    m.labels = cf_xcalloc((size_t)cJSON_GetArraySize(hosts) + 1, sizeof *m.labels);
    cJSON_ArrayForEach(h, hosts)
    {
        const char *l = cf_json_str(h, "label");
        if (l)
            m.labels[m.n++] = l;
    }
    render(out, &m);
    free(m.labels);
    return 0;
}

static int from_reports(const cJSON *const *docs, size_t n, struct strbuf *out, cf_error *err)
{
    struct cf_survey *s = cf_xcalloc(n, sizeof *s);
    struct cf_findings *per = cf_xcalloc(n, sizeof *per);
    char **labels = cf_xcalloc(n, sizeof *labels);
    int rc = 0;
    size_t loaded = 0;
    for (; loaded < n; loaded++) {
        char which[32];
        snprintf(which, sizeof which, "report %zu", loaded + 1);
        if (cf_survey_from_json(docs[loaded], &s[loaded], err) < 0) {
            rc = cf_error_prefix(err, "%s", which);
            break;
        }
        if (cf_survey_check_whole(&s[loaded], which, err) < 0) {
            rc = -1;
            break;
        }
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(docs[loaded], "findings");
        if (cJSON_IsArray(f))
            cf_findings_from_json(f, &per[loaded]);
        const char *name = s[loaded].hostname ? s[loaded].hostname : "host";
        labels[loaded] = cf_strdup(name);
        /* two reports from one host name still need telling apart */
        for (unsigned k = 2; k < 1u << 20; k++) {
            size_t j = 0;
            while (j < loaded && strcmp(labels[j], labels[loaded]))
                j++;
            if (j == loaded)
                break;
            free(labels[loaded]);
            labels[loaded] = cf_asprintf("%s#%u", name, k);
        }
    }
    if (rc == 0) {
        struct cf_consolidated c;
        cf_doctor_consolidate(s, (const char *const *)labels, per, n, &c);
        cJSON *cons = cJSON_CreateObject();
        cf_consolidated_to_json(&c, cons);
        struct model m = { cons, (const char **)labels, n, NULL };
        render(out, &m);
        cJSON_Delete(cons);
        cf_consolidated_release(&c);
    }
    for (size_t i = 0; i < n; i++) {
        cf_survey_release(&s[i]);
        cf_findings_release(&per[i]);
        free(labels[i]);
    }
    free(s);
    free(per);
    free(labels);
    return rc;
}

int cf_doctor_hosts_html(const struct cJSON *const *docs, size_t n, struct strbuf *out, cf_error *err)
{
    if (!n)
        return cf_error_set(err, CF_ERR_USAGE, "no report to show: give doctor --gather --json's document or the "
                            "doctor --json reports of the hosts");
    for (size_t i = 0; i < n; i++) {
        const char *schema = cf_json_str(docs[i], "schema");
        int gather = schema && !strcmp(schema, "cclforge.doctor-gather/1");
        if (gather && n == 1)
            return from_gather(docs[0], out);
        if (!schema || strcmp(schema, "cclforge.doctor/1"))
            return cf_error_set(err, CF_ERR_FORMAT, "report %zu is %s%s: give one doctor --gather --json document "
                                "(cclforge.doctor-gather/1) or hosts' doctor --json reports (cclforge.doctor/1)",
                                i + 1, schema ? "of schema " : "without a schema", schema ? schema : "");
    }
    return from_reports(docs, n, out, err);
}
