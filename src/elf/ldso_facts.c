/* The facts a resolution depends on besides the files: the target's glibc
 * release, read from the root's own loader or libc (or --glibc), and the CPU
 * (cpuid or --cpu) as GLIBC_TUNABLES leaves it. */
#include "ldso_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"

/* The root's glibc; a root without one (an unpacked package, a partial
 * sysroot) is taken to run this host's, and failing that the newest known. */
static void detect_glibc(unsigned machine, int elf_class, const char *root, struct cf_ldso_facts *f)
{
    const char *roots[] = { root, NULL };
    for (size_t r = 0; r < 2; r++) {
        if (r == 1 && !root)
            break;
        struct cf_ldso_platform p;
        if (cf_ldso_platform_for(machine, elf_class, roots[r], &p, NULL) != 0)
            continue;
        char *rooted = cf_ldso_rooted(roots[r], p.interp);
        char *interp = cf_ldso_host_path(roots[r], rooted);
        free(rooted);
        struct strvec dirs = STRVEC_INIT;
        for (char **d = p.system_dirs; *d; d++) {
            char *rd = cf_ldso_rooted(roots[r], *d);
            char *hd = cf_ldso_host_path(roots[r], rd);
            if (hd)
                cf_strvec_push(&dirs, hd);
            free(hd);
            free(rd);
        }
        char *source = NULL, *soname = NULL;
        int found = cf_glibc_detect(interp, (const char *const *)dirs.v, &f->glibc, &source, &soname) == 0;
        if (found && r == 0 && soname && strlen(soname) < sizeof f->loader_soname &&
            strlen(source) < sizeof f->loader_path) {
            memcpy(f->loader_soname, soname, strlen(soname) + 1);
            memcpy(f->loader_path, source, strlen(source) + 1);
        }
        free(soname);
        free(interp);
        cf_strvec_clear(&dirs);
        cf_ldso_platform_release(&p);
        if (found) {
            if (r == 0)
                snprintf(f->glibc_source, sizeof f->glibc_source, "%s", source);
            else
                snprintf(f->glibc_source, sizeof f->glibc_source, "assumed: %s has no glibc, this host's %s",
                         root, source);
            free(source);
            return;
        }
    }
    f->glibc = CF_GLIBC_NEWEST;
    snprintf(f->glibc_source, sizeof f->glibc_source, "assumed: no glibc found, the newest known (%u.%u)",
             f->glibc.major, f->glibc.minor);
}

void cf_ldso_cpu_as_loaded(struct cf_cpu_facts *cpu, struct cf_glibc release, const char *tunables)
{
    if (cf_glibc_follows(release, CF_GLIBC_ZHAOXIN_AVX_OFF))
        cf_cpu_apply_zhaoxin_quirk(cpu);
    int split = cf_glibc_follows(release, CF_GLIBC_TUNABLE_HWCAPS_SPLIT);
    if (split || cf_glibc_follows(release, CF_GLIBC_TUNABLE_HWCAPS))
        cf_cpu_apply_tunables(cpu, tunables,
                              cf_glibc_follows(release, CF_GLIBC_TUNABLE_TUNE_PREFIX) ? "glibc.tune.hwcaps"
                                                                                       : "glibc.cpu.hwcaps",
                              split);
}

int cf_ldso_facts_get(unsigned machine, int elf_class, const struct cf_ldso_opts *opts, struct cf_ldso_facts *out,
                      cf_error *err)
{
    if (opts->facts_cache && opts->facts_cache->filled) {
        *out = *opts->facts_cache;
        return 0;
    }
    memset(out, 0, sizeof *out);
    const char *root = opts->root && *opts->root && strcmp(opts->root, "/") != 0 ? opts->root : NULL;
    if (opts->glibc) {
        if (cf_glibc_parse(opts->glibc, &out->glibc, err) != 0)
            return -1;
        snprintf(out->glibc_source, sizeof out->glibc_source, "--glibc %s", opts->glibc);
    } else {
        detect_glibc(machine, elf_class, root, out);
    }
    struct cf_cpu_facts host;
    cf_cpu_probe(&host);
    if (opts->cpu) {
        if (cf_cpu_parse(opts->cpu, &host, &out->cpu_probed, err) != 0)
            return -1;
    } else {
        out->cpu_probed = host;
    }
    out->cpu = out->cpu_probed;
    cf_ldso_cpu_as_loaded(&out->cpu, out->glibc, opts->tunables ? opts->tunables : getenv("GLIBC_TUNABLES"));
    out->filled = 1;
    if (opts->facts_cache)
        *opts->facts_cache = *out;
    return 0;
}
