#include "cli/term.h"

#include "cli/cli.h"

#include "cclforge/clock.h"
#include "cclforge/launch_mark.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cf_term_is_tty(FILE *f)
{
    /* the standard streams without fileno: a page of libc a short run need not touch */
    int fd = f == stdout ? STDOUT_FILENO : f == stderr ? STDERR_FILENO : f ? fileno(f) : -1;
    return fd >= 0 && isatty(fd);
}

/* The choice of --color; the auto answer per standard stream, decided once
 * (asked for every colour code printed). */
static enum cf_color_when color_when = CF_COLOR_AUTO;
static signed char auto_answer[2] = { -1, -1 }; /* stdout, stderr; -1 not yet */

static const struct {
    const char *word;
    enum cf_color_when when;
} color_words[] = { { "auto", CF_COLOR_AUTO }, { "always", CF_COLOR_ALWAYS }, { "never", CF_COLOR_NEVER } };

void cf_term_set_color(enum cf_color_when when)
{
    color_when = when;
}

static int parse_when(const char *text, enum cf_color_when *when, cf_error *err)
{
    for (size_t i = 0; i < sizeof color_words / sizeof color_words[0]; i++)
        if (!strcmp(text, color_words[i].word)) {
            *when = color_words[i].when;
            return 0;
        }
    return cf_error_set(err, CF_ERR_USAGE, "--color='%s': expected auto, always or never", text);
}

int cf_term_take_color_option(int *argc, char **argv, cf_error *err)
{
    enum cf_color_when when = color_when;
    int kept = 1, i = 1;
    for (; i < *argc && strcmp(argv[i], "--"); i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--color"))
            when = CF_COLOR_ALWAYS;
        else if (!strcmp(a, "--no-color"))
            when = CF_COLOR_NEVER;
        else if (!strncmp(a, "--color=", 8)) {
            if (parse_when(a + 8, &when, err) < 0)
                return -1;
        } else
            argv[kept++] = argv[i];
    }
    while (i < *argc)
        argv[kept++] = argv[i++];
    argv[kept] = NULL;
    *argc = kept;
    cf_term_set_color(when);
    return 0;
}

extern char **environ;

int cf_term_user_terminal(FILE *f)
{
    const char *term = getenv("TERM");
    return term && *term && strcmp(term, "dumb") && cf_term_is_tty(f) && !cf_launch_marked(environ);
}

int cf_term_color_enabled(FILE *f)
{
    if (color_when != CF_COLOR_AUTO)
        return color_when == CF_COLOR_ALWAYS;
    int slot = f == stdout ? 0 : f == stderr ? 1 : -1;
    if (slot >= 0 && auto_answer[slot] >= 0)
        return auto_answer[slot];
    const char *nc = getenv("NO_COLOR");
    int on = !(nc && *nc) && cf_term_user_terminal(f);
    if (slot >= 0)
        auto_answer[slot] = (signed char)on;
    return on;
}

const char *cf_term_color(FILE *f, enum cf_color c)
{
    static const char *const codes[] = {
        [CF_RESET] = "\033[0m", [CF_BOLD] = "\033[1m",   [CF_DIM] = "\033[2m",
        [CF_RED] = "\033[31m",  [CF_GREEN] = "\033[32m", [CF_YELLOW] = "\033[33m",
        [CF_BLUE] = "\033[34m", [CF_CYAN] = "\033[36m",
    };
    if ((unsigned)c >= sizeof codes / sizeof codes[0] || !cf_term_color_enabled(f))
        return "";
    return codes[c];
}

static void fmt_duration(char *buf, size_t n, double s)
{
    if (s < 0)
        s = 0;
    long t = (long)(s + 0.5);
    snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

void cf_progress_start(struct cf_progress *p, FILE *f, long total)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->total = total;
    p->start = cf_now_seconds();
    p->tty = cf_term_user_terminal(f);
    p->plain_every = total > 40 ? (int)(total / 20) : 1;
}

void cf_progress_step(struct cf_progress *p, long done, const char *label)
{
    if (!p->f)
        return;
    p->done = done;
    double now = cf_now_seconds();
    double elapsed = now - p->start;
    char el[32], eta[32] = "?";
    fmt_duration(el, sizeof el, elapsed);
    if (done > 0 && p->total > 0 && done <= p->total)
        fmt_duration(eta, sizeof eta, elapsed / (double)done * (double)(p->total - done));
    int pct = p->total > 0 ? (int)(100.0 * (double)done / (double)p->total) : 0;
    if (p->tty) {
        if (now - p->last_draw < 0.1 && done < p->total)
            return;
        p->last_draw = now;
        /* the old line is overwritten with spaces, as git does: no escape
         * sequence, so --color=never means none at all */
        char line[256];
        int n = snprintf(line, sizeof line, "[%4ld/%ld] %3d%% %s elapsed, ETA %s  %.60s", done, p->total, pct, el,
                         eta, cli_safe(label));
        n = n < 0 ? 0 : n >= (int)sizeof line ? (int)sizeof line - 1 : n;
        fprintf(p->f, "\r%s%*s", line, p->drawn > n ? p->drawn - n : 0, "");
        p->drawn = n;
        fflush(p->f);
    } else if (p->plain_every > 0 && (done % p->plain_every == 0 || done == p->total)) {
        fprintf(p->f, "[%ld/%ld] %d%% %s elapsed, ETA %s %s\n", done, p->total, pct, el, eta, cli_safe(label));
    }
}

void cf_progress_finish(struct cf_progress *p)
{
    if (p->f && p->tty && p->drawn)
        fprintf(p->f, "\r%*s\r", p->drawn, "");
    p->drawn = 0;
}
