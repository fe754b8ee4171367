/* The one sanitiser for untrusted text on the way to a terminal or a log a
 * person reads: paths, sonames, banners, hostnames, GPU names, .active
 * contents, build output. Control characters (C0 but tab, DEL, the C1 range that
 * 8-bit terminals take as CSI) and bytes that are not UTF-8 are shown
 * escaped, so such text cannot move the cursor, retitle the window, clear the
 * screen or forge a line. JSON output needs none of this (cJSON escapes). */
#include "cli/cli.h"

#include <string.h>

#include "cclforge/strbuf.h"

/* Length of a valid UTF-8 sequence at p (overlong forms, surrogates and
 * values past U+10FFFF refused), 0 when invalid. */
static size_t utf8_len(const unsigned char *p, unsigned *cp)
{
    static const struct {
        unsigned char lead_mask, lead, n;
        unsigned min;
    } forms[] = { { 0xe0, 0xc0, 2, 0x80 }, { 0xf0, 0xe0, 3, 0x800 }, { 0xf8, 0xf0, 4, 0x10000 } };
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        if ((p[0] & forms[f].lead_mask) != forms[f].lead)
            continue;
        unsigned v = p[0] & (0x7fu >> forms[f].n);
        for (unsigned i = 1; i < forms[f].n; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            v = v << 6 | (p[i] & 0x3fu);
        }
        if (v < forms[f].min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
            return 0;
        *cp = v;
        return forms[f].n;
    }
    return 0;
}

void cli_escape(const char *s, int keep_newlines, struct strbuf *out)
{
    static const struct {
        char c;
        const char *shown;
    } named[] = { { '\n', "\\n" }, { '\r', "\\r" }, { '\033', "\\e" } };
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        if (*p == '\n' && keep_newlines) {
            /* A continuation line never starts at column 0, where it could pass for cclforge's own. */
            cf_sb_adds(out, p[1] == ' ' || p[1] == '\0' ? "\n" : "\n  ");
            p++;
            continue;
        }
        if ((*p >= 0x20 && *p < 0x7f) || *p == '\t') { /* a tab moves to a tab stop, nothing more */
            cf_sb_addc(out, (char)*p++);
            continue;
        }
        unsigned cp = 0;
        size_t n = *p >= 0x80 ? utf8_len(p, &cp) : 0;
        if (n && cp >= 0xa0) {
            cf_sb_add(out, p, n);
            p += n;
            continue;
        }
        const char *shown = NULL;
        for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
            if ((unsigned char)named[i].c == *p)
                shown = named[i].shown;
        if (shown)
            cf_sb_adds(out, shown);
        else if (n) /* C1 control, U+0080..U+009F */
            cf_sb_addf(out, "\\u%04x", cp);
        else
            cf_sb_addf(out, "\\x%02x", *p);
        p += n ? n : 1;
    }
}

/* A small ring, so one printf may take several (the CLI is single-threaded). */
#define SAFE_RING 16

static const char *in_ring(const char *s, int keep_newlines)
{
    static struct strbuf ring[SAFE_RING];
    static unsigned next;
    struct strbuf *sb = &ring[next++ % SAFE_RING];
    cf_sb_reset(sb);
    cli_escape(s, keep_newlines, sb);
    return cf_sb_str(sb);
}

const char *cli_safe(const char *s)
{
    return in_ring(s, 0);
}

const char *cli_safe_lines(const char *s)
{
    return in_ring(s, 1);
}
