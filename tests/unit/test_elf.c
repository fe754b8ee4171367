/* The ELF reader against real fixtures compiled here (shared libraries with
 * SONAME, NEEDED, RPATH/RUNPATH, NODEFLIB and symbol versions; an executable with
 * versioned undefined references; a -m32 library), a hand-made big-endian ELF64,
 * and broken input: truncations, corruptions, non-ELF files. */
#include "testsupport.h"

#include <elf.h>
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CF_TEST_HAS_ASAN 1
#endif
#endif
#ifndef CF_TEST_HAS_ASAN
#define CF_TEST_HAS_ASAN 0
#endif

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

/* Fixtures built once for the whole group. */
struct fixtures {
    char *dir;
    char *libdep;    /* plain library without SONAME */
    char *libdemo;   /* SONAME, NEEDED x3, RPATH, NODEFLIB, foo@V1 foo@@V2 bar@@V1 */
    char *librun;    /* RUNPATH via --enable-new-dtags */
    char *exe;       /* undefined foo@V2, bar@V1 (weak), GLIBC_* */
    char *lib32;     /* -m32, or NULL when the toolchain cannot */
};
static struct fixtures fx;

static const char dep_src[] = "int dep(void) { return 7; }\n";
static const char demo_src[] =
    "int dep(void);\n"
    "int foo_v1(void) { return 1; }\n"
    "int foo_v2(void) { return 2 + dep(); }\n"
    "int bar(void) { return 3; }\n"
    "__asm__(\".symver foo_v1,foo@V1\");\n"
    "__asm__(\".symver foo_v2,foo@@V2\");\n";
static const char demo_map[] = "V1 { global: foo; bar; local: *; };\nV2 { global: foo; } V1;\n";
static const char main_src[] =
    "#include <stdio.h>\n"
    "int foo(void);\n"
    "extern int bar(void) __attribute__((weak));\n"
    "int main(void) { printf(\"%d\\n\", foo() + (bar ? bar() : 0)); return 0; }\n";

static int build_fixtures(void **state)
{
    fx.dir = ts_tmpdir();
    fx.libdep = cf_path_join(fx.dir, "libdep.so");
    fx.libdemo = cf_path_join(fx.dir, "libdemo.so");
    fx.librun = cf_path_join(fx.dir, "librun.so");
    fx.exe = cf_path_join(fx.dir, "main");
    char *map = ts_write(fx.dir, "demo.map", demo_map);
    char *vs = cf_asprintf("-Wl,--version-script=%s", map);
    char *ldir = cf_asprintf("-L%s", fx.dir);
    char *rlink = cf_asprintf("-Wl,-rpath-link,%s", fx.dir);

    ts_cc(fx.dir, fx.libdep, dep_src, "-shared", "-fPIC", NULL);
    ts_cc(fx.dir, fx.libdemo, demo_src, "-shared", "-fPIC", "-Wl,-soname,libdemo.so.1", vs,
          "-Wl,--disable-new-dtags,-rpath,/opt/rp1:$ORIGIN/../lib", "-Wl,-z,nodefaultlib", ldir, "-ldep",
          "-Wl,--no-as-needed", "-lm", NULL);
    ts_cc(fx.dir, fx.librun, dep_src, "-shared", "-fPIC", "-Wl,-soname,librun.so",
          "-Wl,--enable-new-dtags,-rpath,/opt/rn:$ORIGIN", NULL);
    ts_cc(fx.dir, fx.exe, main_src, ldir, "-ldemo", rlink, NULL);

    /* -m32 needs gcc-multilib; without it the 32-bit case is skipped, not passed. */
    char *lib32 = cf_path_join(fx.dir, "lib32.so");
    char *src32 = ts_write(fx.dir, "lib32.c", dep_src);
    const char *cc = getenv("CC");
    const char *argv[] = { cc && *cc ? cc : "cc", "-m32", "-shared", "-fPIC", "-Wl,-soname,lib32.so.3",
                           "-o", lib32, src32, NULL };
    if (ts_run(argv) == 0)
        fx.lib32 = lib32;
    else
        free(lib32);
    free(vs);
    free(ldir);
    free(rlink);
    return 0;
}

static int remove_fixtures(void **state)
{
    free(fx.libdep);
    free(fx.libdemo);
    free(fx.librun);
    free(fx.exe);
    free(fx.lib32);
    ts_cleanup();
    return 0;
}

static struct cf_elf *open_ok(const char *path)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(path, &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    return elf;
}

static const struct cf_elf_symbol *find_sym(const struct cf_elf_symbol *syms, size_t n, const char *name,
                                            const char *version)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(syms[i].name, name) && (!version || (syms[i].version && !strcmp(syms[i].version, version))))
            return &syms[i];
    return NULL;
}

static void read_file_bytes(const char *path, uint8_t **data, size_t *len)
{
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_read_file(path, 64u << 20, &sb, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    *len = sb.len;
    *data = (uint8_t *)cf_sb_detach(&sb);
}

/* A dynamic string table whose last byte is not a NUL: its last string ends
 * outside the table, so a name pointing at it is refused (it is not read on
 * into the next section). Every name handed out ends inside the table. */
/* A .dynsym whose sh_size runs far past the end of the file (found by
 * fuzz_elf: 824 bytes claiming 0xfffffffa0048) sizes nothing: the relocation
 * marks are sized by the bytes the section has in the file, and a section
 * outside the file is a fault naming it. */
static void test_relocation_marks_sized_by_the_file(void **state)
{
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.libdemo, &data, &len);
    struct cf_elf *elf = open_ok(fx.libdemo);
    const struct cf_elf_section *dynsym = cf_elf_section_by_name(elf, ".dynsym");
    assert_non_null(dynsym);
    size_t index = 0;
    for (size_t i = 0; i < cf_elf_section_count(elf); i++)
        if (cf_elf_section_at(elf, i) == dynsym)
            index = i;
    cf_elf_close(elf);
    Elf64_Ehdr eh;
    memcpy(&eh, data, sizeof eh);
    uint64_t shoff = eh.e_shoff;
    unsigned shentsize = eh.e_shentsize;
    Elf64_Shdr sh;
    memcpy(&sh, data + shoff + (size_t)index * shentsize, sizeof sh);
    sh.sh_size = 0xfffffffa0048ull;
    memcpy(data + shoff + (size_t)index * shentsize, &sh, sizeof sh);
    struct cf_elf *bad = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, len, "dynsym-past-eof.so", &bad, &err) == 0) {
        const uint8_t *marks;
        size_t n;
        assert_int_equal(cf_elf_relocated_symbols(bad, &marks, &n, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), "dynsym-past-eof.so"));
        assert_non_null(strstr(cf_error_message(&err), ".dynsym"));
        cf_elf_close(bad);
    } else {
        assert_non_null(strstr(cf_error_message(&err), "dynsym-past-eof.so"));
    }
    cf_error_clear(&err);
    free(data);
}

static void test_unterminated_string_table(void **state)
{
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.libdemo, &data, &len);
    struct cf_elf *elf = open_ok(fx.libdemo);
    const struct cf_elf_section *dynstr = cf_elf_section_by_name(elf, ".dynstr");
    assert_non_null(dynstr);
    uint64_t start = dynstr->offset, size = dynstr->size;
    assert_int_equal(data[start + size - 1], 0);
    /* the last string of the table: its first byte follows the previous NUL */
    size_t last = (size_t)(size - 2);
    while (last > 0 && data[start + last - 1] != 0)
        last--;
    const char *last_name = (const char *)data + start + last;
    const struct cf_elf_symbol *syms;
    size_t n;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_dynsyms(elf, &syms, &n, &err), 0);
    int last_is_symbol = find_sym(syms, n, last_name, NULL) != NULL;
    cf_elf_close(elf);

    data[start + size - 1] = 'X';
    struct cf_elf *bad = NULL;
    if (cf_elf_open_memory(data, len, "unterminated", &bad, &err) != 0) {
        /* the RPATH (libdemo's last string) is refused at open */
        assert_non_null(strstr(cf_error_message(&err), "string table"));
        cf_error_clear(&err);
    } else {
        /* a symbol name, then: refused when the symbols are read */
        assert_true(last_is_symbol);
        assert_int_not_equal(cf_elf_dynsyms(bad, &syms, &n, &err), 0);
        assert_non_null(strstr(cf_error_message(&err), "string table"));
        cf_error_clear(&err);
    }
    print_message("note: the table's last string '%s' is %sa symbol name; open %s\n", last_name,
                  last_is_symbol ? "" : "not ", bad ? "succeeded" : "refused");
    cf_elf_close(bad);
    free(data);
}

static void test_shared_library_dynamic(void **state)
{
    struct cf_elf *elf = open_ok(fx.libdemo);
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    assert_int_equal(h->elf_class, 64);
    assert_int_equal(h->big_endian, 0);
    assert_int_equal(h->type, ET_DYN);
    assert_int_equal(h->machine, EM_X86_64);
    assert_string_equal(cf_elf_machine_name(h->machine), "x86-64");
    assert_string_equal(cf_elf_kind_name(h), "ELF64 LSB");

    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    assert_true(d->has_dynamic);
    assert_string_equal(d->soname, "libdemo.so.1");
    assert_int_equal(d->n_needed, 3);
    assert_string_equal(d->needed[0], "libdep.so");
    assert_string_equal(d->needed[1], "libm.so.6");
    assert_string_equal(d->needed[2], "libc.so.6");
    assert_string_equal(d->rpath, "/opt/rp1:$ORIGIN/../lib");
    assert_null(d->runpath);
    assert_true(d->flags_1 & DF_1_NODEFLIB);
    assert_null(d->interp);

    /* Sections are named from .shstrtab and their bytes come from the file. */
    const struct cf_elf_section *dynstr = cf_elf_section_by_name(elf, ".dynstr");
    assert_non_null(dynstr);
    assert_int_equal(dynstr->type, SHT_STRTAB);
    const uint8_t *bytes;
    size_t len;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_section_bytes(elf, dynstr, &bytes, &len, &err), 0);
    assert_int_equal(len, dynstr->size);
    assert_non_null(memmem(bytes, len, "libdemo.so.1", 13));
    assert_null(cf_elf_section_by_name(elf, ".no-such-section"));
    assert_true(cf_elf_section_count(elf) > 10);
    assert_true(cf_elf_segment_count(elf) > 2);
    cf_elf_close(elf);
}

static void test_runpath_library(void **state)
{
    struct cf_elf *elf = open_ok(fx.librun);
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    assert_string_equal(d->runpath, "/opt/rn:$ORIGIN");
    assert_null(d->rpath);
    assert_string_equal(d->soname, "librun.so");
    assert_int_equal(d->flags_1 & DF_1_NODEFLIB, 0);
    cf_elf_close(elf);

    /* No SONAME: the field stays NULL rather than "". */
    elf = open_ok(fx.libdep);
    assert_null(cf_elf_get_dynamic(elf)->soname);
    cf_elf_close(elf);
}

static void test_version_definitions(void **state)
{
    struct cf_elf *elf = open_ok(fx.libdemo);
    cf_error err = CF_ERROR_INIT;
    const char *const *defs;
    size_t n;
    assert_int_equal(cf_elf_verdefs(elf, &defs, &n, &err), 0);
    assert_int_equal(n, 2); /* the base entry (libdemo.so.1) is left out */
    assert_string_equal(defs[0], "V1");
    assert_string_equal(defs[1], "V2");

    const struct cf_elf_symbol *syms;
    assert_int_equal(cf_elf_dynsyms(elf, &syms, &n, &err), 0);
    const struct cf_elf_symbol *foo2 = find_sym(syms, n, "foo", "V2");
    const struct cf_elf_symbol *foo1 = find_sym(syms, n, "foo", "V1");
    const struct cf_elf_symbol *bar = find_sym(syms, n, "bar", NULL);
    const struct cf_elf_symbol *dep = find_sym(syms, n, "dep", NULL);
    assert_non_null(foo2);
    assert_non_null(foo1);
    assert_non_null(bar);
    assert_non_null(dep);
    assert_true(foo2->defined && !foo2->version_hidden);  /* foo@@V2 */
    assert_true(foo1->defined && foo1->version_hidden);   /* foo@V1 */
    assert_null(foo1->version_file);
    assert_string_equal(bar->version, "V1");
    assert_int_equal(bar->bind, CF_BIND_GLOBAL);
    assert_int_equal(bar->type, STT_FUNC);
    assert_int_equal(bar->visibility, STV_DEFAULT);
    assert_false(dep->defined);
    assert_null(dep->version);   /* unversioned reference */
    /* The null symbol (index 0) is not reported. */
    for (size_t i = 0; i < n; i++)
        assert_true(syms[i].name[0] != '\0');

    const struct cf_elf_verneed *needs;
    assert_int_equal(cf_elf_verneeds(elf, &needs, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(needs[0].file, "libc.so.6");
    assert_true(cf_starts_with(needs[0].versions[0], "GLIBC_"));
    cf_elf_close(elf);
}

static void test_executable_references(void **state)
{
    struct cf_elf *elf = open_ok(fx.exe);
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    assert_non_null(d->interp);
    assert_true(cf_ends_with(d->interp, ".so.2") || cf_ends_with(d->interp, ".so.1"));
    assert_int_equal(d->n_needed, 2);
    assert_string_equal(d->needed[0], "libdemo.so.1");
    assert_string_equal(d->needed[1], "libc.so.6");

    cf_error err = CF_ERROR_INIT;
    const struct cf_elf_symbol *syms;
    size_t n;
    assert_int_equal(cf_elf_dynsyms(elf, &syms, &n, &err), 0);
    const struct cf_elf_symbol *foo = find_sym(syms, n, "foo", NULL);
    assert_non_null(foo);
    assert_false(foo->defined);
    assert_string_equal(foo->version, "V2");
    assert_string_equal(foo->version_file, "libdemo.so.1");
    assert_false(foo->version_hidden);
    const struct cf_elf_symbol *bar = find_sym(syms, n, "bar", NULL);
    assert_int_equal(bar->bind, CF_BIND_WEAK);
    assert_string_equal(bar->version, "V1");
    const struct cf_elf_symbol *printf_sym = find_sym(syms, n, "printf", NULL);
    assert_non_null(printf_sym);
    assert_true(cf_starts_with(printf_sym->version, "GLIBC_2."));
    assert_string_equal(printf_sym->version_file, "libc.so.6");

    const struct cf_elf_verneed *needs;
    assert_int_equal(cf_elf_verneeds(elf, &needs, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(needs[0].file, "libdemo.so.1");
    assert_int_equal(needs[0].n_versions, 2);
    assert_string_equal(needs[1].file, "libc.so.6");
    for (size_t i = 0; i < needs[1].n_versions; i++)
        assert_true(cf_starts_with(needs[1].versions[i], "GLIBC_2."));
    const char *const *defs;
    assert_int_equal(cf_elf_verdefs(elf, &defs, &n, &err), 0);
    assert_int_equal(n, 0);
    cf_elf_close(elf);
}

/* GNU ld never marks a requirement weak for us, so the flag is set in a copy of
 * the real executable: vna_flags of its first requirement. */
static void test_weak_version_requirement(void **state)
{
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.exe, &data, &len);
    struct cf_elf *elf = open_ok(fx.exe);
    const struct cf_elf_section *vr = cf_elf_section_by_name(elf, ".gnu.version_r");
    assert_non_null(vr);
    const Elf64_Verneed *vn = (const Elf64_Verneed *)(data + vr->offset);
    Elf64_Vernaux *aux = (Elf64_Vernaux *)(data + vr->offset + vn->vn_aux);
    aux->vna_flags |= VER_FLG_WEAK;
    cf_elf_close(elf);

    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_open_memory(data, len, "patched", &elf, &err), 0);
    const struct cf_elf_verneed *needs;
    size_t n;
    assert_int_equal(cf_elf_verneeds(elf, &needs, &n, &err), 0);
    assert_int_equal(needs[0].weak[0], 1);
    assert_int_equal(needs[0].weak[1], 0);
    assert_int_equal(needs[1].weak[0], 0);
    cf_elf_close(elf);
    free(data);
}

static void test_elf32_library(void **state)
{
    if (!fx.lib32) {
        print_message("skipped: cc -m32 failed (install gcc-multilib, listed in scripts/deps.sh)\n");
        skip();
    }
    struct cf_elf *elf = open_ok(fx.lib32);
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    assert_int_equal(h->elf_class, 32);
    assert_int_equal(h->machine, EM_386);
    assert_string_equal(cf_elf_kind_name(h), "ELF32 LSB");
    assert_string_equal(cf_elf_get_dynamic(elf)->soname, "lib32.so.3");
    const struct cf_elf_symbol *syms;
    size_t n;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_dynsyms(elf, &syms, &n, &err), 0);
    const struct cf_elf_symbol *dep = find_sym(syms, n, "dep", NULL);
    assert_non_null(dep);
    assert_true(dep->defined);
    cf_elf_close(elf);
}

/* ---- a hand-made ELF64 in either byte order ------------------------------ */

struct image {
    uint8_t *b;
    size_t len;
    int be;
};

static void put(struct image *im, size_t off, uint64_t v, int width)
{
    assert_true(off + (size_t)width <= im->len);
    for (int i = 0; i < width; i++) {
        int shift = im->be ? 8 * (width - 1 - i) : 8 * i;
        im->b[off + (size_t)i] = (uint8_t)(v >> shift);
    }
}

/* Layout of the head of the image; sections follow at these offsets. */
enum {
    OFF_DYNSTR = 0x40, OFF_DYNSYM = 0xc0, OFF_VERSYM = 0x110, OFF_VERNEED = 0x118,
    OFF_DYNAMIC = 0x140, OFF_SHSTRTAB = 0x190, OFF_BIG = 0x200, N_SECTIONS = 8,
};
static const char hm_dynstr[] = "\0libbe.so.1\0libneed.so.2\0/opt/be/lib\0foo\0bar\0V_BE";
enum { S_SONAME = 1, S_NEED = 12, S_RUNPATH = 25, S_FOO = 37, S_BAR = 41, S_VBE = 45 };
static const char hm_shstr[] = "\0.dynstr\0.dynsym\0.gnu.version\0.gnu.version_r\0.dynamic\0.big\0.shstrtab";
enum { N_DYNSTR = 1, N_DYNSYM = 9, N_VERSYM = 17, N_VERNEED = 30, N_DYNAMIC = 45, N_BIG = 54, N_SHSTR = 59 };

static uint64_t shoff_of(uint64_t gap) { return OFF_BIG + gap; }

static void put_shdr(struct image *im, uint64_t shoff, int i, uint32_t name, uint32_t type, uint64_t off,
                     uint64_t size, uint32_t link, uint32_t info, uint64_t entsize)
{
    size_t s = (size_t)shoff + (size_t)i * 64;
    put(im, s + 0, name, 4);
    put(im, s + 4, type, 4);
    put(im, s + 24, off, 8);
    put(im, s + 32, size, 8);
    put(im, s + 40, link, 4);
    put(im, s + 44, info, 4);
    put(im, s + 48, 8, 8);
    put(im, s + 56, entsize, 8);
}

/* Builds the head (everything before .big) and, separately, the section table
 * that goes after a gap of `gap` bytes. Returns the full image when gap is 0. */
static struct image make_image(int be, uint64_t gap, struct image *table)
{
    struct image im = { cf_xcalloc(1, OFF_BIG), OFF_BIG, be };
    memcpy(im.b, "\177ELF", 4);
    im.b[EI_CLASS] = ELFCLASS64;
    im.b[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
    im.b[EI_VERSION] = EV_CURRENT;
    put(&im, 16, ET_DYN, 2);
    put(&im, 18, be ? EM_PPC64 : EM_X86_64, 2);
    put(&im, 20, EV_CURRENT, 4);
    put(&im, 40, shoff_of(gap), 8); /* e_shoff */
    put(&im, 52, 64, 2);            /* e_ehsize */
    put(&im, 58, 64, 2);            /* e_shentsize */
    put(&im, 60, N_SECTIONS, 2);
    put(&im, 62, 7, 2);             /* e_shstrndx */

    memcpy(im.b + OFF_DYNSTR, hm_dynstr, sizeof hm_dynstr);
    memcpy(im.b + OFF_SHSTRTAB, hm_shstr, sizeof hm_shstr);
    /* .dynsym: null, foo (defined, absolute), bar (undefined, needs V_BE). */
    put(&im, OFF_DYNSYM + 24, S_FOO, 4);
    im.b[OFF_DYNSYM + 24 + 4] = (STB_GLOBAL << 4) | STT_FUNC;
    put(&im, OFF_DYNSYM + 24 + 6, SHN_ABS, 2);
    put(&im, OFF_DYNSYM + 48, S_BAR, 4);
    im.b[OFF_DYNSYM + 48 + 4] = (STB_GLOBAL << 4) | STT_FUNC;
    /* .gnu.version: 0, 1 (global), 2 (V_BE from libneed.so.2). */
    put(&im, OFF_VERSYM + 2, 1, 2);
    put(&im, OFF_VERSYM + 4, 2, 2);
    /* .gnu.version_r: one file, one weak version. */
    put(&im, OFF_VERNEED + 0, 1, 2);  /* vn_version */
    put(&im, OFF_VERNEED + 2, 1, 2);  /* vn_cnt */
    put(&im, OFF_VERNEED + 4, S_NEED, 4);
    put(&im, OFF_VERNEED + 8, 16, 4); /* vn_aux */
    put(&im, OFF_VERNEED + 16 + 4, VER_FLG_WEAK, 2);
    put(&im, OFF_VERNEED + 16 + 6, 2, 2);      /* vna_other */
    put(&im, OFF_VERNEED + 16 + 8, S_VBE, 4);  /* vna_name */
    /* .dynamic */
    static const uint64_t dyn[][2] = {
        { DT_NEEDED, S_NEED }, { DT_SONAME, S_SONAME }, { DT_RUNPATH, S_RUNPATH },
        { DT_FLAGS_1, DF_1_NODEFLIB }, { DT_NULL, 0 },
    };
    for (size_t i = 0; i < 5; i++) {
        put(&im, OFF_DYNAMIC + 16 * i, dyn[i][0], 8);
        put(&im, OFF_DYNAMIC + 16 * i + 8, dyn[i][1], 8);
    }

    struct image t = { cf_xcalloc(1, N_SECTIONS * 64), N_SECTIONS * 64, be };
    put_shdr(&t, 0, 1, N_DYNSTR, SHT_STRTAB, OFF_DYNSTR, sizeof hm_dynstr, 0, 0, 0);
    put_shdr(&t, 0, 2, N_DYNSYM, SHT_DYNSYM, OFF_DYNSYM, 72, 1, 1, 24);
    put_shdr(&t, 0, 3, N_VERSYM, SHT_GNU_versym, OFF_VERSYM, 6, 2, 0, 2);
    put_shdr(&t, 0, 4, N_VERNEED, SHT_GNU_verneed, OFF_VERNEED, 32, 1, 1, 0);
    put_shdr(&t, 0, 5, N_DYNAMIC, SHT_DYNAMIC, OFF_DYNAMIC, 80, 1, 0, 16);
    put_shdr(&t, 0, 6, N_BIG, SHT_PROGBITS, OFF_BIG, gap, 0, 0, 0);
    put_shdr(&t, 0, 7, N_SHSTR, SHT_STRTAB, OFF_SHSTRTAB, sizeof hm_shstr, 0, 0, 0);
    if (table) {
        *table = t;
        return im;
    }
    assert_int_equal(gap, 0);
    im.b = cf_xrealloc(im.b, OFF_BIG + t.len);
    memcpy(im.b + OFF_BIG, t.b, t.len);
    im.len = OFF_BIG + t.len;
    free(t.b);
    return im;
}

static void check_handmade(struct cf_elf *elf, int be)
{
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    assert_int_equal(h->elf_class, 64);
    assert_int_equal(h->big_endian, be);
    assert_int_equal(h->machine, be ? EM_PPC64 : EM_X86_64);
    assert_int_equal(cf_elf_section_count(elf), N_SECTIONS);
    assert_string_equal(cf_elf_section_at(elf, 4)->name, ".gnu.version_r");
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    assert_string_equal(d->soname, "libbe.so.1");
    assert_int_equal(d->n_needed, 1);
    assert_string_equal(d->needed[0], "libneed.so.2");
    assert_string_equal(d->runpath, "/opt/be/lib");
    assert_int_equal(d->flags_1, DF_1_NODEFLIB);

    cf_error err = CF_ERROR_INIT;
    const struct cf_elf_symbol *syms;
    size_t n;
    if (cf_elf_dynsyms(elf, &syms, &n, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    assert_int_equal(n, 2);
    assert_string_equal(syms[0].name, "foo");
    assert_true(syms[0].defined);
    assert_null(syms[0].version);
    assert_string_equal(syms[1].name, "bar");
    assert_false(syms[1].defined);
    assert_string_equal(syms[1].version, "V_BE");
    assert_string_equal(syms[1].version_file, "libneed.so.2");
    const struct cf_elf_verneed *needs;
    assert_int_equal(cf_elf_verneeds(elf, &needs, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(needs[0].file, "libneed.so.2");
    assert_int_equal(needs[0].n_versions, 1);
    assert_string_equal(needs[0].versions[0], "V_BE");
    assert_int_equal(needs[0].weak[0], 1);
}

static void test_handmade_big_endian(void **state)
{
    struct image im = make_image(1, 0, NULL);
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(im.b, im.len, "be.so", &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    assert_string_equal(cf_elf_kind_name(cf_elf_get_header(elf)), "ELF64 MSB");
    check_handmade(elf, 1);
    /* Section bytes are the on-disk bytes, in place. */
    const uint8_t *bytes;
    size_t len;
    assert_int_equal(cf_elf_section_bytes(elf, cf_elf_section_by_name(elf, ".dynstr"), &bytes, &len, &err), 0);
    assert_ptr_equal(bytes, im.b + OFF_DYNSTR);
    cf_elf_close(elf);

    /* Same image little-endian, through a file. */
    free(im.b);
    im = make_image(0, 0, NULL);
    char *dir = ts_tmpdir();
    char *path = cf_path_join(dir, "le.so");
    assert_int_equal(cf_write_file_atomic(path, im.b, im.len, &err), 0);
    elf = open_ok(path);
    check_handmade(elf, 0);
    cf_elf_close(elf);
    free(path);
    free(im.b);
}

/* Opens a corrupted copy and expects an error naming the file and containing `fault`. */
static void expect_open_fault(struct image *im, const char *fault)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_open_memory(im->b, im->len, "bad.so", &elf, &err), -1);
    assert_null(elf);
    const char *msg = cf_error_message(&err);
    if (!strstr(msg, "bad.so") || !strstr(msg, fault))
        fail_msg("expected a fault naming bad.so and '%s', got: %s", fault, msg);
    cf_error_clear(&err);
}

static void expect_symbols_fault(struct image *im, const char *fault)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(im->b, im->len, "bad.so", &elf, &err) != 0)
        fail_msg("open should succeed: %s", cf_error_message(&err));
    const struct cf_elf_symbol *syms;
    size_t n;
    assert_int_equal(cf_elf_dynsyms(elf, &syms, &n, &err), -1);
    const char *msg = cf_error_message(&err);
    if (!strstr(msg, "bad.so") || !strstr(msg, fault))
        fail_msg("expected a fault naming bad.so and '%s', got: %s", fault, msg);
    cf_error_clear(&err);
    /* Asking again reports again rather than returning half-loaded data. */
    assert_int_equal(cf_elf_dynsyms(elf, &syms, &n, &err), -1);
    cf_error_clear(&err);
    cf_elf_close(elf);
}

static void test_handmade_faults(void **state)
{
    static const struct {
        size_t off;
        uint64_t value;
        int width;
        int at_open; /* 1: open fails; 0: symbols fail */
        const char *fault;
    } cases[] = {
        { 60, 0xffff, 2, 1, "section header table" },                       /* e_shnum huge */
        { 40, 0x7fffffff0, 8, 1, "section header table" },                  /* e_shoff past the end */
        { 58, 40, 2, 1, "e_shentsize" },
        { 62, 50, 2, 1, "e_shstrndx" },
        { OFF_BIG + 5 * 64 + 40, 99, 4, 1, "sh_link 99" },                  /* .dynamic -> nowhere */
        { OFF_BIG + 5 * 64 + 40, 2, 4, 1, "sh_link 2" },                    /* .dynamic -> not a strtab */
        { OFF_DYNAMIC + 8, 0x7777, 8, 1, "DT_NEEDED string offset" },
        { OFF_DYNAMIC + 16 + 8, sizeof hm_dynstr, 8, 1, "DT_SONAME string offset" },
        { OFF_BIG + 1 * 64 + 24, 0x100000, 8, 1, "lies outside the file" },   /* .dynstr offset */
        { OFF_BIG + 1 * 64 + 32, UINT64_MAX, 8, 1, "lies outside the file" }, /* .dynstr size */
        { OFF_DYNSYM + 48, 0x9999, 4, 0, "name offset" },
        { OFF_VERSYM + 4, 9, 2, 0, "version index 9" },
        { OFF_VERNEED + 16 + 8, 0x5555, 4, 0, "version name offset" },
        { OFF_VERNEED + 8, 0x4000, 4, 0, "outside the section" },            /* vn_aux */
        { OFF_VERNEED + 4, 0x4000, 4, 0, "file name offset" },
        { OFF_BIG + 3 * 64 + 32, 2, 8, 0, "entries for 3 dynamic symbols" },  /* short versym */
        { OFF_BIG + 2 * 64 + 40, 0, 4, 0, "sh_link 0" },                      /* dynsym strtab */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct image im = make_image(1, 0, NULL);
        put(&im, cases[i].off, cases[i].value, cases[i].width);
        if (cases[i].at_open)
            expect_open_fault(&im, cases[i].fault);
        else
            expect_symbols_fault(&im, cases[i].fault);
        free(im.b);
    }
}

/* A version-requirements section of n Verneed entries that each claim 65,535
 * Vernaux entries, all pointing at one shared two-entry chain (the crafted
 * input: 262 KB asking for 2.4 GB). */
static struct image make_verneed_bomb(size_t n)
{
    enum { HDR = 64, STR = 0x40, VR = 0x80 };
    static const char dynstr[] = "\0libx.so.1\0V_1";
    static const char shstr[] = "\0.dynstr\0.gnu.version_r\0.shstrtab";
    size_t vr_size = n * 16 + 32;
    size_t shoff = VR + vr_size;
    size_t len = shoff + 4 * 64;
    struct image im = { cf_xcalloc(1, len), len, 0 };
    memcpy(im.b, "\177ELF", 4);
    im.b[EI_CLASS] = ELFCLASS64;
    im.b[EI_DATA] = ELFDATA2LSB;
    im.b[EI_VERSION] = EV_CURRENT;
    put(&im, 16, ET_DYN, 2);
    put(&im, 18, EM_X86_64, 2);
    put(&im, 20, EV_CURRENT, 4);
    put(&im, 40, shoff, 8);
    put(&im, 52, HDR, 2);
    put(&im, 58, 64, 2);
    put(&im, 60, 4, 2);
    put(&im, 62, 3, 2);
    memcpy(im.b + STR, dynstr, sizeof dynstr);
    memcpy(im.b + STR + 0x20, shstr, sizeof shstr);
    size_t chain = VR + n * 16; /* two Vernaux, the second ends the chain */
    for (size_t i = 0; i < n; i++) {
        size_t at = VR + i * 16;
        put(&im, at, 1, 2);                       /* vn_version */
        put(&im, at + 2, 65535, 2);               /* vn_cnt */
        put(&im, at + 4, 1, 4);                   /* vn_file "libx.so.1" */
        put(&im, at + 8, chain - at, 4);          /* vn_aux */
        put(&im, at + 12, i + 1 < n ? 16 : 0, 4); /* vn_next */
    }
    put(&im, chain + 6, 2, 2);    /* vna_other */
    put(&im, chain + 8, 11, 4);   /* vna_name "V_1" */
    put(&im, chain + 12, 16, 4);  /* vna_next */
    put(&im, chain + 16 + 6, 3, 2);
    put(&im, chain + 16 + 8, 11, 4);
    struct image t = { im.b + shoff, 4 * 64, 0 };
    put_shdr(&t, 0, 1, 1, SHT_STRTAB, STR, sizeof dynstr, 0, 0, 0);
    put_shdr(&t, 0, 2, 9, SHT_GNU_verneed, VR, vr_size, 1, (uint32_t)n, 0);
    put_shdr(&t, 0, 3, 24, SHT_STRTAB, STR + 0x20, sizeof shstr, 0, 0, 0);
    return im;
}

/* Memory follows the section's size, not the counts it claims: the claims run
 * out of section first and that is a fault naming it. Checked in a child under
 * a 256 MB address-space limit (the old reader needed ~3 GB here); sanitizer
 * builds reserve terabytes of shadow, so there the limit is left out. */
static void test_verneed_counts_do_not_size_memory(void **state)
{
    struct image im = make_verneed_bomb(16384); /* 262 KB */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__) && !CF_TEST_HAS_ASAN
        struct rlimit lim = { 256u << 20, 256u << 20 };
        setrlimit(RLIMIT_AS, &lim);
#endif
        struct cf_elf *elf = NULL;
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_open_memory(im.b, im.len, "bomb.so", &elf, &err) != 0)
            _exit(3);
        const struct cf_elf_verneed *needs;
        size_t n;
        int rc = cf_elf_verneeds(elf, &needs, &n, &err);
        int named = rc != 0 && strstr(cf_error_message(&err), "bomb.so") &&
                    strstr(cf_error_message(&err), ".gnu.version_r");
        _exit(named ? 0 : 4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("reading the crafted .gnu.version_r: child %s %d", WIFEXITED(status) ? "exited" : "killed by signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    free(im.b);
}

/* A library truncated while it is open (mapped): reading its symbols and
 * scanning its read-only data neither crashes (SIGBUS) nor passes quietly:
 * cf_elf_check_intact names the file. */
static void test_truncated_while_mapped(void **state)
{
    const char *real = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    if (!cf_is_file(real))
        skip();
    uint8_t *data;
    size_t len;
    read_file_bytes(real, &data, &len);
    char *copy = cf_path_join(fx.dir, "shrinking.so");
    assert_int_equal(cf_write_file_atomic(copy, data, len, NULL), 0);
    free(data);
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    cf_mmap_guard_reinstall(); /* cmocka sets its own SIGBUS handler for every test */
    assert_int_equal(cf_elf_open(copy, &elf, &err), 0);
    assert_int_equal(cf_elf_check_intact(elf, &err), 0);
    assert_int_equal(truncate(copy, 8192), 0);
    const struct cf_elf_symbol *syms;
    size_t n;
    (void)cf_elf_dynsyms(elf, &syms, &n, &err); /* reads zeros past 8 KB: may fail, must not crash */
    cf_error_clear(&err);
    struct cf_commlib_identity id;
    (void)cf_commlib_identify(elf, &id, &err);
    cf_error_clear(&err);
    assert_int_equal(cf_elf_check_intact(elf, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "shrinking.so"));
    assert_non_null(strstr(cf_error_message(&err), "truncated while it was read"));
    cf_error_clear(&err);
    cf_elf_close(elf);
    free(copy);
}

/* Every prefix of a real library fails cleanly (the section table is at the
 * end, so nothing shorter than the file opens) and none crashes. Each prefix is
 * its own allocation so ASan sees any read past it. */
static void test_truncated_library(void **state)
{
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.libdemo, &data, &len);
    size_t tried = 0;
    for (size_t cut = 0; cut < len; cut += cut < 512 ? 1 : 61) {
        uint8_t *copy = cf_xmalloc(cut ? cut : 1);
        memcpy(copy, data, cut);
        struct cf_elf *elf = NULL;
        cf_error err = CF_ERROR_INIT;
        int rc = cf_elf_open_memory(copy, cut, "cut.so", &elf, &err);
        if (rc == 0)
            fail_msg("a %zu-byte prefix of a %zu-byte library opened", cut, len);
        assert_non_null(strstr(cf_error_message(&err), "cut.so"));
        cf_error_clear(&err);
        free(copy);
        tried++;
    }
    assert_true(tried > 512);
    free(data);
}

/* Deterministic corruption of a real library: whatever opens must answer every
 * accessor without crashing (the fuzzer does this at scale). */
static void test_corrupted_library(void **state)
{
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.exe, &data, &len);
    uint32_t seed = 12345;
    int opened = 0, refused = 0;
    for (int round = 0; round < 400; round++) {
        uint8_t *copy = cf_xmalloc(len);
        memcpy(copy, data, len);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            /* Aim at the first 4 KiB (headers, dynsym, versions) and the section table. */
            size_t span = (seed >> 8) & 1 ? 4096 : len;
            size_t at = (seed >> 9) % (span < len ? span : len);
            seed = seed * 1103515245u + 12345u;
            copy[at] = (uint8_t)(seed >> 16);
        }
        struct cf_elf *elf = NULL;
        cf_error err = CF_ERROR_INIT;
        if (cf_elf_open_memory(copy, len, "mut.so", &elf, &err) == 0) {
            opened++;
            const struct cf_elf_symbol *syms;
            const char *const *defs;
            const struct cf_elf_verneed *needs;
            size_t n;
            if (cf_elf_dynsyms(elf, &syms, &n, &err) == 0)
                for (size_t i = 0; i < n; i++)
                    assert_non_null(syms[i].name);
            cf_error_clear(&err);
            cf_elf_verdefs(elf, &defs, &n, &err);
            cf_error_clear(&err);
            cf_elf_verneeds(elf, &needs, &n, &err);
            cf_error_clear(&err);
            for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
                const uint8_t *b;
                size_t bl;
                if (cf_elf_section_bytes(elf, cf_elf_section_at(elf, i), &b, &bl, &err) == 0 && bl)
                    assert_true(b >= copy && b + bl <= copy + len);
                cf_error_clear(&err);
            }
            cf_elf_close(elf);
        } else {
            refused++;
            assert_non_null(strstr(cf_error_message(&err), "mut.so"));
            cf_error_clear(&err);
        }
        free(copy);
    }
    assert_true(opened > 0);
    print_message("corrupted copies: %d opened, %d refused\n", opened, refused);
    free(data);
}

/* Opens path as it is and again with its section headers dropped (a private
 * copy-on-write mapping, so a 541 MB library costs one page) and asserts
 * that the second, read through the dynamic tags only, gives the same
 * dynamic section, symbols with versions, version definitions and
 * requirements, and relocation marks. Returns the symbols compared. */
static size_t compare_without_section_headers(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        fail_msg("%s: cannot open", path);
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        fail_msg("%s: cannot map", path);
    ts_drop_section_headers(map);
    struct cf_elf *with = open_ok(path), *without = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(map, (size_t)st.st_size, path, &without, &err) != 0)
        fail_msg("%s without section headers: %s", path, cf_error_message(&err));
    assert_int_equal(cf_elf_section_count(without) > 0, cf_elf_get_dynamic(with)->has_dynamic);

    const struct cf_elf_dynamic *a = cf_elf_get_dynamic(with), *b = cf_elf_get_dynamic(without);
    assert_int_equal(a->n_needed, b->n_needed);
    for (size_t i = 0; i < a->n_needed; i++)
        assert_string_equal(a->needed[i], b->needed[i]);

    const struct cf_elf_symbol *sa, *sb;
    size_t na, nb;
    if (cf_elf_dynsyms(with, &sa, &na, &err) != 0 || cf_elf_dynsyms(without, &sb, &nb, &err) != 0)
        fail_msg("%s: %s", path, cf_error_message(&err));
    if (na != nb)
        fail_msg("%s: %zu dynamic symbols from .dynsym, %zu from DT_SYMTAB", path, na, nb);
    size_t compared = nb;
    for (size_t i = 0; i < na; i++) {
        const struct cf_elf_symbol *x = &sa[i], *y = &sb[i];
        if (strcmp(x->name, y->name) || x->defined != y->defined || x->bind != y->bind || x->type != y->type ||
            x->visibility != y->visibility || x->value != y->value || x->size != y->size ||
            x->version_hidden != y->version_hidden || !x->version != !y->version ||
            (x->version && strcmp(x->version, y->version)) || !x->version_file != !y->version_file ||
            (x->version_file && strcmp(x->version_file, y->version_file)))
            fail_msg("%s: symbol %zu is %s@%s in .dynsym, %s@%s from the tags", path, i + 1, x->name,
                     x->version ? x->version : "", y->name, y->version ? y->version : "");
    }
    const char *const *da, *const *db;
    size_t nda, ndb;
    assert_int_equal(cf_elf_verdefs(with, &da, &nda, &err), 0);
    assert_int_equal(cf_elf_verdefs(without, &db, &ndb, &err), 0);
    assert_int_equal(nda, ndb);
    for (size_t i = 0; i < nda; i++)
        assert_string_equal(da[i], db[i]);
    const struct cf_elf_verneed *va, *vb;
    assert_int_equal(cf_elf_verneeds(with, &va, &nda, &err), 0);
    assert_int_equal(cf_elf_verneeds(without, &vb, &ndb, &err), 0);
    assert_int_equal(nda, ndb);
    for (size_t i = 0; i < nda; i++) {
        assert_string_equal(va[i].file, vb[i].file);
        assert_int_equal(va[i].n_versions, vb[i].n_versions);
        for (size_t k = 0; k < va[i].n_versions; k++) {
            assert_string_equal(va[i].versions[k], vb[i].versions[k]);
            assert_int_equal(va[i].weak[k], vb[i].weak[k]);
        }
    }
    const uint8_t *ma, *mb;
    if (cf_elf_relocated_symbols(with, &ma, &na, &err) != 0 || cf_elf_relocated_symbols(without, &mb, &nb, &err) != 0)
        fail_msg("%s: %s", path, cf_error_message(&err));
    assert_int_equal(na, nb);
    if (na && memcmp(ma, mb, na))
        fail_msg("%s: the relocations name other symbols without section headers", path);
    cf_elf_close(with);
    cf_elf_close(without);
    munmap(map, (size_t)st.st_size);
    return compared;
}

/* Without section headers the reader falls back to PT_DYNAMIC and DT_STRTAB via
 * PT_LOAD, as the loader does, and makes the symbol, version, hash and
 * relocation tables from the dynamic tags: the answers must not change. */
static void test_without_section_headers(void **state)
{
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.libdemo, &data, &len);
    ts_drop_section_headers(data);
    struct cf_elf *elf;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open_memory(data, len, "noshdr.so", &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    assert_true(d->has_dynamic);
    assert_string_equal(d->soname, "libdemo.so.1");
    assert_int_equal(d->n_needed, 3);
    assert_string_equal(d->needed[2], "libc.so.6");
    assert_string_equal(d->rpath, "/opt/rp1:$ORIGIN/../lib");
    /* the tables the tags locate, named after them (the fixture has both hash styles' tags or one) */
    static const char *const made[] = { "DT_STRTAB", "DT_SYMTAB", "DT_VERSYM", "DT_VERNEED", "DT_VERDEF", "DT_RELA" };
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++)
        if (!cf_elf_section_by_name(elf, made[i]))
            fail_msg("no %s table made from the dynamic tags", made[i]);
    assert_null(cf_elf_section_by_name(elf, ".dynsym"));
    cf_elf_close(elf);
    free(data);
    assert_true(compare_without_section_headers(fx.libdemo) > 5);

    /* A header table that is there but has no entries (e_shoff set, e_shnum
     * 0 and section 0's sh_size 0; found by fuzz_elf, which leaked its
     * allocation): no sections either, so the same tables, nothing leaked. */
    read_file_bytes(fx.libdemo, &data, &len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)data;
    eh->e_shnum = 0;
    eh->e_shstrndx = 0;
    ((Elf64_Shdr *)(data + eh->e_shoff))->sh_size = 0;
    if (cf_elf_open_memory(data, len, "noentries.so", &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    assert_non_null(cf_elf_section_by_name(elf, "DT_SYMTAB"));
    cf_elf_close(elf);
    free(data);
}

static void expect_path_fault(const char *path, const char *fault)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_open(path, &elf, &err), -1);
    assert_null(elf);
    const char *msg = cf_error_message(&err);
    if (!strstr(msg, path) || !strstr(msg, fault))
        fail_msg("expected '%s' and '%s' in: %s", path, fault, msg);
    cf_error_clear(&err);
}

static void test_not_elf_inputs(void **state)
{
    char *dir = ts_tmpdir();
    expect_path_fault(ts_write(dir, "script.sh", "#!/bin/sh\necho hi\n"), "not an ELF file");
    expect_path_fault(ts_write(dir, "empty", ""), "empty file");
    expect_path_fault(ts_write(dir, "short", "\177ELF\002"), "truncated");
    expect_path_fault(ts_write(dir, "badclass", "\177ELF\007\001\001xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
                      "unknown ELF class 7");
    expect_path_fault(dir, "not a regular file");
    char *missing = cf_path_join(dir, "missing.so");
    expect_path_fault(missing, "No such file");
    free(missing);
}

static long vm_hwm_kb(void)
{
    struct strbuf sb = STRBUF_INIT;
    long kb = -1;
    if (cf_read_file("/proc/self/status", 1 << 20, &sb, NULL) == 0) {
        const char *p = strstr(cf_sb_str(&sb), "VmHWM:");
        if (p)
            kb = strtol(p + 6, NULL, 10);
    }
    cf_sb_release(&sb);
    return kb;
}

/* A 1 GiB (sparse) file: opening it and reading its dynamic section and symbols
 * must touch only the headers and those sections, so the peak RSS barely moves. */
static void test_large_file_is_not_read(void **state)
{
    const uint64_t gap = 1ull << 30;
    struct image table;
    struct image head = make_image(0, gap, &table);
    char *dir = ts_tmpdir();
    char *path = cf_path_join(dir, "huge.so");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, head.b, head.len, 0), (ssize_t)head.len);
    assert_int_equal(pwrite(fd, table.b, table.len, (off_t)shoff_of(gap)), (ssize_t)table.len);
    close(fd);
    free(head.b);
    free(table.b);

    long before = vm_hwm_kb();
    struct cf_elf *elf = open_ok(path);
    assert_true(cf_elf_get_header(elf)->file_size > gap);
    check_handmade(elf, 0);
    const uint8_t *bytes;
    size_t len;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_elf_section_bytes(elf, cf_elf_section_by_name(elf, ".big"), &bytes, &len, &err), 0);
    assert_int_equal(len, gap);
    long after = vm_hwm_kb();
    cf_elf_close(elf);
    print_message("peak RSS %ld kB before, %ld kB after opening a 1 GiB file\n", before, after);
    if (before > 0)
        assert_true(after - before < 20 * 1024);
    free(path);
}


/* ---- the system's libraries against readelf (binutils) ----------------------- */

/* The text between '[' and ']' after `marker` on a readelf -d line. */
static char *bracketed(const char *line, const char *marker)
{
    const char *m = strstr(line, marker);
    const char *open = m ? strchr(m, '[') : NULL;
    const char *close = open ? strrchr(open, ']') : NULL;
    return close ? cf_strndup(open + 1, (size_t)(close - open - 1)) : NULL;
}

/* What readelf -W prints in the Name column for one of our symbols. */
static void readelf_name(const struct cf_elf_symbol *sym, struct strbuf *out)
{
    cf_sb_reset(out);
    cf_sb_adds(out, sym->name);
    /* readelf leaves out the version of the symbol that names a version
     * definition itself (GLIBC_2.2.5 ABS in GLIBC_2.2.5). */
    if (sym->version && !(sym->defined && !strcmp(sym->name, sym->version)))
        cf_sb_addf(out, "%s%s", sym->defined && !sym->version_hidden ? "@@" : "@", sym->version);
}

/* Runs argv with its stdout and stderr captured into *r (released by the caller). */
static void run_captured(const char *const *argv, int timeout_s, struct cf_spawn_result *r)
{
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.capture_stderr = 1;
    o.null_stdin = 1;
    o.timeout_s = timeout_s;
    *r = (struct cf_spawn_result)CF_SPAWN_RESULT_INIT;
    assert_int_equal(cf_spawn_run(argv, &o, r, NULL), 0);
}

/* Compares one file with `readelf -dW --dyn-syms`; returns the symbols compared. */
static size_t compare_with_readelf(const char *path)
{
    const char *argv[] = { "readelf", "-dW", "--dyn-syms", path, NULL };
    struct cf_spawn_result r;
    run_captured(argv, 60, &r);
    struct strvec lines = STRVEC_INIT, needed = STRVEC_INIT, names = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    char *soname = NULL, *rpath = NULL, *runpath = NULL;
    int in_dynsym = 0;
    for (size_t i = 0; i < lines.n; i++) {
        const char *l = lines.v[i];
        char *v;
        if ((v = bracketed(l, "(NEEDED)")))
            cf_strvec_push_nodup(&needed, v);
        else if ((v = bracketed(l, "(SONAME)")))
            free(soname), soname = v;
        else if ((v = bracketed(l, "(RPATH)")))
            free(rpath), rpath = v;
        else if ((v = bracketed(l, "(RUNPATH)")))
            free(runpath), runpath = v;
        else if (strstr(l, "Symbol table '.dynsym'"))
            in_dynsym = 1;
        else if (strstr(l, "Symbol table '"))
            in_dynsym = 0;
        else if (in_dynsym) {
            /* "   Num:    Value          Size Type    Bind   Vis      Ndx Name" */
            struct strvec f = STRVEC_INIT;
            cf_strvec_split(&f, l, " \t", 0);
            if (f.n >= 8 && cf_ends_with(f.v[0], ":") && strcmp(f.v[0], "Num:") && strcmp(f.v[0], "0:"))
                cf_strvec_push(&names, f.v[7]);
            cf_strvec_clear(&f);
        }
    }
    cf_spawn_result_release(&r);

    struct cf_elf *elf = open_ok(path);
    const struct cf_elf_dynamic *d = cf_elf_get_dynamic(elf);
    if (d->n_needed != needed.n)
        fail_msg("%s: %zu NEEDED, readelf %zu", path, d->n_needed, needed.n);
    for (size_t i = 0; i < needed.n; i++)
        assert_string_equal(d->needed[i], needed.v[i]);
    const char *const pairs[][3] = { { "SONAME", d->soname, soname }, { "RPATH", d->rpath, rpath },
                                     { "RUNPATH", d->runpath, runpath } };
    for (size_t i = 0; i < 3; i++)
        if ((pairs[i][1] == NULL) != (pairs[i][2] == NULL) || (pairs[i][1] && strcmp(pairs[i][1], pairs[i][2])))
            fail_msg("%s: %s is '%s', readelf '%s'", path, pairs[i][0], pairs[i][1] ? pairs[i][1] : "(none)",
                     pairs[i][2] ? pairs[i][2] : "(none)");
    const struct cf_elf_symbol *syms;
    size_t n;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_dynsyms(elf, &syms, &n, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    if (n != names.n)
        fail_msg("%s: %zu dynamic symbols, readelf %zu", path, n, names.n);
    struct strbuf mine = STRBUF_INIT;
    for (size_t i = 0; i < n; i++) {
        /* readelf names a section symbol (s390x's .dynsym has them) by its section */
        if (syms[i].type == STT_SECTION && !*syms[i].name)
            continue;
        readelf_name(&syms[i], &mine);
        if (strcmp(cf_sb_str(&mine), names.v[i]) != 0)
            fail_msg("%s: symbol %zu is %s, readelf says %s", path, i + 1, cf_sb_str(&mine), names.v[i]);
    }
    cf_sb_release(&mine);
    cf_elf_close(elf);
    free(soname);
    free(rpath);
    free(runpath);
    cf_strvec_clear(&lines);
    cf_strvec_clear(&needed);
    cf_strvec_clear(&names);
    return n;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files named *.so* under 16 MB in dir (not recursive). */
static void collect_shared_objects(const char *dir, struct strvec *files)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return;
    for (struct dirent *de; (de = readdir(dh)) != NULL;) {
        if (!strstr(de->d_name, ".so"))
            continue;
        char *p = cf_path_join(dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (16 << 20) && st.st_size > 64)
            cf_strvec_push(files, p);
        free(p);
    }
    closedir(dh);
}

/* Every 4th regular shared object under 16 MB in the system library directory
 * and /usr/lib32 (about 140 files here): NEEDED in order, SONAME, RPATH, RUNPATH and every
 * dynamic symbol with its version decoration equal readelf's. */
static void test_system_libraries_match_readelf(void **state)
{
    static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib" };
    const char *dir = NULL;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !dir; i++)
        if (cf_is_dir(dirs[i]))
            dir = dirs[i];
    if (!ts_have("readelf") || !dir) {
        print_message("skipped: needs readelf (binutils) and a system library directory\n");
        skip();
    }
    struct strvec files = STRVEC_INIT;
    collect_shared_objects(dir, &files);
    collect_shared_objects("/usr/lib32", &files); /* ELF32 from gcc-multilib, when present */
    qsort(files.v, files.n, sizeof *files.v, compare_names);
    size_t checked = 0, symbols = 0, stripped = 0;
    for (size_t i = 0; i < files.n; i += 4) {
        /* Linker scripts named .so are not ELF; readelf refuses them as well. */
        struct cf_elf *elf = NULL;
        if (cf_elf_open(files.v[i], &elf, NULL) != 0)
            continue;
        cf_elf_close(elf);
        symbols += compare_with_readelf(files.v[i]);
        stripped += compare_without_section_headers(files.v[i]);
        checked++;
    }
    /* The fixtures too: hidden/default versions, weak references, ELF32. */
    /* And the machine's real NCCL and cuBLASLt (hundreds of MB) when installed. */
    struct ts_nccl nccl;
    const char *cuda = ts_cuda_root();
    char *cublaslt = NULL;
    if (cuda) {
        glob_t g;
        char *pattern = cf_path_join(cuda, "lib64/libcublasLt.so.[0-9]*");
        if (glob(pattern, 0, NULL, &g) == 0) {
            cublaslt = cf_strdup(g.gl_pathv[0]);
            globfree(&g);
        }
        free(pattern);
    }
    const char *fixtures[] = { fx.libdemo, fx.exe, fx.librun, fx.lib32, ts_find_nccl(&nccl) == 0 ? nccl.lib : NULL,
                               cublaslt };
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        if (fixtures[i] && cf_is_file(fixtures[i])) {
            symbols += compare_with_readelf(fixtures[i]);
            stripped += compare_without_section_headers(fixtures[i]);
        }
    print_message("%zu libraries in %s, /usr/lib32, the fixtures and the CUDA libraries present, %zu dynamic symbols: same as readelf\n", checked, dir,
                  symbols);
    print_message("the same files without section headers: %zu symbols read through the dynamic tags, the same\n", stripped);
    assert_int_equal(stripped, symbols);
    assert_true(checked > 10);
    free(cublaslt);
    cf_strvec_clear(&files);
}

/* Real big-endian ELF64 (Debian's s390x libc, libstdc++, libssl, libcrypto,
 * libzstd, fetched by tests/fixtures/debian_s390x.sh) read as readelf reads
 * them: the byte-order paths of the reader against objects a real toolchain
 * made, version definitions included. Skipped, visibly, without network. */
static void test_big_endian_debian_libraries(void **state)
{
    if (!ts_have("readelf")) {
        print_message("skipped: needs readelf (binutils)\n");
        skip();
    }
    const char *argv[] = { "bash", CCLFORGE_SOURCE_DIR "/tests/fixtures/debian_s390x.sh", NULL };
    struct cf_spawn_result r;
    run_captured(argv, 600, &r);
    if (r.exited && r.exit_code == 77) { /* the fixture's "cannot fetch"; any other failure fails */
        print_message("skipped: Debian's s390x packages cannot be fetched here (%s)\n", cf_sb_str(&r.err));
        cf_spawn_result_release(&r);
        skip();
    }
    if (!r.exited || r.exit_code != 0)
        fail_msg("tests/fixtures/debian_s390x.sh failed (exit %d): %s", r.exit_code, cf_sb_str(&r.err));
    char *root = cf_strdup(cf_sb_str(&r.out));
    root[strcspn(root, "\n")] = '\0';
    cf_spawn_result_release(&r);
    struct strvec files = STRVEC_INIT;
    size_t stripped = 0;
    const char *subdirs[] = { "lib/s390x-linux-gnu", "usr/lib/s390x-linux-gnu" };
    for (size_t i = 0; i < 2; i++) {
        char *dir = cf_path_join(root, subdirs[i]);
        collect_shared_objects(dir, &files);
        free(dir);
    }
    size_t checked = 0, symbols = 0;
    for (size_t i = 0; i < files.n; i++) {
        struct cf_elf *elf = NULL;
        if (cf_elf_open(files.v[i], &elf, NULL) != 0)
            continue;
        const struct cf_elf_header *h = cf_elf_get_header(elf);
        assert_int_equal(h->elf_class, 64);
        assert_int_equal(h->big_endian, 1);
        assert_int_equal(h->machine, EM_S390);
        const char *const *defs;
        size_t n_defs;
        cf_error err = CF_ERROR_INIT;
        assert_int_equal(cf_elf_verdefs(elf, &defs, &n_defs, &err), 0);
        if (strstr(files.v[i], "/libc.so.6")) /* GLIBC_2.2 to GLIBC_2.36 and GLIBC_PRIVATE */
            assert_true(n_defs > 30);
        cf_elf_close(elf);
        symbols += compare_with_readelf(files.v[i]);
        stripped += compare_without_section_headers(files.v[i]);
        checked++;
    }
    print_message("%zu big-endian s390x libraries, %zu dynamic symbols: same as readelf, and through the dynamic tags\n",
                  checked, symbols);
    assert_int_equal(stripped, symbols);
    assert_true(checked >= 6);
    assert_true(symbols > 5000);
    cf_strvec_clear(&files);
    free(root);
}

/* The gABI's extended numbering, which a real assembler writes for an object
 * of more than 65,279 sections (e_shnum 0: the count is section 0's sh_size;
 * e_shstrndx SHN_XINDEX: the name table's index is its sh_link), and PN_XNUM
 * (e_phnum 0xffff: the segment count is section 0's sh_info), set here on a
 * real library: both read as readelf reads them. */
static void test_extended_numbering(void **state)
{
    enum { MANY = 65300 };
    if (!ts_have("readelf")) {
        print_message("skipped: needs readelf (binutils)\n");
        skip();
    }
    struct strbuf src = STRBUF_INIT;
    for (unsigned i = 0; i < MANY; i++)
        cf_sb_addf(&src, ".section .s%u,\"a\"\n.byte %u\n", i, i & 0xff);
    char *asm_path = ts_write(fx.dir, "many.s", cf_sb_str(&src));
    cf_sb_release(&src);
    char *obj = cf_path_join(fx.dir, "many.o");
    const char *cc = getenv("CC");
    const char *argv[] = { cc && *cc ? cc : "cc", "-c", "-o", obj, asm_path, NULL };
    assert_int_equal(ts_run(argv), 0);

    struct cf_elf *elf = open_ok(obj);
    uint8_t *raw;
    size_t raw_len;
    read_file_bytes(obj, &raw, &raw_len);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)raw;
    assert_int_equal(eh->e_shnum, 0);
    assert_int_equal(eh->e_shstrndx, SHN_XINDEX);
    const Elf64_Shdr *zero = (const Elf64_Shdr *)(raw + eh->e_shoff);
    unsigned long long shnum = zero->sh_size;
    assert_int_equal(cf_elf_section_count(elf), shnum);
    assert_true(cf_elf_section_count(elf) > MANY);
    const struct cf_elf_section *last = cf_elf_section_by_name(elf, ".s65299");
    assert_non_null(last);
    assert_int_equal(last->type, SHT_PROGBITS);
    assert_int_equal(last->size, 1);
    assert_string_equal(cf_elf_section_at(elf, zero->sh_link)->name, ".shstrtab");
    cf_elf_close(elf);
    free(raw);
    raw = NULL;

    /* readelf's view of the counts, the oracle for the rule */
    const char *re[] = { "readelf", "-hW", obj, NULL };
    struct cf_spawn_result r;
    run_captured(re, 60, &r);
    char *want = cf_asprintf("Number of section headers:         0 (%llu)", shnum);
    if (!strstr(cf_sb_str(&r.out), want))
        fail_msg("readelf -h does not say '%s':\n%s", want, cf_sb_str(&r.out));
    free(want);
    cf_spawn_result_release(&r);

    /* PN_XNUM on the real libdemo: e_phnum 0xffff, the count in section 0. */
    uint8_t *data;
    size_t len;
    read_file_bytes(fx.libdemo, &data, &len);
    Elf64_Ehdr *deh = (Elf64_Ehdr *)data;
    unsigned phnum = deh->e_phnum;
    ((Elf64_Shdr *)(data + deh->e_shoff))->sh_info = phnum;
    deh->e_phnum = PN_XNUM;
    char *patched = cf_path_join(fx.dir, "libxnum.so");
    cf_error err = CF_ERROR_INIT;
    if (cf_write_file_atomic(patched, data, len, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    elf = open_ok(patched);
    assert_int_equal(cf_elf_segment_count(elf), phnum);
    assert_string_equal(cf_elf_get_dynamic(elf)->soname, "libdemo.so.1");
    cf_elf_close(elf);
    const char *rl[] = { "readelf", "-lW", patched, NULL };
    run_captured(rl, 60, &r);
    want = cf_asprintf("There are %u program headers", phnum);
    if (!strstr(cf_sb_str(&r.out), want))
        fail_msg("readelf -l does not say '%s':\n%s", want, cf_sb_str(&r.out));
    free(want);
    cf_spawn_result_release(&r);
    free(data);
    free(patched);
    free(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_library_dynamic),
        cmocka_unit_test(test_runpath_library),
        cmocka_unit_test(test_version_definitions),
        cmocka_unit_test(test_executable_references),
        cmocka_unit_test(test_weak_version_requirement),
        cmocka_unit_test(test_elf32_library),
        cmocka_unit_test(test_handmade_big_endian),
        cmocka_unit_test(test_handmade_faults),
        cmocka_unit_test(test_verneed_counts_do_not_size_memory),
        cmocka_unit_test(test_truncated_library),
        cmocka_unit_test(test_truncated_while_mapped),
        cmocka_unit_test(test_corrupted_library),
        cmocka_unit_test(test_unterminated_string_table),
        cmocka_unit_test(test_relocation_marks_sized_by_the_file),
        cmocka_unit_test(test_without_section_headers),
        cmocka_unit_test(test_not_elf_inputs),
        cmocka_unit_test(test_large_file_is_not_read),
        cmocka_unit_test(test_system_libraries_match_readelf),
        cmocka_unit_test(test_big_endian_debian_libraries),
        cmocka_unit_test(test_extended_numbering),
    };
    return cmocka_run_group_tests(tests, build_fixtures, remove_fixtures);
}
