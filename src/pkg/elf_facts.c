/* ELF facts for packaging, read through the project's ELF reader (cclforge/elf.h). */
#include "pkg/elf_facts.h"

#include <fcntl.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/dst.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "pkg/manylinux_policy.h"
#include "pkg/name_index.h"

/* GPU driver libraries come with the driver on the target host, never in a wheel. */
static const char *const gpu_driver_libs[] = {
    "libcuda.so", "libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1", "libamdhip64_driver",
    "libhsa-runtime64.so.1", "libhsakmt.so.1", "libdrm.so.2", "libdrm_amdgpu.so.1",
};

static const struct {
    unsigned machine;
    int big_endian;
    const char *arch;
} wheel_archs[] = {
    { EM_X86_64, 0, "x86_64" }, { EM_AARCH64, 0, "aarch64" }, { EM_PPC64, 0, "ppc64le" }, { EM_PPC64, 1, "ppc64" },
    { EM_S390, 1, "s390x" },    { EM_386, 0, "i686" },         { EM_ARM, 0, "armv7l" },    { EM_RISCV, 0, "riscv64" },
    { 258 /* EM_LOONGARCH */, 0, "loongarch64" },
};

int cf_elf_is_manylinux_system_lib(const char *soname)
{
    return cf_policy_lib_minor(soname) > 0;
}

int cf_elf_is_gpu_driver_lib(const char *soname)
{
    for (size_t i = 0; i < sizeof gpu_driver_libs / sizeof gpu_driver_libs[0]; i++)
        if (!strcmp(soname, gpu_driver_libs[i]))
            return 1;
    return 0;
}

const char *cf_elf_machine_wheel_arch(unsigned machine, int big_endian)
{
    for (size_t i = 0; i < sizeof wheel_archs / sizeof wheel_archs[0]; i++)
        if (wheel_archs[i].machine == machine && wheel_archs[i].big_endian == big_endian)
            return wheel_archs[i].arch;
    return NULL;
}

int cf_elf_rpath_is_origin_relative(const char *entry)
{
    if (entry[0] == '/')
        return 0;
    /* with "/" for $ORIGIN, exactly the entries that begin with it come out absolute */
    char *expanded = cf_dst_expand(entry, "/", NULL, NULL);
    int yes = expanded && expanded[0] == '/';
    free(expanded);
    return yes;
}

int cf_elf_glibc_version_code(const char *v)
{
    unsigned major = 0, minor = 0;
    char tail = 0;
    if (!v || !cf_starts_with(v, "GLIBC_"))
        return 0;
    int n = sscanf(v + 6, "%u.%u%c", &major, &minor, &tail);
    if (n < 2 || (n == 3 && tail != '.') || major > 9 || minor > 999)
        return 0;
    return (int)(major * 1000 + minor);
}

int cf_elf_facts_is_elf(const void *data, size_t len)
{
    return len >= 4 && !memcmp(data, "\177ELF", 4);
}

static int exported_definition(const struct cf_elf_symbol *sym)
{
    return sym->defined && (sym->bind == CF_BIND_GLOBAL || sym->bind == CF_BIND_WEAK) &&
           (sym->visibility == STV_DEFAULT || sym->visibility == STV_PROTECTED);
}

/* Fills f from an opened file through the project's one ELF reader. */
static int facts_from_elf(struct cf_elf *elf, struct elf_facts *f, cf_error *err)
{
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    f->is_elf = 1;
    f->machine = h->machine;
    f->type = h->type;
    f->is_64 = h->elf_class == 64;
    f->big_endian = h->big_endian;

    const struct cf_elf_dynamic *dyn = cf_elf_get_dynamic(elf);
    f->soname = cf_strdup(dyn->soname);
    for (size_t i = 0; i < dyn->n_needed; i++)
        cf_strvec_push(&f->needed, dyn->needed[i]);
    /* empty elements kept: to glibc an empty element is the current
     * directory (fillin_rpath); a wholly empty string is no path at all */
    if (dyn->rpath && *dyn->rpath)
        cf_strvec_split(&f->rpath, dyn->rpath, ":", 1);
    if (dyn->runpath) {
        if (*dyn->runpath)
            cf_strvec_split(&f->rpath, dyn->runpath, ":", 1);
        f->has_runpath = 1;
    }

    const struct cf_elf_verneed *needs;
    size_t n_needs;
    if (cf_elf_verneeds(elf, &needs, &n_needs, err) < 0)
        return -1;
    struct cf_name_index seen = CF_NAME_INDEX_INIT; /* a hostile file may repeat a version 100,000 times */
    for (size_t i = 0; i < n_needs; i++) {
        const char *file = needs[i].file ? needs[i].file : "";
        int is_loader = cf_starts_with(file, "ld-linux") || cf_starts_with(file, "ld64.so.");
        for (size_t v = 0; v < needs[i].n_versions; v++) {
            int code = cf_elf_glibc_version_code(needs[i].versions[v]);
            if (code > f->glibc_max)
                f->glibc_max = code;
            const char *name = needs[i].versions[v];
            if (!is_loader && name && cf_name_index_add(&seen, name, strlen(name), 0, NULL))
                cf_strvec_push(&f->versions, name);
        }
    }
    cf_name_index_release(&seen);

    const struct cf_elf_symbol *syms;
    size_t n_syms;
    if (cf_elf_dynsyms(elf, &syms, &n_syms, err) < 0)
        return -1;
    for (size_t i = 0; i < n_syms; i++)
        if (exported_definition(&syms[i]) && syms[i].name && cf_starts_with(syms[i].name, "PyInit_"))
            cf_strvec_push(&f->pyinit, syms[i].name);
    return 0;
}

int cf_elf_facts_read_memory(const void *data, size_t len, const char *name, struct elf_facts *f, cf_error *err)
{
    memset(f, 0, sizeof *f);
    if (!cf_elf_facts_is_elf(data, len))
        return 0;
    struct cf_elf *elf;
    if (cf_elf_open_memory(data, len, name, &elf, err) < 0)
        return -1;
    int rc = facts_from_elf(elf, f, err);
    cf_elf_close(elf);
    return rc;
}

/* 1 when path starts with the ELF magic, 0 when not, -1 when unreadable. */
static int file_is_elf(const char *path, cf_error *err)
{
    int fd = cf_open_regular(path, err);
    if (fd < 0)
        return -1;
    char magic[4] = { 0 };
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    close(fd);
    return got == 4 && cf_elf_facts_is_elf(magic, 4);
}

int cf_elf_facts_read_file(const char *path, struct elf_facts *f, cf_error *err)
{
    memset(f, 0, sizeof *f);
    int is_elf = file_is_elf(path, err);
    if (is_elf <= 0)
        return is_elf;
    struct cf_elf *elf;
    if (cf_elf_open(path, &elf, err) < 0)
        return -1;
    int rc = facts_from_elf(elf, f, err);
    cf_elf_close(elf);
    return rc;
}

void cf_elf_facts_release(struct elf_facts *f)
{
    free(f->soname);
    cf_strvec_clear(&f->needed);
    cf_strvec_clear(&f->rpath);
    cf_strvec_clear(&f->pyinit);
    cf_strvec_clear(&f->versions);
    memset(f, 0, sizeof *f);
}

int cf_elf_file_defines_symbol(const char *path, const char *needle, int exact, cf_error *err)
{
    struct cf_elf *elf;
    if (cf_elf_open(path, &elf, err) < 0)
        return -1;
    const struct cf_elf_symbol *syms;
    size_t n_syms;
    int found = -1;
    if (cf_elf_dynsyms(elf, &syms, &n_syms, err) == 0) {
        found = 0;
        for (size_t i = 0; i < n_syms && !found; i++) {
            const char *name = syms[i].name;
            if (exported_definition(&syms[i]) && name && (exact ? !strcmp(name, needle) : strstr(name, needle) != NULL))
                found = 1;
        }
    }
    cf_elf_close(elf);
    return found;
}

int cf_elf_symbols_needing(const char *path, const char *version, size_t max, struct strbuf *out, cf_error *err)
{
    struct cf_elf *elf;
    if (cf_elf_open(path, &elf, err) < 0)
        return -1;
    const struct cf_elf_symbol *syms;
    size_t n_syms, shown = 0;
    int rc = cf_elf_dynsyms(elf, &syms, &n_syms, err);
    for (size_t i = 0; rc == 0 && i < n_syms && shown < max; i++)
        if (!syms[i].defined && syms[i].name && syms[i].version && !strcmp(syms[i].version, version))
            cf_sb_addf(out, "%s%s", shown++ ? ", " : "", syms[i].name);
    cf_elf_close(elf);
    return rc;
}
