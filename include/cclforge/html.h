/* Building a self-contained HTML report (the library builds the document, the
 * CLI writes it): text and attributes escaped, inline CSS only, a Content
 * Security Policy that forbids every fetch, JSON embedded for tools. Every
 * report (smoke's matrix, doctor's hosts and topology) starts and ends here
 * so that they share one look and one escaping. */
#ifndef CCLFORGE_HTML_H
#define CCLFORGE_HTML_H

#include "cclforge/strbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Appends s as element text or a quoted attribute's value: & < > " ' escaped,
 * control bytes and invalid UTF-8 shown as U+FFFD (a host named "<script>" is text). */
void cf_html_text(struct strbuf *out, const char *s);
/* The same for a printf-formatted value. */
void cf_html_textf(struct strbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* <!doctype html> ... <body>: charset, viewport, a CSP of default-src 'none'
 * (inline style and script allowed, images only from data: URIs), the
 * shared stylesheet plus `extra_css` (NULL: none), and <h1>title</h1>. */
void cf_html_begin(struct strbuf *out, const char *title, const char *extra_css);
/* Embeds a JSON text for tools as <script type="application/json" id=ID>,
 * with "<" written as \u003c so no byte of it can end the element. */
void cf_html_json(struct strbuf *out, const char *id, const char *json);
/* An inline <script> of js, a script's whole text (ended by a newline if it
 * lacks one); the page must read well without it. */
void cf_html_script(struct strbuf *out, const char *js);
/* </body></html>. */
void cf_html_end(struct strbuf *out);

/* A sequential colour scale readable in greyscale and by colour-blind readers
 * (cividis: dark blue at 0 to yellow at 1, its lightness rising throughout),
 * t in [0, 1] (clamped; NaN reads as 0); "#rrggbb" into hex[8]. */
void cf_html_scale(double t, char hex[8]);

#ifdef __cplusplus
}
#endif
#endif
