/* ISA-L, linked or loaded (isal_loader.h says when each). Loaded, the
 * library is opened each time an engine is set up (once per wheel verify:
 * dlopen of a library already loaded returns the same handle) and never
 * closed, as the functions stay in use; nothing is kept here.
 *
 * The layout of struct inflate_state is the one of the header compiled
 * against, and libisal.so.2 is the same package's library (libisal-dev
 * depends on the libisal2 of its own version); ISA-L has kept the soname
 * through layout changes (2.23, 2.24), never since (2.24-2.32.1 read alike). */
#include "pkg/isal_loader.h"

#ifdef CCLFORGE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <string.h>

/* struct cf_isal_api holds what the header compiled against declares */
#define SAME_TYPE(fn, field) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), __typeof__(((struct cf_isal_api *)0)->field)), \
                   #fn " is not declared as struct cf_isal_api's " #field)
SAME_TYPE(isal_inflate_init, inflate_init);
SAME_TYPE(isal_inflate, inflate);
SAME_TYPE(crc32_gzip_refl, crc32_gzip_refl);

#ifdef CCLFORGE_ISAL_LINKED
int cf_isal_resolve(struct cf_isal_api *api, cf_error *err)
{
    api->inflate_init = isal_inflate_init;
    api->inflate = isal_inflate;
    api->crc32_gzip_refl = crc32_gzip_refl;
    return 0;
}
#else
#include <dlfcn.h>

#define ISAL_SONAME "libisal.so.2"
#define VERSION(maj, min, patch) ((maj) * 0x10000u + (min) * 0x100u + (patch))

/* Releases whose inflate is known to be wrong on a CPU, and the first
 * right one. Which release is loaded can be asked from 2.32.0 on
 * (isal_get_version); an older one on such a CPU is not used. */
static const struct {
    const char *cpu;
    unsigned fixed;
    const char *why;
} known_bad[] = {
    /* intel/isa-l#316, fixed by a46e3f1: the aarch64 decoder ends a
     * non-final block as if it were the final one, so a member's data
     * stops short of its size */
    { "aarch64", VERSION(2, 32, 0), "its aarch64 inflate ends some streams early (intel/isa-l#316)" },
};

#if defined(__aarch64__)
#define THIS_CPU "aarch64"
#elif defined(__x86_64__)
#define THIS_CPU "x86_64"
#else
#define THIS_CPU "other"
#endif

static int symbol(void *lib, const char *name, void *out, cf_error *err)
{
    void *sym = dlsym(lib, name);
    if (!sym)
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s has no %s", ISAL_SONAME, name);
    memcpy(out, &sym, sizeof sym); /* an object pointer to a function pointer, as dlsym's users must */
    return 0;
}

/* -1 when the loaded release is one known_bad names for this CPU. */
static int release_fit(void *lib, cf_error *err)
{
    for (size_t i = 0; i < sizeof known_bad / sizeof known_bad[0]; i++) {
        if (strcmp(known_bad[i].cpu, THIS_CPU))
            continue;
        unsigned (*get_version)(void) = NULL;
        void *sym = dlsym(lib, "isal_get_version");
        if (sym)
            memcpy(&get_version, &sym, sizeof sym);
        if (!get_version)
            return cf_error_set(err, CF_ERR_NOTFOUND, "%s is a release before 2.32.0 (it has no isal_get_version): %s",
                                ISAL_SONAME, known_bad[i].why);
        unsigned v = get_version();
        if (v < known_bad[i].fixed)
            return cf_error_set(err, CF_ERR_NOTFOUND, "%s is %u.%u.%u: %s", ISAL_SONAME, v >> 16, (v >> 8) & 0xff,
                                v & 0xff, known_bad[i].why);
    }
    return 0;
}

int cf_isal_resolve(struct cf_isal_api *api, cf_error *err)
{
    void *lib = dlopen(ISAL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        return cf_error_set(err, CF_ERR_NOTFOUND, "%s cannot be loaded (%s): install libisal2 (Debian/Ubuntu) or isa-l",
                            ISAL_SONAME, why ? why : "not found");
    }
    if (symbol(lib, "isal_inflate_init", &api->inflate_init, err) < 0 ||
        symbol(lib, "isal_inflate", &api->inflate, err) < 0 ||
        symbol(lib, "crc32_gzip_refl", &api->crc32_gzip_refl, err) < 0 || release_fit(lib, err) < 0)
        return -1;
    return 0;
}
#endif

#endif
