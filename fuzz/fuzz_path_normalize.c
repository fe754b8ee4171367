/* libFuzzer target for cf_path_normalize (RPATH targets and archive member
 * names come from untrusted files). Properties: the result is absolute and
 * canonical (no empty, "." or ".." component, no trailing '/'), normalising
 * it again changes nothing, and only an input with ".." can climb out. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"

static int canonical(const char *p)
{
    if (p[0] != '/')
        return 0;
    if (!strcmp(p, "/"))
        return 1;
    for (const char *c = p; *c;) {
        c++; /* the '/' */
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += n;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = cf_strndup((const char *)data, size); /* stops at a NUL, as a C path does */
    int escaped = -1;
    char *out = cf_path_normalize(in, &escaped);
    if (!out || !canonical(out) || (escaped != 0 && escaped != 1) || (escaped && !strstr(in, "..")))
        abort();
    int again_escaped = -1;
    char *again = cf_path_normalize(out, &again_escaped);
    if (strcmp(again, out) || again_escaped)
        abort();
    free(again);
    free(out);
    free(in);
    return 0;
}
