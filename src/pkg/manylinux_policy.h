/* The manylinux policies as auditwheel defines them (data in
 * manylinux_policy_data.c, generated from auditwheel's manylinux-policy.json
 * by scripts/gen-manylinux-policy.py): which symbol versions (GLIBC_,
 * GLIBCXX_, CXXABI_, GCC_, ZLIB_, LIBATOMIC_) and which system libraries each
 * manylinux_2_X allows. The one home of these facts for the wheel writer, the
 * verifier and the bridge. Internal to src/pkg and src/bridge. */
#ifndef CCLFORGE_PKG_MANYLINUX_POLICY_H
#define CCLFORGE_PKG_MANYLINUX_POLICY_H

#include <stddef.h>

struct cf_policy_version {
    const char *arch;    /* "x86_64" */
    const char *version; /* "GLIBCXX_3.4.21" */
    int minor;                           /* the oldest policy allowing it: manylinux_2_<minor> */
};
struct cf_policy_lib {
    const char *soname;
    int minor;
};
struct cf_policy {
    int minor;
    const char *alias; /* "manylinux2014", or "" */
    const char *archs; /* space separated */
};

extern const struct cf_policy_version cf_policy_versions[];
extern const size_t cf_n_policy_versions;
extern const struct cf_policy_lib cf_policy_libs[];
extern const size_t cf_n_policy_libs;
extern const char *const cf_policy_families[]; /* ends with "" */
extern const struct cf_policy cf_policies[];
extern const size_t cf_n_policies;
extern const char *const cf_musl_policy_libs[]; /* ends with "" */

/* What the policies say about a symbol version needed on arch:
 *   > 0  the oldest policy allowing it (its glibc minor);
 *   0    its family is one the policies constrain, but no policy allows it
 *        (GLIBC_PRIVATE, a GLIBCXX_ newer than every policy);
 *  -1    a family no policy constrains (GFORTRAN_8, OPENSSL_3.0.0): not checked. */
int cf_policy_version_minor(const char *arch, const char *version);
/* The oldest policy whitelisting a system library, 0 when none does. The
 * dynamic loader itself (ld-linux-*.so.*, ld64.so.*) counts as whitelisted
 * by every policy, as auditwheel leaves it out. */
int cf_policy_lib_minor(const char *soname);
/* The policy a manylinux_2_<tag_minor> tag stands under on arch: the newest
 * policy at or below it that covers arch; 0 when none does. */
int cf_policy_for_tag(int tag_minor, const char *arch);
/* The oldest policy of arch at or above manylinux_2_<need_minor> (glibc 2.32
 * needed: manylinux_2_34, there being no 2_32 policy); 0 when none. The one
 * rule the writer's tag and the verifier's "policy needed" both follow. */
int cf_policy_oldest_from(int need_minor, const char *arch);
/* 1 when a musllinux policy whitelists soname ("libc.so", the musl loader, libz.so.1). */
int cf_policy_musl_lib(const char *soname);

#endif
