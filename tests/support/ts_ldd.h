/* Comparing cclforge's loader emulation with the incumbent, ldd (tests only:
 * ldd runs the system loader in trace mode, which is what we compare against). */
#ifndef CCLFORGE_TS_LDD_H
#define CCLFORGE_TS_LDD_H

#include <stddef.h>

#include "cclforge/ldso.h"
#include "cclforge/strbuf.h"

/* One line of ldd output: "name => path", "name => not found", or "path". */
struct ts_ldd_line {
    char *name;
    char *path; /* NULL for "not found" */
};

struct ts_ldd {
    struct ts_ldd_line *lines;
    size_t n;
    int ran;          /* ldd ran and printed a dependency list */
    char *raw;        /* the whole output */
};

/* Runs `ldd file` with LD_LIBRARY_PATH set to llp (NULL: unset). vdso lines are dropped. */
int ts_ldd_run(const char *file, const char *llp, struct ts_ldd *out);
void ts_ldd_release(struct ts_ldd *l);

/* Compares a resolution with ldd's list: same objects in the same order, same
 * paths, same "not found" names. Returns NULL when equal, else a description
 * (caller frees). */
char *ts_ldd_compare(const struct cf_ldso_result *res, const struct ts_ldd *ldd);

#endif
