/* What `ldd -r` reports, without running anything: for a resolved closure,
 * undefined non-weak symbols no object in the global scope (load order) defines,
 * with glibc's symbol-version matching (elf/dl-lookup.c check_match), and
 * required versions the providing file does not define (elf/dl-version.c). */
#ifndef CCLFORGE_SYMCHECK_H
#define CCLFORGE_SYMCHECK_H

#include <stddef.h>

#include "cclforge/error.h"
#include "cclforge/ldso.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cf_symcheck_kind {
    CF_SYMCHECK_VERSION_NOT_FOUND, /* a verneed version the provider lacks */
    CF_SYMCHECK_UNDEFINED          /* a strong undefined symbol nothing defines */
};

struct cf_symcheck_problem {
    enum cf_symcheck_kind kind;
    char *symbol;    /* UNDEFINED: the symbol; NULL otherwise */
    char *version;   /* the version required, NULL for an unversioned reference */
    char *object;    /* path of the object that needs it */
    char *provider;  /* VERSION_NOT_FOUND: path of the file that should define the version */
    /* ldd's wording: "undefined symbol: NAME[, version V]\t(PATH)" or
     * "PATH: version `V' not found (required by PATH2)". */
    char *message;
};

struct cf_symcheck_result {
    struct cf_symcheck_problem *problems; /* versions first, then symbols in relocation order */
    size_t n_problems;
    size_t n_undefined, n_versions;
    size_t n_references;   /* undefined references examined */
    size_t n_definitions;  /* definitions hashed */
};

/* Checks every object of a closure from cf_ldso_resolve. Objects that cannot be
 * read are an error naming the file. */
int cf_symcheck_run(const struct cf_ldso_result *closure, struct cf_symcheck_result *out, cf_error *err);

struct cf_elf;
/* The same over objects the caller already opened: elves[i] is closure object
 * i, or NULL to have it opened here (and closed again). The caller keeps and
 * closes its own. Saves an open, mapping and header parse per object. */
int cf_symcheck_run_opened(const struct cf_ldso_result *closure, struct cf_elf *const *elves,
                           struct cf_symcheck_result *out, cf_error *err);
void cf_symcheck_result_release(struct cf_symcheck_result *res);

#ifdef __cplusplus
}
#endif
#endif
