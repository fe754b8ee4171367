/* The HTML report of a smoke document, rendered from its typed model
 * (cclforge/smoke_doc.h) and host matrix (cclforge/smoke_matrix.h): what a person
 * looks at when a job is slow. Every host name and value goes through
 * cf_html_text; the page reads fully without its script, which only switches
 * the test size. Past CF_PAIR_FULL_MAX hosts the matrix is drawn by blocks of
 * hosts (the rack or switch their names imply, else runs of 32 in name order),
 * with the worst pairs listed and each block's hosts in a drill-down. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/hostlist.h"
#include "cclforge/report.h"
#include "cclforge/html.h"
#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"
#include "cclforge/sorted_names.h"
#include "report/assets.h"
#include "smoke/stats.h"

/* an embedded document over this many bytes leaves out its per-test arrays */
#define EMBED_MAX (2u << 20)
#define WORST_LISTED 25
#define BLOCK_RUN 32
#define DRILL_MATRICES 8

static const char *class_fill_failed = "#ffffff";

struct ctx {
    struct strbuf *out;
    const struct cf_pair_matrix *m;
    const struct cf_smoke_doc *d;
};

/* "64 KiB": a test size for a person (cli_number.c writes one as a flag takes
 * it, "64K", for usage messages) */
static void size_words(double bytes, char *buf, size_t cap)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int u = 0;
    while (bytes >= 1024 && u < 4 && fmod(bytes, 1024) == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.0f %s", bytes, units[u]);
}

static void size_title(const struct cf_pair_size *s, struct strbuf *sb)
{
    if (s->bytes < 0) {
        cf_sb_addf(sb, "%s (each pair's own figure over its tests)", s->op);
        return;
    }
    char b[32];
    size_words(s->bytes, b, sizeof b);
    cf_sb_addf(sb, "%s, %s", s->op, b);
}

/* the scale's top: the best pair of the size */
static double size_max(const struct cf_pair_matrix *m, const struct cf_pair_size *s)
{
    double best = 0;
    for (size_t i = 0; i < m->nhosts * m->nhosts; i++)
        if (s->cell[i].cls != CF_PAIR_UNTESTED && s->cell[i].busbw > best)
            best = s->cell[i].busbw;
    return best;
}

static void add_share(struct strbuf *sb, double share)
{
    char text[32];
    cf_pair_share_text(share, text, sizeof text);
    cf_sb_adds(sb, text);
}

static void pct_words(double v, double ref, double capacity, struct strbuf *sb)
{
    if (capacity > 0 && isfinite(v)) {
        add_share(sb, v / capacity);
        cf_sb_addf(sb, " of the path's capacity (%.3g GB/s)", capacity);
    } else if (ref > 0 && isfinite(v)) {
        add_share(sb, v / ref);
        cf_sb_adds(sb, " of the median pair");
    } else
        cf_sb_adds(sb, "no reference");
}

/* A cell's rectangle, its marks and its title; a, b name the hosts (or blocks). */
static void draw_cell(struct ctx *c, double x, double y, double cs, const struct cf_pair_cell *cell, double top,
                      double ref, double capacity, const char *attr, const char *a, const char *b)
{
    struct strbuf *o = c->out;
    char fill[8];
    int cls = cell->cls;
    if (cls == CF_PAIR_UNTESTED)
        snprintf(fill, sizeof fill, "#e6e6e6");
    else if (cls == CF_PAIR_FAILED)
        snprintf(fill, sizeof fill, "%s", class_fill_failed);
    else
        cf_html_scale(top > 0 ? cell->busbw / top : 0, fill);
    /* marks in white on the dark half of the scale, in black on the light half */
    const char *ink = cls == CF_PAIR_UNTESTED || cls == CF_PAIR_FAILED || (top > 0 && cell->busbw / top > 0.5)
                          ? "#1b1b1b"
                          : "#ffffff";
    cf_sb_addf(o, "<g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y, cs, cs, fill);
    cf_sb_addf(o, " data-%s-a=\"", attr);
    cf_html_text(o, a);
    cf_sb_addf(o, "\" data-%s-b=\"", attr);
    cf_html_text(o, b);
    if (cls != CF_PAIR_UNTESTED)
        cf_sb_addf(o, "\" data-busbw=\"%.4g", cell->busbw);
    if (cell->spread >= 0)
        cf_sb_addf(o, "\" data-spread=\"%.3g", cell->spread);
    if (capacity > 0 && cls != CF_PAIR_UNTESTED)
        cf_sb_addf(o, "\" data-capacity=\"%.4g\" data-of-capacity=\"%.3g", capacity, cell->busbw / capacity);
    cf_sb_addf(o, "\" data-class=\"%s\"><title>", cf_pair_class_name((enum cf_pair_class)cls));
    cf_html_text(o, a);
    cf_sb_adds(o, " \xe2\x86\x94 ");
    cf_html_text(o, b);
    struct strbuf t = STRBUF_INIT;
    if (cls == CF_PAIR_UNTESTED) {
        cf_sb_adds(&t, ": not tested");
    } else {
        cf_sb_addf(&t, ": %s, %.3g GB/s, ", cf_pair_class_name((enum cf_pair_class)cls), cell->busbw);
        pct_words(cell->busbw, ref, capacity, &t);
        if (cell->spread >= 0)
            cf_sb_addf(&t, ", spread %.0f %%%s", 100 * cell->spread,
                       cell->spread > CF_PAIR_WIDE_SPREAD ? " (wide)" : "");
    }
    cf_html_text(o, cf_sb_str(&t));
    cf_sb_release(&t);
    cf_sb_adds(o, "</title></rect>");
    /* marks that hold in greyscale: failed an X, slow a bar, a wide spread a ring */
    double m = cs * 0.2;
    if (cls == CF_PAIR_FAILED)
        cf_sb_addf(o,
                   "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"#b00020\" stroke-width=\"%.1f\" "
                   "pointer-events=\"none\"/>",
                   x + m, y + m, x + cs - m, y + cs - m, x + cs - m, y + m, x + m, y + cs - m, cs > 8 ? 2.0 : 1.0);
    else if (cls == CF_PAIR_SLOW && cs >= 5)
        cf_sb_addf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                      "pointer-events=\"none\"/>",
                   x + m, y + cs / 2 - cs * 0.08, cs - 2 * m, cs * 0.16, ink);
    if (cls != CF_PAIR_UNTESTED && cell->spread > CF_PAIR_WIDE_SPREAD && cs >= 8)
        cf_sb_addf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"none\" stroke=\"%s\" "
                      "stroke-width=\"1\" pointer-events=\"none\"/>",
                   x + cs * 0.78, y + cs * 0.22, cs * 0.15, ink);
    cf_sb_adds(o, "</g>\n");
}

/* A matrix over labels[0..n) with cells get(i, j) and their path's capacity (0
 * unknown); the ones drawn data-ATTR-a/b. */
typedef const struct cf_pair_cell *(*cell_fn)(void *arg, size_t i, size_t j, double *capacity);

static void draw_matrix(struct ctx *c, size_t n, const char *const *labels, cell_fn get, void *arg, double top,
                        double ref, const char *attr, const char *id)
{
    struct strbuf *o = c->out;
    size_t longest = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(labels[i]) > longest)
            longest = strlen(labels[i]);
    double cs = n ? 640.0 / (double)n : 20;
    cs = cs > 28 ? 28 : cs < 6 ? 6 : floor(cs);
    double lw = 7.0 * (double)(longest > 40 ? 40 : longest) + 8;
    int labelled = cs >= 9;
    double w = lw + cs * (double)n + 4, h = lw + cs * (double)n + 4;
    cf_sb_addf(o, "<svg class=\"matrix\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
               id, w, h, w, h);
    for (size_t i = 0; labelled && i < n; i++) {
        /* row labels at the left, column labels written upwards on top */
        cf_sb_addf(o, "<text class=\"cell-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", lw - 4,
                   lw + cs * (double)i + cs * 0.7);
        cf_html_text(o, labels[i]);
        cf_sb_addf(o, "</text><text class=\"cell-label\" transform=\"translate(%.1f %.1f) rotate(-90)\">",
                   lw + cs * (double)i + cs * 0.7, lw - 4);
        cf_html_text(o, labels[i]);
        cf_sb_adds(o, "</text>\n");
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double capacity = 0;
            const struct cf_pair_cell *cell = get(arg, i, j, &capacity);
            if (!cell)
                continue; /* the diagonal of hosts: a host is not paired with itself */
            draw_cell(c, lw + cs * (double)j, lw + cs * (double)i, cs, cell, top, ref, capacity, attr, labels[i],
                      labels[j]);
        }
    cf_sb_adds(o, "</svg>\n");
}

struct host_cells {
    const struct cf_pair_matrix *m;
    const struct cf_pair_size *s;
    const size_t *ix; /* subset: display indexes */
};

static const struct cf_pair_cell *host_cell(void *arg, size_t i, size_t j, double *capacity)
{
    const struct host_cells *h = arg;
    size_t a = h->ix ? h->ix[i] : i, b = h->ix ? h->ix[j] : j;
    *capacity = cf_pair_matrix_capacity(h->m, a, b, NULL);
    return a == b ? NULL : &h->s->cell[a * h->m->nhosts + b];
}

static void legend(struct ctx *c, double top)
{
    struct strbuf *o = c->out;
    cf_sb_adds(o, "<table class=\"legend\"><tr><td><svg width=\"200\" height=\"14\" "
                  "xmlns=\"http://www.w3.org/2000/svg\">");
    for (int i = 0; i < 20; i++) {
        char fill[8];
        cf_html_scale(i / 19.0, fill);
        cf_sb_addf(o, "<rect x=\"%d\" y=\"0\" width=\"10\" height=\"14\" fill=\"%s\"/>", i * 10, fill);
    }
    cf_sb_addf(o, "</svg></td><td>busbw from 0 (dark blue) to %.3g GB/s (yellow), the best pair; lighter is "
                  "faster, in colour and in greyscale</td></tr>\n",
               top);
    cf_sb_adds(o, "<tr><td><svg width=\"14\" height=\"14\"><rect width=\"14\" height=\"14\" fill=\"#1f366d\"/>"
                  "<rect x=\"3\" y=\"6\" width=\"8\" height=\"2\" fill=\"#fff\"/></svg></td><td><b>slow</b>: "
                  "the run judged the pair bad by its busbw (a bar)</td></tr>\n"
                  "<tr><td><svg width=\"14\" height=\"14\"><rect width=\"14\" height=\"14\" fill=\"#fff\" "
                  "stroke=\"#c9c9c9\"/><path d=\"M3 3L11 11M11 3L3 11\" stroke=\"#b00020\" stroke-width=\"2\"/>"
                  "</svg></td><td><b>failed</b>: wrong results or a failed test (a cross on white)</td></tr>\n"
                  "<tr><td><svg width=\"14\" height=\"14\"><rect width=\"14\" height=\"14\" fill=\"#e6e6e6\"/>"
                  "</svg></td><td><b>untested</b>: the pair did not run</td></tr>\n"
                  "<tr><td><svg width=\"14\" height=\"14\"><rect width=\"14\" height=\"14\" fill=\"#7f7c75\"/>"
                  "<circle cx=\"11\" cy=\"3\" r=\"2\" fill=\"none\" stroke=\"#fff\"/></svg></td><td>a ring: "
                  "the busbw of its iterations spread more than 20 %</td></tr></table>\n");
}

/* the median pair at a size, in words: the reference where no capacity is known */
static void median_words(const struct cf_pair_size *s, struct strbuf *o)
{
    cf_html_textf(o, "the median pair (%.3g GB/s at ", s->median);
    struct strbuf t = STRBUF_INIT;
    size_title(s, &t);
    cf_html_text(o, cf_sb_str(&t));
    cf_sb_release(&t);
    cf_sb_adds(o, ")");
}

/* What a pair is measured against, stated: the capacity of its path where its
 * hosts' links tell it, else the median pair. */
static void reference_words(struct ctx *c, const struct cf_pair_size *s)
{
    const struct cf_pair_matrix *m = c->m;
    struct strbuf *o = c->out;
    size_t n = m->nhosts, tested = 0, with = 0, ex_a = 0, ex_b = 0, ncaps = 0;
    double caps[4];
    size_t counts[4];
    int more = 0;
    for (size_t x = 0; x < n; x++)
        for (size_t y = x + 1; y < n; y++) {
            if (s->cell[x * n + y].cls == CF_PAIR_UNTESTED)
                continue;
            tested++;
            double cap = cf_pair_matrix_capacity(m, x, y, NULL);
            if (cap <= 0)
                continue;
            if (!with++) {
                ex_a = x;
                ex_b = y;
            }
            size_t k = 0;
            while (k < ncaps && caps[k] != cap)
                k++;
            if (k < ncaps)
                counts[k]++;
            else if (ncaps < 4)
                caps[ncaps] = cap, counts[ncaps++] = 1;
            else
                more = 1;
        }
    cf_sb_adds(o, "<p class=\"reference\"><b>Is this normal?</b> ");
    if (!with) {
        cf_sb_adds(o, "Each pair's busbw is given as a percentage of ");
        median_words(s, o);
        cf_sb_adds(o, ": no path capacity is known. No rank of the run recorded a link with a known rate (an "
                      "interface without a line rate, such as a virtual NIC, or a document written before smoke "
                      "recorded links); <code>cclforge doctor</code> on each host shows its fabric.</p>\n");
        return;
    }
    cf_sb_adds(o, "Each pair's busbw is given as a percentage of the capacity of the path between its two hosts, "
                  "as their own fabric facts give it: for each link a rank can leave by, the slowest of its line "
                  "rate and the PCIe links on the way (the NIC's, and the GPU's when the data is in device memory); "
                  "for a pair, the smaller of the two hosts' sums over the IB/RoCE ports their ranks use, else the "
                  "fastest pair of interfaces on one network. Capacities: ");
    for (size_t k = 0; k < ncaps; k++)
        cf_sb_addf(o, "%s%.3g GB/s (%zu pair%s)", k ? ", " : "", caps[k], counts[k], counts[k] == 1 ? "" : "s");
    cf_sb_adds(o, more ? ", and others. For example, " : ". For example, ");
    struct strbuf w = STRBUF_INIT;
    cf_pair_matrix_capacity(m, ex_a, ex_b, &w);
    cf_html_text(o, m->host[ex_a]);
    cf_sb_adds(o, " \xe2\x86\x94 ");
    cf_html_text(o, m->host[ex_b]);
    cf_sb_adds(o, ": ");
    cf_html_text(o, cf_sb_str(&w));
    cf_sb_release(&w);
    cf_sb_adds(o, ".");
    if (with < tested) {
        cf_sb_addf(o, " The %zu pair%s whose capacity is unknown %s given against ", tested - with,
                   tested - with == 1 ? "" : "s", tested - with == 1 ? "is" : "are");
        median_words(s, o);
        cf_sb_adds(o, ".");
    }
    cf_sb_adds(o, "</p>\n");
}

/* a pair's busbw against its reference, in a table cell */
static void pct_cell(const struct cf_pair_matrix *m, const struct cf_pair_size *s, size_t a, size_t b, double v,
                     struct strbuf *o)
{
    double cap = cf_pair_matrix_capacity(m, a, b, NULL);
    if (cap > 0) {
        add_share(o, v / cap);
        cf_sb_addf(o, " of %.3g GB/s capacity", cap);
    } else if (s->median > 0) {
        add_share(o, v / s->median);
        cf_sb_adds(o, " of the median");
    }
}

static void worst_table(struct ctx *c, size_t si)
{
    const struct cf_pair_matrix *m = c->m;
    const struct cf_pair_size *s = &m->size[si];
    struct cf_pair_ref worst[WORST_LISTED];
    size_t k = cf_pair_matrix_worst(m, si, worst, WORST_LISTED);
    struct strbuf *o = c->out;
    cf_sb_adds(o, "<table class=\"worst\"><tr><th>host</th><th>host</th><th>class</th><th>busbw GB/s</th>"
                  "<th>against</th><th>spread</th></tr>\n");
    for (size_t i = 0; i < k; i++) {
        const struct cf_pair_cell *cell = &s->cell[worst[i].a * m->nhosts + worst[i].b];
        cf_sb_adds(o, "<tr><td>");
        cf_html_text(o, m->host[worst[i].a]);
        cf_sb_adds(o, "</td><td>");
        cf_html_text(o, m->host[worst[i].b]);
        cf_sb_addf(o, "</td><td>%s</td><td class=\"num\">%.4g</td><td class=\"num\">",
                   cf_pair_class_name((enum cf_pair_class)cell->cls), cell->busbw);
        pct_cell(m, s, worst[i].a, worst[i].b, cell->busbw, o);
        cf_sb_adds(o, "</td><td class=\"num\">");
        if (cell->spread >= 0)
            cf_sb_addf(o, "%.0f %%", 100 * cell->spread);
        cf_sb_adds(o, "</td></tr>\n");
    }
    cf_sb_adds(o, "</table>\n");
}

static void full_matrices(struct ctx *c)
{
    const struct cf_pair_matrix *m = c->m;
    struct strbuf *o = c->out;
    if (m->nsizes > 1) {
        cf_sb_adds(o, "<p><label>Test size: <select id=\"size-select\">");
        for (size_t s = 0; s < m->nsizes; s++) {
            cf_sb_addf(o, "<option value=\"size-%zu\"%s>", s, s == m->shown ? " selected" : "");
            struct strbuf t = STRBUF_INIT;
            size_title(&m->size[s], &t);
            cf_html_text(o, cf_sb_str(&t));
            cf_sb_release(&t);
            cf_sb_adds(o, "</option>");
        }
        cf_sb_adds(o, "</select></label></p>\n");
    }
    /* the largest size first: without the script every size is shown, in this order */
    for (size_t k = 0; k < m->nsizes; k++) {
        size_t s = k == 0 ? m->shown : k <= m->shown ? k - 1 : k;
        const struct cf_pair_size *sz = &m->size[s];
        cf_sb_addf(o, "<div class=\"size%s\" id=\"size-%zu\"><h3>", s == m->shown ? " on" : "", s);
        struct strbuf t = STRBUF_INIT;
        size_title(sz, &t);
        cf_html_text(o, cf_sb_str(&t));
        cf_sb_release(&t);
        cf_sb_adds(o, "</h3>\n");
        double top = size_max(m, sz);
        struct host_cells hc = { m, sz, NULL };
        char id[32];
        snprintf(id, sizeof id, "matrix-%zu", s);
        draw_matrix(c, m->nhosts, (const char *const *)m->host, host_cell, &hc, top, sz->median, "host", id);
        reference_words(c, sz);
        if (s == m->shown)
            legend(c, top);
        cf_sb_adds(o, "</div>\n");
    }
}

/* ---- many hosts: blocks ---- */

struct blocks {
    size_t nb;
    size_t *order;   /* display indexes in natural order, block after block */
    size_t *start;   /* nb + 1 offsets into order */
    char **label;    /* each block's hosts as a hostlist */
    struct cf_pair_cell *cell; /* nb x nb */
    long *nslow, *nfailed, *ntested; /* nb x nb */
    const char *by;  /* how the blocks were made, in words */
};

static size_t prefix_len(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] >= '0' && s[n - 1] <= '9')
        n--;
    return n;
}

static void make_blocks(const struct cf_pair_matrix *m, const struct cf_pair_size *s, struct blocks *bl)
{
    size_t n = m->nhosts;
    struct cf_sorted_names sorted;
    cf_sorted_names_build(&sorted, (const char *const *)m->host, n, cf_hostname_natural_cmp);
    const struct cf_sorted_name *ni = sorted.v;
    bl->order = cf_xcalloc(n + 1, sizeof *bl->order);
    for (size_t i = 0; i < n; i++)
        bl->order[i] = ni[i].ix;
    /* by the prefix the names imply ("rack03-node17": "rack03-node"), when that makes blocks */
    size_t nprefix = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || prefix_len(ni[i].name) != prefix_len(ni[i - 1].name) ||
            memcmp(ni[i].name, ni[i - 1].name, prefix_len(ni[i].name)))
            nprefix++;
    int by_prefix = nprefix >= 2 && nprefix <= 128 && nprefix * 2 <= n;
    bl->start = cf_xcalloc(n + 2, sizeof *bl->start);
    bl->nb = 0;
    for (size_t i = 0; i < n; i++) {
        int cut = by_prefix ? (!i || prefix_len(ni[i].name) != prefix_len(ni[i - 1].name) ||
                               memcmp(ni[i].name, ni[i - 1].name, prefix_len(ni[i].name)))
                            : i % BLOCK_RUN == 0;
        if (cut)
            bl->start[bl->nb++] = i;
    }
    bl->start[bl->nb] = n;
    bl->by = by_prefix ? "by the prefix of their names (rack or switch)" : "in runs of 32 hosts in name order";
    cf_sorted_names_release(&sorted);
    size_t nb = bl->nb;
    bl->label = cf_xcalloc(nb + 1, sizeof *bl->label);
    const char **names = cf_xcalloc(n + 1, sizeof *names);
    for (size_t b = 0; b < nb; b++) {
        size_t k = 0;
        for (size_t i = bl->start[b]; i < bl->start[b + 1]; i++)
            names[k++] = m->host[bl->order[i]];
        bl->label[b] = cf_hostlist_compress(names, k);
    }
    free(names);
    bl->cell = cf_xcalloc(nb * nb + 1, sizeof *bl->cell);
    bl->nslow = cf_xcalloc(nb * nb + 1, sizeof *bl->nslow);
    bl->nfailed = cf_xcalloc(nb * nb + 1, sizeof *bl->nfailed);
    bl->ntested = cf_xcalloc(nb * nb + 1, sizeof *bl->ntested);
    size_t maxb = 0;
    for (size_t b = 0; b < nb; b++)
        if (bl->start[b + 1] - bl->start[b] > maxb)
            maxb = bl->start[b + 1] - bl->start[b];
    double *vals = cf_xcalloc(maxb * maxb + 1, sizeof *vals);
    for (size_t x = 0; x < nb; x++)
        for (size_t y = 0; y < nb; y++) {
            size_t nv = 0, k = x * nb + y;
            struct cf_pair_cell *bc = &bl->cell[k];
            bc->cls = CF_PAIR_UNTESTED;
            bc->spread = -1;
            bc->busbw = NAN;
            for (size_t i = bl->start[x]; i < bl->start[x + 1]; i++)
                for (size_t j = bl->start[y]; j < bl->start[y + 1]; j++) {
                    size_t a = bl->order[i], b = bl->order[j];
                    if (a == b)
                        continue;
                    const struct cf_pair_cell *c = &s->cell[a * n + b];
                    if (c->cls == CF_PAIR_UNTESTED)
                        continue;
                    bl->ntested[k]++;
                    bl->nslow[k] += c->cls == CF_PAIR_SLOW;
                    bl->nfailed[k] += c->cls == CF_PAIR_FAILED;
                    if (c->cls > bc->cls)
                        bc->cls = c->cls;
                    if (c->cls != CF_PAIR_FAILED)
                        vals[nv++] = c->busbw;
                }
            if (nv)
                bc->busbw = (float)cf_smoke_median(vals, nv);
            else if (bc->cls != CF_PAIR_UNTESTED)
                bc->busbw = 0;
        }
    free(vals);
}

static void blocks_release(struct blocks *bl)
{
    for (size_t b = 0; b < bl->nb; b++)
        free(bl->label[b]);
    free(bl->label);
    free(bl->order);
    free(bl->start);
    free(bl->cell);
    free(bl->nslow);
    free(bl->nfailed);
    free(bl->ntested);
}

struct block_cells {
    const struct blocks *bl;
};

static const struct cf_pair_cell *block_cell(void *arg, size_t i, size_t j, double *capacity)
{
    (void)capacity; /* a block's pairs may run over paths of different capacity: against the median */
    const struct blocks *bl = ((struct block_cells *)arg)->bl;
    const struct cf_pair_cell *c = &bl->cell[i * bl->nb + j];
    return i == j && bl->start[i + 1] - bl->start[i] < 2 ? NULL : c;
}

/* one host's row of the drill-down: its median, against the median pair and
 * against its paths' capacity, its slow and failed pairs, its worst peer.
 * tmp holds 2 x nhosts. */
static void host_row(struct ctx *c, const struct cf_pair_size *s, size_t h, double *tmp)
{
    const struct cf_pair_matrix *m = c->m;
    struct strbuf *o = c->out;
    size_t n = m->nhosts, nv = 0, nr = 0, worst = n;
    double *ratio = tmp + n;
    long slow = 0, failed = 0;
    for (size_t j = 0; j < n; j++) {
        const struct cf_pair_cell *x = &s->cell[h * n + j];
        if (j == h || x->cls == CF_PAIR_UNTESTED)
            continue;
        slow += x->cls == CF_PAIR_SLOW;
        failed += x->cls == CF_PAIR_FAILED;
        double cap = cf_pair_matrix_capacity(m, h, j, NULL);
        if (x->cls != CF_PAIR_FAILED)
            tmp[nv++] = x->busbw;
        if (x->cls != CF_PAIR_FAILED && cap > 0)
            ratio[nr++] = x->busbw / cap;
        if (worst == n || x->cls > s->cell[h * n + worst].cls ||
            (x->cls == s->cell[h * n + worst].cls && x->busbw < s->cell[h * n + worst].busbw))
            worst = j;
    }
    double med = nv ? cf_smoke_median(tmp, nv) : 0, med_ratio = nr ? cf_smoke_median(ratio, nr) : 0;
    cf_sb_addf(o, "<tr%s data-host=\"", m->host_bad[h] ? " class=\"error\"" : "");
    cf_html_text(o, m->host[h]);
    cf_sb_adds(o, "\"><td>");
    cf_html_text(o, m->host[h]);
    cf_sb_addf(o, "</td><td class=\"num\">%.4g</td><td class=\"num\">", med);
    if (s->median > 0)
        add_share(o, med / s->median);
    cf_sb_adds(o, "</td><td class=\"num\">");
    if (nr)
        add_share(o, med_ratio);
    cf_sb_addf(o, "</td><td class=\"num\">%ld</td><td class=\"num\">%ld</td><td>", slow, failed);
    if (worst < n) {
        cf_html_text(o, m->host[worst]);
        cf_sb_addf(o, " (%s, %.4g GB/s)", cf_pair_class_name((enum cf_pair_class)s->cell[h * n + worst].cls),
                   s->cell[h * n + worst].busbw);
    }
    cf_sb_adds(o, "</td></tr>\n");
}

static void block_view(struct ctx *c)
{
    const struct cf_pair_matrix *m = c->m;
    const struct cf_pair_size *s = &m->size[m->shown];
    struct strbuf *o = c->out;
    struct blocks bl = { 0 };
    make_blocks(m, s, &bl);
    struct strbuf t = STRBUF_INIT;
    size_title(s, &t);
    cf_sb_addf(o, "<h3>Overview: %zu hosts in %zu blocks, ", m->nhosts, bl.nb);
    cf_html_text(o, bl.by);
    cf_sb_adds(o, " (");
    cf_html_text(o, cf_sb_str(&t));
    cf_sb_adds(o, ")</h3>\n<p class=\"muted\">A cell is the median busbw of the pairs between two blocks (on the "
                  "diagonal, within one), its class the worst of them; its title counts them. Each block's hosts "
                  "are below.</p>\n");
    double top = 0;
    for (size_t i = 0; i < bl.nb * bl.nb; i++)
        if (bl.cell[i].cls != CF_PAIR_UNTESTED && bl.cell[i].busbw > top)
            top = bl.cell[i].busbw;
    struct block_cells bc = { &bl };
    draw_matrix(c, bl.nb, (const char *const *)bl.label, block_cell, &bc, top, s->median, "block", "overview");
    reference_words(c, s);
    legend(c, top);
    cf_sb_adds(o, "<h3>Worst pairs</h3>\n");
    worst_table(c, m->shown);
    cf_sb_adds(o, "<h3>Blocks and their hosts</h3>\n");
    double *tmp = cf_xcalloc(2 * m->nhosts + 1, sizeof *tmp);
    size_t drawn = 0;
    for (size_t b = 0; b < bl.nb; b++) {
        long slow = 0, failed = 0, bad = 0;
        for (size_t y = 0; y < bl.nb; y++) {
            slow += bl.nslow[b * bl.nb + y];
            failed += bl.nfailed[b * bl.nb + y];
        }
        for (size_t i = bl.start[b]; i < bl.start[b + 1]; i++)
            bad += m->host_bad[bl.order[i]];
        cf_sb_addf(o, "<details%s><summary>", bad ? " open" : "");
        cf_html_text(o, bl.label[b]);
        cf_sb_addf(o, ": %zu hosts, %ld slow and %ld failed pairs%s</summary>\n", bl.start[b + 1] - bl.start[b],
                   slow, failed, bad ? ", a bad host" : "");
        if ((bad || failed) && drawn < DRILL_MATRICES && bl.start[b + 1] - bl.start[b] <= CF_PAIR_FULL_MAX) {
            struct host_cells hc = { m, s, bl.order + bl.start[b] };
            const char **labels = cf_xcalloc(bl.start[b + 1] - bl.start[b] + 1, sizeof *labels);
            for (size_t i = bl.start[b]; i < bl.start[b + 1]; i++)
                labels[i - bl.start[b]] = m->host[bl.order[i]];
            char id[32];
            snprintf(id, sizeof id, "block-%zu", b);
            draw_matrix(c, bl.start[b + 1] - bl.start[b], labels, host_cell, &hc, size_max(m, s), s->median, "host",
                        id);
            free(labels);
            drawn++;
        }
        cf_sb_adds(o, "<table><tr><th>host</th><th>median busbw GB/s</th><th>of the median pair</th>"
                      "<th>of its paths' capacity (median)</th><th>slow pairs</th><th>failed pairs</th>"
                      "<th>worst peer</th></tr>\n");
        for (size_t i = bl.start[b]; i < bl.start[b + 1]; i++)
            host_row(c, s, bl.order[i], tmp);
        cf_sb_adds(o, "</table></details>\n");
    }
    free(tmp);
    cf_sb_release(&t);
    blocks_release(&bl);
}

/* ---- the page ---- */

static void verdict_section(struct ctx *c)
{
    const struct cf_pair_matrix *m = c->m;
    struct strbuf *o = c->out;
    /* a document without a verdict or an exit status has none: never read as passed */
    const char *verdict = c->d->verdict;
    int ok = c->d->ok;
    cf_sb_addf(o, "<h2>Verdict</h2>\n<p class=\"verdict %s\" id=\"verdict\">",
               !verdict || ok < 0 ? "warning" : ok ? "ok" : "error");
    cf_html_text(o, verdict ? verdict : "unknown");
    cf_sb_adds(o, "</p>\n");
    if (!m->conclusive) {
        cf_sb_adds(o, "<p class=\"warning\" id=\"inconclusive\"><b>Inconclusive</b>: ");
        cf_html_text(o, m->inconclusive_why ? m->inconclusive_why : "the run says its numbers cannot tell");
        cf_sb_adds(o, ". No host is named; run again with more iterations (--iters) or on a quieter machine.</p>\n");
        return;
    }
    if (!m->bad_hosts_known) {
        cf_sb_adds(o, "<p class=\"warning\" id=\"bad-hosts\">No host is named: this document predates "
                      "<code>bad_hosts</code>, where the run's search names the bad hosts; the verdict above "
                      "is the run's own word. Run cclforge smoke again for a hostlist to exclude.</p>\n");
        return;
    }
    if (!m->nbad) {
        cf_sb_adds(o, "<p id=\"bad-hosts\">No bad host.</p>\n");
        return;
    }
    cf_sb_addf(o, "<p id=\"bad-hosts\">Bad host%s (%zu): ", m->nbad == 1 ? "" : "s", m->nbad);
    for (size_t i = 0; i < m->nbad; i++) {
        cf_sb_adds(o, i ? ", <code>" : "<code>");
        cf_html_text(o, m->bad[i]);
        cf_sb_adds(o, "</code>");
    }
    cf_sb_adds(o, "</p>\n<p>As a Slurm hostlist, for <code>srun --exclude</code>: <code class=\"exclude\" "
                  "id=\"exclude\">");
    cf_html_text(o, m->exclude);
    cf_sb_adds(o, "</code></p>\n");
}

static void fact_row(struct strbuf *o, const char *key, const char *value)
{
    if (!value || !value[0])
        return;
    cf_sb_adds(o, "<tr><th>");
    cf_html_text(o, key);
    cf_sb_adds(o, "</th><td>");
    cf_html_text(o, value);
    cf_sb_adds(o, "</td></tr>\n");
}

static const char *rank_host(const struct cf_smoke_doc *d, int rank)
{
    return rank >= 0 && (size_t)rank < d->nlisted ? d->ranks[rank].hostname : NULL;
}

static void facts_section(struct ctx *c)
{
    const struct cf_smoke_doc *d = c->d;
    const struct cf_pair_matrix *m = c->m;
    struct strbuf *o = c->out, v = STRBUF_INIT;
    cf_sb_adds(o, "<h2>The run</h2>\n<table class=\"facts\">\n");
    fact_row(o, "backend", d->backend);
    fact_row(o, "library", d->lib_version);
    fact_row(o, "library path", d->lib_path);
    if (d->mpi_abi) {
        cf_sb_addf(&v, "%s (chosen by %s)", d->mpi_abi, d->mpi_chosen_by ? d->mpi_chosen_by : "?");
        fact_row(o, "MPI ABI", cf_sb_str(&v));
        cf_sb_reset(&v);
    }
    fact_row(o, "launcher", d->launcher);
    cf_sb_addf(&v, "%d ranks on %zu hosts", d->nranks, m->nhosts);
    fact_row(o, "ranks", cf_sb_str(&v));
    cf_sb_reset(&v);
    for (size_t s = 0; s < m->nsizes; s++) {
        if (s)
            cf_sb_adds(&v, "; ");
        size_title(&m->size[s], &v);
    }
    fact_row(o, "pair tests", cf_sb_str(&v));
    cf_sb_reset(&v);
    if (d->nrows && d->rows[0].iters >= 0) {
        cf_sb_addf(&v, "%d timed per test (the figure of a test: the median over them)", d->rows[0].iters);
        fact_row(o, "iterations", cf_sb_str(&v));
        cf_sb_reset(&v);
    }
    cf_sb_addf(&v, "%ld passed, %ld failed; average busbw %.4g GB/s", d->passed, d->failed, d->avg_busbw);
    fact_row(o, "tests", cf_sb_str(&v));
    cf_sb_reset(&v);
    fact_row(o, "network", d->network);
    fact_row(o, "skipped", d->skipped);
    size_t nconn = d->nconns;
    if (!nconn)
        fact_row(o, "transport per pair", "not reported (the library logs it: NCCL and RCCL with NCCL_DEBUG=INFO)");
    cf_sb_adds(o, "</table>\n");
    if (nconn) {
        cf_sb_adds(o, "<h3>Transport per pair</h3>\n<table class=\"transports\"><tr><th>from</th><th>to</th>"
                      "<th>via</th><th>channels</th></tr>\n");
        for (size_t i = 0; i < nconn && i < 200; i++) {
            const struct cf_smoke_transport_conn *t = &d->conns[i];
            const char *a = rank_host(d, t->rank), *b = rank_host(d, t->peer);
            cf_sb_adds(o, "<tr><td>");
            cf_html_textf(o, "rank %d (%s)", t->rank, a ? a : "?");
            cf_sb_adds(o, "</td><td>");
            cf_html_textf(o, "rank %d (%s)", t->peer, b ? b : "?");
            cf_sb_adds(o, "</td><td>");
            cf_html_text(o, t->via);
            cf_sb_addf(o, "</td><td class=\"num\">%d</td></tr>\n", t->channels);
        }
        cf_sb_adds(o, "</table>\n");
        if (nconn > 200)
            cf_sb_addf(o, "<p class=\"muted\">%zu more in the embedded document.</p>\n", nconn - 200);
    }
    cf_sb_release(&v);
}

/* what a group is measured against, stated */
static void group_reference(struct ctx *c)
{
    const struct cf_pair_matrix *m = c->m;
    struct strbuf *o = c->out;
    cf_sb_adds(o, "<p class=\"reference\"><b>Is this normal?</b> ");
    if (!m->group_example) {
        cf_sb_adds(o, "No group's path capacity is known (no rank recorded a link with a known rate, or a group's "
                      "hosts are not all known from its rows): compare the groups with each other.</p>\n");
        return;
    }
    cf_sb_adds(o, "Each group's average busbw against the capacity of its path, as its hosts' own fabric facts "
                  "give it: within one host, the slowest of its GPUs' links to the others (NVLink: the active "
                  "links times their version's rate; XGMI: the links' bandwidth as KFD gives it; counted to the "
                  "group's other GPUs and NVSwitches where a GPU's peers are recorded, else summed; a GPU "
                  "with neither: its PCIe link); across hosts, the smallest capacity between two of its hosts, "
                  "reckoned as for a pair. NVLink SHARP (NVLS) reduces in the switch, so a group can pass 100 %. "
                  "For example, group ");
    cf_html_text(o, m->group_example_ix < c->d->ngroups ? c->d->groups[m->group_example_ix].label : NULL);
    cf_sb_adds(o, ": ");
    cf_html_text(o, m->group_example);
    cf_sb_adds(o, ".</p>\n");
}

/* the groups of a search that is not pairwise, and its tests */
static void groups_section(struct ctx *c)
{
    struct strbuf *o = c->out;
    const struct cf_smoke_doc *d = c->d;
    const struct cf_pair_matrix *m = c->m;
    if (d->ngroups) {
        cf_sb_adds(o, "<h2>Groups</h2>\n");
        group_reference(c);
        cf_sb_adds(o, "<table class=\"groups\"><tr><th>group</th><th>hosts</th><th>avg busbw GB/s</th>"
                      "<th>capacity GB/s</th><th>of capacity</th><th>judged</th><th>why</th></tr>\n");
        for (size_t k = 0; k < d->ngroups && k < 500; k++) {
            const struct cf_smoke_group *g = &d->groups[k];
            double cap = m->group_capacity && k < m->ngroups ? m->group_capacity[k] : 0;
            double bw = g->avg_busbw;
            int bad = g->bad;
            cf_sb_addf(o, "<tr%s", bad ? " class=\"error\"" : "");
            if (cap > 0)
                cf_sb_addf(o, " data-capacity=\"%.4g\" data-of-capacity=\"%.3g\"", cap, bw / cap);
            cf_sb_addf(o, "><td class=\"num\">%d</td><td>", g->id);
            cf_html_text(o, g->label);
            cf_sb_addf(o, "</td><td class=\"num\">%.4g</td><td class=\"num\">", bw);
            if (cap > 0) {
                cf_sb_addf(o, "%.4g</td><td class=\"num\">", cap);
                add_share(o, bw / cap);
            } else
                cf_sb_adds(o, "</td><td class=\"num\">");
            cf_sb_addf(o, "</td><td>%s</td><td>", bad ? "bad" : "ok");
            cf_html_text(o, g->why);
            cf_sb_adds(o, "</td></tr>\n");
        }
        cf_sb_adds(o, "</table>\n");
    }
    cf_sb_adds(o, "<h2>Tests</h2>\n<table class=\"rows\"><tr><th>op</th><th>bytes</th><th>busbw GB/s</th>"
                  "<th>result</th><th>group</th></tr>\n");
    for (size_t k = 0; k < d->nrows && k < 1000; k++) {
        const struct cf_smoke_row *r = &d->rows[k];
        cf_sb_adds(o, "<tr><td>");
        cf_html_text(o, cf_smoke_doc_op_name(r->op));
        cf_sb_addf(o, "</td><td class=\"num\">%zu</td><td class=\"num\">%.4g</td><td class=\"%s\">%s</td>"
                      "<td class=\"num\">%d</td></tr>\n",
                   r->bytes, r->busbw, r->ok ? "ok" : "error", r->ok ? "ok" : "FAIL", r->group);
    }
    cf_sb_adds(o, "</table>\n");
}

/* the document for tools; a large one without its per-test arrays (the saved JSON has them) */
static void embed(struct ctx *c, const char *json_text)
{
    if (strlen(json_text) <= EMBED_MAX) {
        cf_html_json(c->out, "smoke-json", json_text);
        return;
    }
    char *s = cf_smoke_doc_json(c->d, CF_SMOKE_DOC_SLIM);
    cf_sb_adds(c->out, "<p class=\"muted\">The embedded document leaves out its per-test arrays (");
    cf_html_textf(c->out, "%zu MB", strlen(json_text) >> 20);
    cf_sb_adds(c->out, "); the saved --json document has them.</p>\n");
    cf_html_json(c->out, "smoke-json", s);
    free(s);
}

void cf_smoke_report_html(const struct cf_smoke_doc *d, const struct cf_pair_matrix *m, const char *json_text,
                          struct strbuf *out)
{
    struct ctx c = { out, m, d };
    cf_html_begin(out, "cclforge smoke report", cf_report_smoke_css);
    verdict_section(&c);
    cf_sb_adds(out, "<h2>Host \xc3\x97 host busbw</h2>\n");
    if (m->pairwise && m->nsizes) {
        cf_sb_addf(out, "<p class=\"muted\">%zu hosts, %zu pairs tested. Hosts judged bad come first, so their row "
                        "and column stand out; the rest in name order.</p>\n",
                   m->nhosts, m->npairs_tested);
        if (m->nhosts <= CF_PAIR_FULL_MAX) {
            full_matrices(&c);
            cf_sb_adds(out, "<h3>Worst pairs</h3>\n");
            worst_table(&c, m->shown);
        } else {
            block_view(&c);
        }
    } else {
        cf_sb_adds(out, "<p class=\"muted\">No host pairs in this run: the matrix is drawn for "
                        "<code>--pattern pairwise</code>.</p>\n");
        groups_section(&c);
    }
    facts_section(&c);
    embed(&c, json_text ? json_text : "null");
    cf_html_script(out, cf_report_smoke_js);
    cf_html_end(out);
}
