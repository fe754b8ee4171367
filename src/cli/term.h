/* Terminal output for the CLI (the library never prints): colour only on a terminal and never with NO_COLOR. */
#ifndef CCLFORGE_TERM_H
#define CCLFORGE_TERM_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cf_color { CF_RESET, CF_BOLD, CF_DIM, CF_RED, CF_GREEN, CF_YELLOW, CF_BLUE, CF_CYAN };

/* 1 when f is a terminal, NO_COLOR is unset and TERM is not "dumb". */
int cf_term_color_enabled(FILE *f);
/* The escape sequence for c, or "" when colour is off for f. */
const char *cf_term_color(FILE *f, enum cf_color c);
int cf_term_is_tty(FILE *f);

/* A one-line progress meter: "[ 12/340] 3% 0:12 elapsed, ETA 5:40  <label>",
 * redrawn in place on a terminal, printed as plain lines every `plain_every`
 * steps otherwise. */
struct cf_progress {
    FILE *f;
    long total;
    long done;
    double start;
    double last_draw;
    int tty;
    int plain_every;
};
void cf_progress_start(struct cf_progress *p, FILE *f, long total);
void cf_progress_step(struct cf_progress *p, long done, const char *label);
void cf_progress_finish(struct cf_progress *p);

#ifdef __cplusplus
}
#endif
#endif
