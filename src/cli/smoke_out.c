/* The smoke report file and the terminal matrix (cli/smoke_out.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/report.h"
#include "cclforge/strbuf.h"
#include "cli/cli.h"
#include "cli/smoke_out.h"
#include "cli/term.h"

int cli_smoke_report_write(const char *cmd, const struct cf_smoke_doc *d, const struct cf_pair_matrix *m,
                           const char *json_text, const char *path)
{
    cf_error err = CF_ERROR_INIT;
    struct strbuf html = STRBUF_INIT;
    cf_smoke_report_html(d, m, json_text, &html);
    int rc = cf_write_file_atomic(path, html.buf, html.len, &err);
    cf_sb_release(&html);
    if (rc < 0) {
        cli_error(cmd, "the report: %s", cf_error_message(&err));
        return EXIT_PROBLEMS;
    }
    return EXIT_FINE;
}

static int term_width(FILE *f)
{
    const char *cols = getenv("COLUMNS");
    char *end;
    long v = cols ? strtol(cols, &end, 10) : 0;
    if (cols && *cols && !*end && v >= 20 && v <= 10000)
        return (int)v;
    struct winsize ws;
    if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

/* one character for a pair: ok '.', slow 's', failed 'X', untested ' ', a wide spread '~' */
static char cell_char(const struct cf_pair_cell *c)
{
    static const char chars[CF_PAIR_CLASS_COUNT] = { ' ', '.', 's', 'X' };
    if (c->cls == CF_PAIR_OK && c->spread > CF_PAIR_WIDE_SPREAD)
        return '~';
    return c->cls < CF_PAIR_CLASS_COUNT ? chars[c->cls] : '?';
}

static const char *cell_color(FILE *f, const struct cf_pair_cell *c)
{
    static const enum cf_color colors[CF_PAIR_CLASS_COUNT] = { CF_DIM, CF_GREEN, CF_YELLOW, CF_RED };
    return c->cls < CF_PAIR_CLASS_COUNT ? cf_term_color(f, colors[c->cls]) : "";
}

/* the tested pair furthest below its path's capacity, when the links tell it */
static void capacity_line(FILE *f, const struct cf_pair_matrix *m, const struct cf_pair_size *s)
{
    size_t n = m->nhosts, la = 0, lb = 0, with = 0;
    double low = 0, low_cap = 0;
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            const struct cf_pair_cell *c = &s->cell[a * n + b];
            double cap = cf_pair_matrix_capacity(m, a, b, NULL);
            if (c->cls == CF_PAIR_UNTESTED || c->cls == CF_PAIR_FAILED || cap <= 0)
                continue;
            if (!with++ || c->busbw / cap < low / low_cap) {
                low = c->busbw;
                low_cap = cap;
                la = a;
                lb = b;
            }
        }
    if (!with)
        return;
    char share[32];
    cf_pair_share_text(low / low_cap, share, sizeof share);
    fprintf(f, "# against the path's capacity (%zu pairs): lowest %s + %s, %s of %.3g GB/s\n", with,
            cli_safe(m->host[la]), cli_safe(m->host[lb]), share, low_cap);
}

void cli_smoke_matrix_print(FILE *f, const struct cf_pair_matrix *m, const char *report_path)
{
    if (!m->pairwise || !m->nsizes)
        return;
    const struct cf_pair_size *s = &m->size[m->shown];
    size_t n = m->nhosts, lw = 4;
    for (size_t i = 0; i < n; i++)
        if (strlen(m->host[i]) > lw)
            lw = strlen(m->host[i]);
    if (lw > 24)
        lw = 24;
    int width = term_width(f);
    if (s->bytes >= 0)
        fprintf(f, "# pairs: %s %.0f B", cli_safe(s->op), s->bytes);
    else
        fprintf(f, "# pairs: %s", cli_safe(s->op));
    fprintf(f, ", busbw against the median pair (%.3g GB/s)", s->median);
    if (lw + 3 + n <= (size_t)width) {
        fprintf(f, "; . ok  s slow  X failed  ~ wide spread; bad hosts first\n");
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "#  %-*.*s ", (int)lw, (int)lw, cli_safe(m->host[i]));
            const char *last = NULL;
            for (size_t j = 0; j < n; j++) {
                if (i == j) {
                    fputc('\\', f);
                    continue;
                }
                const struct cf_pair_cell *c = &s->cell[i * n + j];
                const char *col = cell_color(f, c);
                if (col != last && *col) {
                    fputs(col, f);
                    last = col;
                }
                fputc(cell_char(c), f);
            }
            if (last)
                fputs(cf_term_color(f, CF_RESET), f);
            fputc('\n', f);
        }
    } else {
        enum { LISTED = 10 };
        struct cf_pair_ref worst[LISTED];
        size_t k = cf_pair_matrix_worst(m, m->shown, worst, LISTED);
        fprintf(f, "; %zu hosts are wider than the terminal (%d columns): the worst pairs\n", n, width);
        for (size_t i = 0; i < k; i++) {
            const struct cf_pair_cell *c = &s->cell[worst[i].a * n + worst[i].b];
            fprintf(f, "#  %s%-6s%s %s + %s: %.4g GB/s", cell_color(f, c),
                    cf_pair_class_name((enum cf_pair_class)c->cls), cf_term_color(f, CF_RESET),
                    cli_safe(m->host[worst[i].a]), cli_safe(m->host[worst[i].b]), c->busbw);
            double cap = cf_pair_matrix_capacity(m, worst[i].a, worst[i].b, NULL);
            char share[32];
            if (cap > 0) {
                cf_pair_share_text(c->busbw / cap, share, sizeof share);
                fprintf(f, " (%s of the path's %.3g GB/s)", share, cap);
            } else if (s->median > 0) {
                cf_pair_share_text(c->busbw / s->median, share, sizeof share);
                fprintf(f, " (%s of the median pair)", share);
            }
            fputc('\n', f);
        }
    }
    capacity_line(f, m, s);
    if (report_path)
        fprintf(f, "# the full report: %s\n", cli_safe(report_path));
    else
        fprintf(f, "# --report FILE.html writes the full report (every size, values, the run's facts)\n");
}
