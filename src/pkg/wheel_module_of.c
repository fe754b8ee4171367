/* The module an installed file is imported as: shared by the extension
 * check (wheel_native.c) and the bridge-module check (wheel_bridge.c). */
#include <string.h>

#include "pkg/wheel_verify_internal.h"

/* The dotted module an installed file would be imported as, or NULL when it
 * is not under site-packages: pkg/sub/_m.cpython-311-x86_64-linux-gnu.so -> pkg.sub._m */
char *cf_wheel_module_of(const char *installed)
{
    static const char site[] = CF_WHEEL_SITE_REL "/";
    if (strncmp(installed, site, sizeof site - 1))
        return NULL;
    char *mod = cf_strdup(installed + sizeof site - 1);
    char *base = strrchr(mod, '/');
    char *dot = strchr(base ? base + 1 : mod, '.');
    if (dot)
        *dot = '\0';
    for (char *p = mod; *p; p++)
        if (*p == '/')
            *p = '.';
    return mod;
}
