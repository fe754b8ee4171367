/* What smoke and report write beyond smoke's text: the HTML report file and the
 * compact host x host matrix on the terminal, both from the document's model. */
#ifndef CCLFORGE_CLI_SMOKE_OUT_H
#define CCLFORGE_CLI_SMOKE_OUT_H

#include <stdio.h>

#include "cclforge/smoke_doc.h"
#include "cclforge/smoke_matrix.h"

/* Writes the page of d and its matrix m (json_text: d as written, embedded) to
 * path atomically. An exit status; errors are printed as cmd's. */
int cli_smoke_report_write(const char *cmd, const struct cf_smoke_doc *d, const struct cf_pair_matrix *m,
                           const char *json_text, const char *path);

/* The matrix, one character a pair, when it fits the width of f's terminal
 * (COLUMNS, else TIOCGWINSZ, else 80); else the worst pairs as a list. Then
 * where the full report is (report_path), or how to get one. */
void cli_smoke_matrix_print(FILE *f, const struct cf_pair_matrix *m, const char *report_path);

#endif
