/* Shared helpers for the command files: errors, JSON output, exit codes. */
#ifndef CCLFORGE_CLI_H
#define CCLFORGE_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cclforge/error.h"

enum { EXIT_FINE = 0, EXIT_PROBLEMS = 1, EXIT_USAGE = 2 };

/* "cclforge <cmd>: <message>" on stderr, red on a terminal. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints err and returns the exit code that fits its kind (usage -> 2, else 1). */
int cli_fail(const char *cmd, cf_error *err);
/* Prints a JSON document (pretty) on stdout followed by a newline and frees it. */
void cli_print_json(cJSON *doc);
/* Usage error: message plus a pointer to --help, returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints err as a usage error of cmd (cli_usage) and clears it; returns EXIT_USAGE. */
int cli_usage_fail(const char *cmd, cf_error *err);

/* The one parser of numeric flags (src/cli/cli_number.c): the whole text a
 * number from min to max, else -1 and err (CF_ERR_USAGE) says "<flag> '<text>':
 * expected <what> from <min> to <max>"; never clamped. cli_whole takes
 * digits, cli_decimal 1.5 and 1e3 too, cli_size bytes with K, M, G or T. */
int cli_whole(const char *flag, const char *what, const char *text, long long min, long long max, long long *out,
              cf_error *err);
int cli_decimal(const char *flag, const char *what, const char *text, double min, double max, double *out,
                cf_error *err);
int cli_size(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out, cf_error *err);

/* The line each command's --help gives the global --color (taken out of argv
 * by main, cf_term_take_color_option); pad aligns its description. */
#define CLI_HELP_COLOR(pad) "  --color[=WHEN]" pad "auto (default), always or never: see 'cclforge --help'\n"

/* 1 when argv[i] is -h or --help anywhere before a "--". */
int cli_wants_help(int argc, char **argv);


/* The cache root when it is usable (cf_cache_root_usable), checked once per
 * process; the first call warns on stderr when one is set but not used.
 * NULL: none. */
const char *cli_cache_root(void);
/* The end of a command's output (coreutils' close_stdout): stdio flushed
 * and checked, so output lost to a full disk or a closed descriptor is an
 * error on stderr and exit 1, never a silent 0. Returns the code to exit
 * with. */
int cli_finish_output(int code);
/* cli_error's "cannot write to standard output: <errno's reason>";
 * returns the exit code for it. */
int cli_output_failed(void);

struct strbuf;
/* Untrusted text made safe for a terminal (src/cli/safe_text.c): control
 * characters but tab and invalid UTF-8 shown escaped (\e, \n, \x01, \u009b). With
 * keep_newlines, '\n' stays and the next line is indented. */
void cli_escape(const char *s, int keep_newlines, struct strbuf *out);
/* The same on one line, in a ring of buffers valid for the next 15 calls
 * (several per printf are fine); NULL prints as "". */
const char *cli_safe(const char *s);
/* The same keeping line breaks (a log tail, a Dockerfile). */
const char *cli_safe_lines(const char *s);

#endif
