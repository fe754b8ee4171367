/* ELF facts for packaging, read with libelf (elfutils). */
#include "pkg/elf_facts.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"

/* The libraries a manylinux system provides (PEP 600 / auditwheel policy): a
 * wheel may need them without bundling. */
static const char *const manylinux_system_libs[] = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libgcc_s.so.1",
    "libstdc++.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libutil.so.1", "libnsl.so.1",
    "libcrypt.so.1", "libresolv.so.2", "libX11.so.6", "libXext.so.6", "libXrender.so.1", "libICE.so.6",
    "libSM.so.6", "libGL.so.1", "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0",
    "libz.so.1", "libexpat.so.1",
};

/* GPU driver libraries come with the driver on the target host, never in a wheel. */
static const char *const gpu_driver_libs[] = {
    "libcuda.so", "libcuda.so.1", "libnvidia-ml.so.1", "libnvidia-ptxjitcompiler.so.1", "libamdhip64_driver",
    "libhsa-runtime64.so.1", "libhsakmt.so.1", "libdrm.so.2", "libdrm_amdgpu.so.1",
};

static const struct {
    unsigned machine;
    const char *arch;
} wheel_archs[] = {
    { EM_X86_64, "x86_64" }, { EM_AARCH64, "aarch64" }, { EM_PPC64, "ppc64le" }, { EM_S390, "s390x" },
    { EM_386, "i686" },
};

int elf_is_manylinux_system_lib(const char *soname)
{
    for (size_t i = 0; i < sizeof manylinux_system_libs / sizeof manylinux_system_libs[0]; i++)
        if (!strcmp(soname, manylinux_system_libs[i]))
            return 1;
    return 0;
}

int elf_is_gpu_driver_lib(const char *soname)
{
    for (size_t i = 0; i < sizeof gpu_driver_libs / sizeof gpu_driver_libs[0]; i++)
        if (!strcmp(soname, gpu_driver_libs[i]))
            return 1;
    return 0;
}

const char *elf_machine_wheel_arch(unsigned machine)
{
    for (size_t i = 0; i < sizeof wheel_archs / sizeof wheel_archs[0]; i++)
        if (wheel_archs[i].machine == machine)
            return wheel_archs[i].arch;
    return NULL;
}

int elf_glibc_version_code(const char *v)
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

int elf_facts_is_elf(const void *data, size_t len)
{
    return len >= 4 && !memcmp(data, "\177ELF", 4);
}

static void split_path_list(struct strvec *out, const char *list)
{
    strvec_split(out, list, ":", 0);
}

static int read_dynamic(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct elf_facts *f)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || sh->sh_entsize == 0)
        return 0;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(d, (int)i, &dyn))
            break;
        if (dyn.d_tag == DT_NULL)
            break;
        const char *s = NULL;
        if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_SONAME || dyn.d_tag == DT_RPATH || dyn.d_tag == DT_RUNPATH) {
            s = elf_strptr(e, sh->sh_link, dyn.d_un.d_val);
            if (!s)
                continue; /* out-of-bounds string offset: skip rather than trust */
        }
        switch (dyn.d_tag) {
        case DT_NEEDED: strvec_push(&f->needed, s); break;
        case DT_SONAME: free(f->soname); f->soname = cf_strdup(s); break;
        case DT_RPATH: split_path_list(&f->rpath, s); break;
        case DT_RUNPATH: split_path_list(&f->rpath, s); f->has_runpath = 1; break;
        default: break;
        }
    }
    return 0;
}

/* Walks SHT_GNU_verneed records, each bounds-checked against the section. */
static void read_verneed(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct elf_facts *f)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf)
        return;
    size_t off = 0, size = d->d_size;
    for (size_t rec = 0; rec < sh->sh_info && off + sizeof(GElf_Verneed) <= size; rec++) {
        GElf_Verneed vn;
        if (!gelf_getverneed(d, (int)off, &vn))
            return;
        size_t aoff = off + vn.vn_aux;
        for (unsigned a = 0; a < vn.vn_cnt && aoff + sizeof(GElf_Vernaux) <= size; a++) {
            GElf_Vernaux va;
            if (!gelf_getvernaux(d, (int)aoff, &va))
                return;
            const char *name = elf_strptr(e, sh->sh_link, va.vna_name);
            int code = elf_glibc_version_code(name);
            if (code > f->glibc_max)
                f->glibc_max = code;
            if (va.vna_next == 0)
                break;
            aoff += va.vna_next;
        }
        if (vn.vn_next == 0)
            break;
        off += vn.vn_next;
    }
}

static int exported_definition(const GElf_Sym *sym)
{
    int bind = GELF_ST_BIND(sym->st_info), vis = GELF_ST_VISIBILITY(sym->st_other);
    return sym->st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
           (vis == STV_DEFAULT || vis == STV_PROTECTED);
}

static void read_pyinit(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct elf_facts *f)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || sh->sh_entsize == 0)
        return;
    size_t n = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym) || !exported_definition(&sym))
            continue;
        const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
        if (name && cf_starts_with(name, "PyInit_"))
            strvec_push(&f->pyinit, name);
    }
}

static int facts_from_elf(Elf *e, const char *name, struct elf_facts *f, cf_error *err)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(e, &eh))
        return cf_error_set(err, CF_ERR_FORMAT, "%s: not a readable ELF file (%s)", name, elf_errmsg(-1));
    f->is_elf = 1;
    f->machine = eh.e_machine;
    f->is_64 = gelf_getclass(e) == ELFCLASS64;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_DYNAMIC)
            read_dynamic(e, scn, &sh, f);
        else if (sh.sh_type == SHT_GNU_verneed)
            read_verneed(e, scn, &sh, f);
        else if (sh.sh_type == SHT_DYNSYM)
            read_pyinit(e, scn, &sh, f);
    }
    return 0;
}

int elf_facts_read_memory(const void *data, size_t len, const char *name, struct elf_facts *f, cf_error *err)
{
    memset(f, 0, sizeof *f);
    if (!elf_facts_is_elf(data, len))
        return 0;
    elf_version(EV_CURRENT);
    /* libelf wants a mutable buffer; it only reads from it with ELF_C_READ_MMAP-like memory use. */
    char *copy = cf_xmalloc(len ? len : 1);
    memcpy(copy, data, len);
    Elf *e = elf_memory(copy, len);
    int rc = -1;
    if (!e)
        cf_error_set(err, CF_ERR_FORMAT, "%s: cannot parse as ELF (%s)", name, elf_errmsg(-1));
    else
        rc = facts_from_elf(e, name, f, err);
    if (e)
        elf_end(e);
    free(copy);
    return rc;
}

int elf_facts_read_file(const char *path, struct elf_facts *f, cf_error *err)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cf_error_set(err, CF_ERR_IO, "cannot open %s", path);
    char magic[4] = { 0 };
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    if (got != 4 || !elf_facts_is_elf(magic, 4)) {
        close(fd);
        return 0;
    }
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc;
    if (!e)
        rc = cf_error_set(err, CF_ERR_FORMAT, "%s: cannot parse as ELF (%s)", path, elf_errmsg(-1));
    else
        rc = facts_from_elf(e, path, f, err);
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

void elf_facts_release(struct elf_facts *f)
{
    free(f->soname);
    strvec_clear(&f->needed);
    strvec_clear(&f->rpath);
    strvec_clear(&f->pyinit);
    memset(f, 0, sizeof *f);
}

int elf_file_defines_symbol(const char *path, const char *needle, int exact, cf_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cf_error_set(err, CF_ERR_IO, "cannot open %s", path);
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e)
            elf_end(e);
        close(fd);
        return cf_error_set(err, CF_ERR_FORMAT, "%s: not an ELF file", path);
    }
    int found = 0;
    Elf_Scn *scn = NULL;
    while (!found && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d)
            continue;
        size_t n = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < n && !found; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(d, (int)i, &sym) || !exported_definition(&sym))
                continue;
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            if (name && (exact ? !strcmp(name, needle) : strstr(name, needle) != NULL))
                found = 1;
        }
    }
    elf_end(e);
    close(fd);
    return found;
}
