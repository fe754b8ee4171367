/* libFuzzer target for cf_html_text and cf_html_json (host names, values and
 * saved JSON documents are untrusted). Properties: the escaped text holds no
 * '<', '>', '"', '\'' and no '&' that does not start an entity; it is valid
 * UTF-8 without control bytes but tab and newline; the embedded JSON holds no '<'. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = cf_strndup((const char *)data, size);
    struct strbuf out = STRBUF_INIT;
    cf_html_text(&out, in);
    const char *s = cf_sb_str(&out);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '<' || c == '>' || c == '"' || c == '\'' || c == 0x7f || (c < 0x20 && c != '\n' && c != '\t'))
            abort();
        if (c == '&' && strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) &&
            strncmp(p, "&quot;", 6) && strncmp(p, "&#39;", 5))
            abort();
    }
    cf_sb_reset(&out);
    cf_html_json(&out, "doc", in);
    const char *body = strchr(cf_sb_str(&out), '>') + 1;
    const char *end = strstr(body, "</script>");
    if (!end || memchr(body, '<', (size_t)(end - body)))
        abort();
    cf_sb_release(&out);
    free(in);
    return 0;
}
