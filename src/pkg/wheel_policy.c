/* The manylinux policy of the tag, as auditwheel holds wheels to it
 * (manylinux_policy.h): every symbol version of the C++ runtime and friends
 * (GLIBCXX_, CXXABI_, GCC_, ZLIB_, LIBATOMIC_) allowed by the tag's policy,
 * and every system library needed on its whitelist. GLIBC_2.X itself is the
 * glibc check's (PEP 600: manylinux_2_X allows GLIBC_2.X); GLIBC_PRIVATE,
 * which no policy allows, and GLIBC_ABI_DT_RELR (from manylinux_2_36) are here. Also the oldest
 * policy the symbol versions allow at all, auditwheel's "sym_tag". */
#include <stdlib.h>
#include <string.h>

#include "pkg/manylinux_policy.h"
#include "pkg/wheel_verify_internal.h"

static const char *member_arch(const struct verify_ctx *c, const struct vmember *m)
{
    const char *a = cf_elf_machine_wheel_arch(m->elf->machine, m->elf->big_endian);
    return a ? a : c->arch;
}

/* The oldest policy all symbol versions fit, into res->policy_needed:
 * "linux_<arch>" when some version is allowed by none. */
static void policy_needed(struct verify_ctx *c)
{
    int need = 0, none = 0;
    const char *arch = c->arch;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        for (size_t k = 0; m->elf && k < m->elf->versions.n; k++) {
            int v = cf_policy_version_minor(member_arch(c, m), m->elf->versions.v[k]);
            none |= v == 0;
            need = v > need ? v : need;
        }
        if (m->elf && !arch)
            arch = member_arch(c, m);
    }
    if (!c->n_elf || !arch)
        return;
    int policy = none ? 0 : cf_policy_oldest_from(need, arch);
    c->res->policy_needed = policy ? cf_asprintf("manylinux_2_%d_%s", policy, arch) : cf_asprintf("linux_%s", arch);
}

void cf_wheel_check_policy(struct verify_ctx *c)
{
    struct cf_wheel_verify_result *r = c->res;
    policy_needed(c);
    if (!c->n_elf) {
        cf_wheel_add_check(r, "policy", -1, "no native code");
        return;
    }
    if (!c->tag_minor || !c->arch) {
        cf_wheel_add_check(r, "policy", -1, "tag %s is held to no manylinux policy (the symbol versions fit %s)",
                           r->platform_tag, r->policy_needed ? r->policy_needed : "none");
        return;
    }
    int tag_policy = cf_policy_for_tag(c->tag_minor, c->arch);
    if (!tag_policy) {
        cf_wheel_add_check(r, "policy", 0, "no manylinux policy covers %s at glibc 2.%d", c->arch, c->tag_minor);
        return;
    }
    struct cf_wheel_problems bad = { STRBUF_INIT, 0 };
    size_t checked = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct vmember *m = &c->m[i];
        for (size_t k = 0; m->elf && k < m->elf->versions.n; k++) {
            const char *version = m->elf->versions.v[k];
            if (cf_elf_glibc_version_code(version))
                continue; /* GLIBC_2.X: the glibc check's; GLIBC_PRIVATE and GLIBC_ABI_DT_RELR are the table's */
            int first = cf_policy_version_minor(member_arch(c, m), version);
            if (first < 0)
                continue; /* a family no policy constrains (a bundled library's own) */
            checked++;
            if (first && first <= tag_policy)
                continue;
            struct strbuf syms = STRBUF_INIT;
            cf_error err = CF_ERROR_INIT;
            cf_elf_symbols_needing(m->placed, version, 2, &syms, &err);
            cf_error_clear(&err);
            if (first)
                cf_wheel_problem(&bad, "%s needs %s%s%s%s, which manylinux_2_%d does not allow: it needs manylinux_2_%d",
                                 m->shown, version, syms.len ? " (" : "", cf_sb_str(&syms), syms.len ? ")" : "",
                                 tag_policy, first);
            else
                cf_wheel_problem(&bad, "%s needs %s%s%s%s, which no manylinux policy allows", m->shown, version,
                                 syms.len ? " (" : "", cf_sb_str(&syms), syms.len ? ")" : "");
            cf_sb_release(&syms);
        }
    }
    for (size_t i = 0; i < c->syslibs.n; i++) {
        int first = cf_policy_lib_minor(c->syslibs.v[i]);
        if (first > tag_policy)
            cf_wheel_problem(&bad, "%s needs %s, a system library only from manylinux_2_%d on (the tag's policy is "
                                   "manylinux_2_%d)",
                             c->syslib_users.v[i], c->syslibs.v[i], first, tag_policy);
    }
    cf_wheel_report(r, "policy", &bad,
                    "%zu C++ runtime and library symbol versions and %zu system libraries within the policy of "
                    "manylinux_2_%d (auditwheel's table); the symbol versions fit %s",
                    checked, c->syslibs.n, tag_policy, r->policy_needed ? r->policy_needed : "any");
}
