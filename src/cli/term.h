/* Terminal output for the CLI (the library never prints): colour and progress
 * lines, decided by --color and by whether a stream is the user's own terminal. */
#ifndef CCLFORGE_TERM_H
#define CCLFORGE_TERM_H

#include <stdio.h>

#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_color { CF_RESET, CF_BOLD, CF_DIM, CF_RED, CF_GREEN, CF_YELLOW, CF_BLUE, CF_CYAN };

/* --color's words, git's: auto (the default), always, never. */
enum cf_color_when { CF_COLOR_AUTO, CF_COLOR_ALWAYS, CF_COLOR_NEVER };

/* Takes every --color, --color=WHEN and --no-color out of argv[1..] (up to a
 * "--"), wherever it stands, so that each command's own parser never sees it;
 * the last one wins (as in git). --color alone is always, --no-color never.
 * Returns 0, or -1 with err (CF_ERR_USAGE) naming the option and the accepted
 * words when WHEN is none of them. */
int cf_term_take_color_option(int *argc, char **argv, cf_error *err);
void cf_term_set_color(enum cf_color_when when);

/* 1 when f is the user's own terminal: a terminal, TERM set and not "dumb"
 * (as git), and this process not a rank a launcher started (launch_mark.h:
 * under mpirun, srun or torchrun a rank's terminal is the launcher's). */
int cf_term_user_terminal(FILE *f);
/* always: 1; never: 0; auto: f is the user's terminal and NO_COLOR is unset
 * or empty (no-color.org). */
int cf_term_color_enabled(FILE *f);
/* The escape sequence for c, or "" when colour is off for f. */
const char *cf_term_color(FILE *f, enum cf_color c);
int cf_term_is_tty(FILE *f);

/* A one-line progress meter: "[ 12/340] 3% 0:12 elapsed, ETA 5:40  <label>",
 * redrawn in place on the user's terminal (cf_term_user_terminal; --color
 * does not change it), printed as plain lines every `plain_every` steps
 * otherwise. */
struct cf_progress {
    FILE *f;
    long total;
    long done;
    double start;
    double last_draw;
    int tty;
    int plain_every;
    int drawn; /* the length of the line drawn last (tty), to overwrite */
};
void cf_progress_start(struct cf_progress *p, FILE *f, long total);
void cf_progress_step(struct cf_progress *p, long done, const char *label);
void cf_progress_finish(struct cf_progress *p);

#ifdef __cplusplus
}
#endif
#endif
