/* What smoke and report write beyond smoke's text: the HTML report file and the
 * compact host x host matrix on the terminal, both from the run's JSON document. */
#ifndef CCLFORGE_CLI_SMOKE_OUT_H
#define CCLFORGE_CLI_SMOKE_OUT_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "cclforge/smoke_matrix.h"

/* Builds the report of doc (json_text: doc as written, embedded; NULL: printed
 * here; source: where doc came from, for messages) and writes it to path
 * atomically. An exit status; errors are printed as cmd's. */
int cli_smoke_report_write(const char *cmd, const cJSON *doc, const char *json_text, const char *source,
                           const char *path);

/* The matrix, one character a pair, when it fits the width of f's terminal
 * (COLUMNS, else TIOCGWINSZ, else 80); else the worst pairs as a list. Then
 * where the full report is (report_path), or how to get one. */
void cli_smoke_matrix_print(FILE *f, const struct cf_pair_matrix *m, const char *report_path);

#endif
