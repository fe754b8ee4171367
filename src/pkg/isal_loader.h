/* ISA-L's inflate functions: linked (the release, a bundled build:
 * CCLFORGE_ISAL_LINKED) or found in libisal.so.2, loaded on first use (the
 * build from source: Debian ships ISA-L shared only, and a NEEDED library
 * would cost every start-up its loading). Internal to src/pkg. */
#ifndef CCLFORGE_PKG_ISAL_LOADER_H
#define CCLFORGE_PKG_ISAL_LOADER_H

#include "cclforge/error.h"
#include "pkg/inflate_engine.h"

/* Fills api; -1 with err saying why not (the library missing, a function
 * missing from it, a release known to inflate wrongly on this CPU). */
int cf_isal_resolve(struct cf_isal_api *api, cf_error *err);

#endif
