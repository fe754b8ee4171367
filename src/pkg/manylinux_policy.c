/* Lookups in the generated policy tables (sorted, so binary search). */
#include "pkg/manylinux_policy.h"

#include <stdlib.h>
#include <string.h>

#include "cclforge/strbuf.h"

struct version_key {
    const char *arch, *version;
};

static int cmp_version(const void *k, const void *row)
{
    const struct version_key *key = k;
    const struct cf_policy_version *r = row;
    int c = strcmp(key->arch, r->arch);
    return c ? c : strcmp(key->version, r->version);
}

static int cmp_lib(const void *k, const void *row)
{
    return strcmp(k, ((const struct cf_policy_lib *)row)->soname);
}

int cf_policy_version_minor(const char *arch, const char *version)
{
    struct version_key key = { arch ? arch : "", version };
    const struct cf_policy_version *hit =
        bsearch(&key, cf_policy_versions, cf_n_policy_versions, sizeof cf_policy_versions[0], cmp_version);
    if (hit)
        return hit->minor;
    /* auditwheel's family is the part before the first '_' */
    const char *us = strchr(version, '_');
    size_t flen = us ? (size_t)(us - version) : strlen(version);
    for (size_t i = 0; cf_policy_families[i][0]; i++)
        if (strlen(cf_policy_families[i]) == flen && !strncmp(cf_policy_families[i], version, flen))
            return 0;
    return -1;
}

int cf_policy_lib_minor(const char *soname)
{
    if (cf_starts_with(soname, "ld-linux") || cf_starts_with(soname, "ld64.so."))
        return cf_policies[0].minor;
    const struct cf_policy_lib *hit = bsearch(soname, cf_policy_libs, cf_n_policy_libs, sizeof cf_policy_libs[0], cmp_lib);
    return hit ? hit->minor : 0;
}

static int covers(const struct cf_policy *p, const char *arch)
{
    size_t n = strlen(arch);
    for (const char *a = p->archs; (a = strstr(a, arch)); a += n)
        if ((a == p->archs || a[-1] == ' ') && (a[n] == ' ' || a[n] == '\0'))
            return 1;
    return 0;
}

int cf_policy_for_tag(int tag_minor, const char *arch)
{
    int best = 0;
    for (size_t i = 0; i < cf_n_policies; i++)
        if (cf_policies[i].minor <= tag_minor && covers(&cf_policies[i], arch))
            best = cf_policies[i].minor;
    return best;
}

int cf_policy_oldest_from(int need_minor, const char *arch)
{
    for (size_t i = 0; i < cf_n_policies; i++)
        if (cf_policies[i].minor >= need_minor && covers(&cf_policies[i], arch))
            return cf_policies[i].minor;
    return 0;
}

int cf_policy_musl_lib(const char *soname)
{
    if (cf_starts_with(soname, "ld-musl-"))
        return 1;
    for (size_t i = 0; cf_musl_policy_libs[i][0]; i++)
        if (!strcmp(cf_musl_policy_libs[i], soname))
            return 1;
    return 0;
}
