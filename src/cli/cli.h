/* Shared helpers for the command files: errors, JSON output, exit codes. */
#ifndef CCLFORGE_CLI_H
#define CCLFORGE_CLI_H

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
/* 1 when argv[i] is -h or --help anywhere before a "--". */
int cli_wants_help(int argc, char **argv);

#endif
