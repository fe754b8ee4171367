/* Which inflater runs: the table of engines, fastest first, and the
 * environment switch. The one place the choice is made. */
#include "pkg/inflate_engine.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

static const struct {
    const char *name;
    int (*setup)(struct cf_inflate_engine *e, cf_error *err);
} engines[] = {
    { "isal", cf_inflate_isal_setup }, /* first: the faster where it can run */
    { "zlib", cf_inflate_zlib_setup },
};
#define N_ENGINES (sizeof engines / sizeof engines[0])

int cf_inflate_named(struct cf_inflate_engine *e, const char *name, cf_error *err)
{
    for (size_t i = 0; i < N_ENGINES; i++) {
        if (strcmp(name, engines[i].name))
            continue;
        cf_error why = CF_ERROR_INIT;
        if (engines[i].setup(e, &why) == 0)
            return 0;
        cf_error_set(err, CF_ERR_USAGE, "%s=%s: %s (unset it, or %s=zlib)", CF_INFLATE_ENV, name,
                     cf_error_message(&why), CF_INFLATE_ENV);
        cf_error_clear(&why);
        return -1;
    }
    struct strbuf names = STRBUF_INIT;
    for (size_t i = 0; i < N_ENGINES; i++)
        cf_sb_addf(&names, "%s, ", engines[i].name);
    cf_error_set(err, CF_ERR_USAGE, "%s=%s: the inflate engine for wheel verify is one of %sor auto", CF_INFLATE_ENV,
                 name, names.buf);
    cf_sb_release(&names);
    return -1;
}

int cf_inflate_pick(struct cf_inflate_engine *e, cf_error *err)
{
    const char *env = getenv(CF_INFLATE_ENV);
    if (env && *env && strcmp(env, "auto"))
        return cf_inflate_named(e, env, err);
    for (size_t i = 0; i < N_ENGINES; i++) {
        cf_error why = CF_ERROR_INIT; /* not available here: the next one */
        int rc = engines[i].setup(e, &why);
        cf_error_clear(&why);
        if (rc == 0)
            return 0;
    }
    /* zlib is linked and always sets up */
    return cf_error_set(err, CF_ERR_INTERNAL, "no inflate engine could start");
}
