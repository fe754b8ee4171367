/* The survey's use of the loader emulation (cclforge/ldso.h, cclforge/symcheck.h). */
#include <stdlib.h>
#include <string.h>

#include "env/env_internal.h"

/* TODO(ldso): replaced by the ldso module's resolution once it lands. */
char *loader_resolve_default(const struct cf_survey_opts *opts, const char *soname)
{
    (void)opts;
    (void)soname;
    return NULL;
}

char *loader_resolve_in_closure(const char *path, const char *soname, int *needed)
{
    (void)path;
    (void)soname;
    *needed = 0;
    return NULL;
}

void closure_check(const char *path, struct strvec *missing, struct strvec *undefined)
{
    (void)path;
    (void)missing;
    (void)undefined;
}
