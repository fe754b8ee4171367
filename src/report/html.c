/* The shared frame and escaping of cclforge's HTML reports (cclforge/html.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/html.h"
#include "report/assets.h"

/* Length of the valid UTF-8 sequence at s (1-4), 0 when invalid (overlong,
 * surrogate, above U+10FFFF or cut short). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (n <= 1)
        return n;
    unsigned cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    static const unsigned least[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void cf_html_text(struct strbuf *out, const char *s)
{
    static const char *const named[128] = { ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;",
                                            ['\''] = "&#39;" };
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 1 && named[*p])
            cf_sb_adds(out, named[*p]);
        else if (n == 0 || (n == 1 && *p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
            cf_sb_adds(out, "\xef\xbf\xbd");
        else
            cf_sb_add(out, p, n);
        p += n ? n : 1;
    }
}

void cf_html_textf(struct strbuf *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = cf_vasprintf(fmt, ap);
    va_end(ap);
    cf_html_text(out, text);
    free(text);
}

void cf_html_begin(struct strbuf *out, const char *title, const char *extra_css)
{
    cf_sb_adds(out, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    cf_html_text(out, title);
    cf_sb_adds(out, "</title>\n<style>\n");
    cf_sb_adds(out, cf_report_frame_css);
    if (extra_css)
        cf_sb_adds(out, extra_css);
    cf_sb_adds(out, "</style></head>\n<body>\n<h1>");
    cf_html_text(out, title);
    cf_sb_adds(out, "</h1>\n");
}

void cf_html_json(struct strbuf *out, const char *id, const char *json)
{
    cf_sb_adds(out, "<script type=\"application/json\" id=\"");
    cf_html_text(out, id);
    cf_sb_adds(out, "\">");
    for (const char *p = json ? json : "null"; *p; p++) {
        if (*p == '<')
            cf_sb_adds(out, "\\u003c");
        else
            cf_sb_addc(out, *p);
    }
    cf_sb_adds(out, "</script>\n");
}

void cf_html_script(struct strbuf *out, const char *js)
{
    cf_sb_adds(out, "<script>\n");
    cf_sb_adds(out, js);
    if (!cf_ends_with(js, "\n"))
        cf_sb_addc(out, '\n');
    cf_sb_adds(out, "</script>\n");
}

void cf_html_end(struct strbuf *out) { cf_sb_adds(out, "</body></html>\n"); }

void cf_html_scale(double t, char hex[8])
{
    /* cividis at nine stops (Nuñez, Anderton & Renslow 2018) */
    static const unsigned char stops[][3] = {
        { 0x00, 0x22, 0x4e }, { 0x1f, 0x36, 0x6d }, { 0x4a, 0x4c, 0x6b }, { 0x66, 0x63, 0x70 }, { 0x7f, 0x7c, 0x75 },
        { 0x9c, 0x94, 0x76 }, { 0xba, 0xae, 0x6f }, { 0xda, 0xc9, 0x5f }, { 0xfd, 0xe7, 0x37 },
    };
    enum { LAST = sizeof stops / sizeof *stops - 1 };
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    double x = t * LAST;
    int i = (int)x;
    if (i >= LAST)
        i = LAST - 1;
    double f = x - i;
    unsigned char rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (unsigned char)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
    snprintf(hex, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}
