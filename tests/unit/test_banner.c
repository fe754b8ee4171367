/* NCCL/RCCL banners: parsing, the real libnccl.so.2, and C fixture libraries
 * that are, embed, or merely mention an NCCL. */
#include "testsupport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/strbuf.h"


static void test_version_code_matches_nccl_h(void **state)
{
    /* nccl.h: NCCL_VERSION(X,Y,Z) ((X) <= 2 && (Y) <= 8) ? X*1000+Y*100+Z : X*10000+Y*100+Z */
    assert_int_equal(cf_nccl_version_code(2, 8, 4), 2804);
    assert_int_equal(cf_nccl_version_code(2, 9, 6), 20906);
    assert_int_equal(cf_nccl_version_code(2, 28, 9), 22809);
    assert_int_equal(cf_nccl_version_code(3, 0, 1), 30001);
}

static void test_parse_forms(void **state)
{
    static const struct {
        const char *text;
        enum cf_commlib lib;
        unsigned major, minor, patch;
        const char *suffix, *toolkit;
        unsigned tk_major, tk_minor, code;
    } cases[] = {
        { "NCCL version 2.28.9+cuda13.0", CF_COMMLIB_NCCL, 2, 28, 9, "", "cuda", 13, 0, 22809 },
        { "NCCL version 2.19.3a0+cuda12.1", CF_COMMLIB_NCCL, 2, 19, 3, "a0", "cuda", 12, 1, 21903 },
        { "NCCL version 2.7.8+cuda11.0", CF_COMMLIB_NCCL, 2, 7, 8, "", "cuda", 11, 0, 2708 },
        { "NCCL version 2.28.9 compiled with CUDA 13.0", CF_COMMLIB_NCCL, 2, 28, 9, "", "cuda", 13, 0, 22809 },
        { "RCCL version 2.18.3+hip6.0", CF_COMMLIB_RCCL, 2, 18, 3, "", "hip", 6, 0, 21803 },
        { "RCCL version : 2.30.4-HEAD", CF_COMMLIB_RCCL, 2, 30, 4, "-HEAD", "", 0, 0, 23004 },
        { "NCCL version 2.21.5", CF_COMMLIB_NCCL, 2, 21, 5, "", "", 0, 0, 22105 },
        { "NCCL version 2.21.5+cudaX", CF_COMMLIB_NCCL, 2, 21, 5, "", "", 0, 0, 22105 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cf_commlib_banner b;
        const char *t = cases[i].text;
        assert_int_equal(cf_banner_parse(t, strlen(t) + 1, &b), 0);
        assert_int_equal(b.lib, cases[i].lib);
        assert_int_equal(b.major, cases[i].major);
        assert_int_equal(b.minor, cases[i].minor);
        assert_int_equal(b.patch, cases[i].patch);
        assert_string_equal(b.suffix, cases[i].suffix);
        assert_string_equal(b.toolkit, cases[i].toolkit);
        assert_int_equal(b.toolkit_major, cases[i].tk_major);
        assert_int_equal(b.toolkit_minor, cases[i].tk_minor);
        assert_int_equal(b.version_code, cases[i].code);
        assert_string_equal(b.text, t);
    }
    static const char *const not_banners[] = {
        "NCCL version mismatch with remote peer %s", "NCCL version %s", "NCCL version 2.",
        "NCCL version 2.28", "NCCL version 2.28.", "NCCL version 999999999999.1.1",
        "XCCL version 2.28.9", "NCCL version", "",
        /* prose in real libtorch_cuda.so (torch 2.15), not NCCL's VERSION_STRING */
        "NCCL version 2.27.0 or later. Found version: ",
        "NCCL version 2.28.9 is required",
    };
    for (size_t i = 0; i < sizeof(not_banners) / sizeof(not_banners[0]); i++) {
        struct cf_commlib_banner b;
        assert_int_equal(cf_banner_parse(not_banners[i], strlen(not_banners[i]), &b), -1);
    }
    /* Never past len: a banner cut in the middle of its patch number. */
    struct cf_commlib_banner b;
    assert_int_equal(cf_banner_parse("NCCL version 2.28.9+cuda13.0", 19, &b), 0);
    assert_int_equal(b.patch, 9);
    assert_string_equal(b.toolkit, "");
}

static int count_visit(const struct cf_commlib_banner *b, void *ctx)
{
    struct strbuf *sb = ctx;
    cf_sb_addf(sb, "[%s@%llu]", b->text, (unsigned long long)b->offset);
    return 0;
}

static void test_scan_buffer(void **state)
{
    static const char data[] = "xx\0Mismatched NCCL version detected\0NCCL version 2.21.5+cuda12.4\0"
                               "RCCL version 2.18.3+hip6.0\0NCCL version";
    struct strbuf sb = STRBUF_INIT;
    size_t n = cf_banner_scan((const uint8_t *)data, sizeof(data) - 1, 1000, count_visit, &sb);
    assert_int_equal(n, 2);
    assert_string_equal(sb.buf, "[NCCL version 2.21.5+cuda12.4@1036][RCCL version 2.18.3+hip6.0@1065]");
    cf_sb_release(&sb);
    /* A buffer that starts with the needle (no room for the N) and tiny buffers. */
    assert_int_equal(cf_banner_scan((const uint8_t *)"CCL version 2.1.1", 17, 0, NULL, NULL), 0);
    assert_int_equal(cf_banner_scan((const uint8_t *)"N", 1, 0, NULL, NULL), 0);
    assert_int_equal(cf_banner_scan((const uint8_t *)"", 0, 0, NULL, NULL), 0);
}

static void identify(const char *path, struct cf_commlib_identity *id)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(path, &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    if (cf_commlib_identify(elf, id, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    cf_elf_close(elf);
}

static void test_real_libnccl(void **state)
{
    struct ts_nccl nccl;
    if (ts_find_nccl(&nccl) != 0) {
        print_message("SKIP: no libnccl.so.2 with its nccl.h found (set CUDA_HOME)\n");
        skip();
    }
    struct cf_commlib_identity id;
    identify(nccl.lib, &id);
    assert_true(id.found);
    /* "NCCL version <its nccl.h's version>+cudaX.Y" */
    char *want = cf_asprintf("NCCL version %s+cuda%d.%d", nccl.version, id.banner.toolkit_major,
                             id.banner.toolkit_minor);
    assert_string_equal(id.banner.text, want);
    free(want);
    assert_int_equal(id.banner.lib, CF_COMMLIB_NCCL);
    assert_int_equal(id.banner.version_code, nccl.code);
    assert_string_equal(id.banner.toolkit, "cuda");
    assert_true(id.banner.toolkit_major > 0);
    /* "NCCL version X.Y.Z compiled with CUDA A.B", where the library has it
     * too, is the same version. */
    assert_int_equal(id.n_banners, 1);
    assert_false(id.distinct_versions);
    assert_int_equal(id.library, CF_COMMLIB_NCCL);
    assert_false(id.embeds_copy);
    /* Only read-only data: under 1% of the file. */
    size_t size = 0;
    struct cf_mmap map;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_mmap_file(nccl.lib, &map, &err), 0);
    size = map.len;
    cf_munmap(&map);
    assert_true(id.bytes_scanned > 0);
    assert_true(id.bytes_scanned * 100 < size);
}

static void test_fixtures_embed_or_not(void **state)
{
    char *dir = ts_tmpdir();
    /* A library that carries a static NCCL copy's banner (like libtorch_cuda.so). */
    char *embeds = cf_path_join(dir, "libembeds.so");
    ts_cc(dir, embeds,
          "const char nccl_banner[] = \"NCCL version 2.21.5+cuda12.4\";\n"
          "const char *banner(void) { return nccl_banner; }\n",
          "-shared", "-fPIC", NULL);
    /* One that only mentions NCCL, and one whose banner is in writable data. */
    char *mentions = cf_path_join(dir, "libmentions.so");
    ts_cc(dir, mentions,
          "const char msg[] = \"NCCL version mismatch: rebuild with the NCCL version %s\";\n"
          "const char *m(void) { return msg; }\n",
          "-shared", "-fPIC", NULL);
    char *writable = cf_path_join(dir, "libwritable.so");
    ts_cc(dir, writable,
          "char nccl_banner[] = \"NCCL version 2.21.5+cuda12.4\";\n"
          "char *banner(void) { return nccl_banner; }\n",
          "-shared", "-fPIC", NULL);
    /* The library itself, by soname, and an RCCL built for HIP. */
    char *nccl = cf_path_join(dir, "libnccl-fake.so");
    ts_cc(dir, nccl,
          "const char v[] = \"NCCL version 2.18.6+cuda12.2\";\n"
          "const char *ncclGetErrorString(int r) { (void)r; return v; }\n",
          "-shared", "-fPIC", "-Wl,-soname,libnccl.so.2", NULL);
    char *rccl = cf_path_join(dir, "librccl.so.1");
    ts_cc(dir, rccl, "const char v[] = \"RCCL version 2.20.5+hip6.2\";\n"
                     "const char *f(void) { return v; }\n",
          "-shared", "-fPIC", NULL);
    /* Two different versions inside one object. */
    char *two = cf_path_join(dir, "libtwo.so");
    ts_cc(dir, two,
          "const char a[] = \"NCCL version 2.21.5+cuda12.4\";\n"
          "const char b[] = \"NCCL version 2.27.3+cuda12.9\";\n"
          "const char *f(int i) { return i ? a : b; }\n",
          "-shared", "-fPIC", NULL);

    struct cf_commlib_identity id_embeds, id_mentions, id_writable, id_nccl, id_rccl, id_two;
    identify(embeds, &id_embeds);
    assert_true(id_embeds.found);
    assert_true(id_embeds.embeds_copy);
    assert_int_equal(id_embeds.library, CF_COMMLIB_NONE);
    assert_int_equal(id_embeds.banner.version_code, 22105);
    assert_string_equal(id_embeds.banner.text, "NCCL version 2.21.5+cuda12.4");

    /* The same bytes as an in-memory image: read through the mapped bytes. */
    struct strbuf bytes = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(embeds, 1u << 24, &bytes, &err), 0);
    struct cf_elf *mem = NULL;
    assert_int_equal(cf_elf_open_memory(bytes.buf, bytes.len, "image", &mem, &err), 0);
    struct cf_commlib_identity id_mem;
    assert_int_equal(cf_commlib_identify(mem, &id_mem, &err), 0);
    assert_true(id_mem.found);
    assert_true(id_mem.embeds_copy);
    assert_string_equal(id_mem.banner.text, "NCCL version 2.21.5+cuda12.4");
    cf_elf_close(mem);
    cf_sb_release(&bytes);

    identify(mentions, &id_mentions);
    assert_false(id_mentions.found);
    assert_false(id_mentions.embeds_copy);
    assert_true(id_mentions.bytes_scanned > 0);

    identify(writable, &id_writable);
    assert_false(id_writable.found);

    identify(nccl, &id_nccl);
    assert_true(id_nccl.found);
    assert_int_equal(id_nccl.library, CF_COMMLIB_NCCL);
    assert_false(id_nccl.embeds_copy);

    identify(rccl, &id_rccl);
    assert_true(id_rccl.found);
    assert_int_equal(id_rccl.library, CF_COMMLIB_RCCL);
    assert_int_equal(id_rccl.banner.lib, CF_COMMLIB_RCCL);
    assert_string_equal(id_rccl.banner.toolkit, "hip");
    assert_int_equal(id_rccl.banner.toolkit_major, 6);
    assert_int_equal(id_rccl.banner.toolkit_minor, 2);

    identify(two, &id_two);
    assert_int_equal(id_two.n_banners, 2);
    assert_true(id_two.distinct_versions);

    /* One process loading libnccl.so.2 and a library with its own copy: two copies. */
    const struct cf_commlib_identity *process[] = { &id_nccl, &id_embeds, &id_mentions };
    assert_int_equal(cf_commlib_copies(process, 3), 2);
    const struct cf_commlib_identity *clean[] = { &id_nccl, &id_mentions };
    assert_int_equal(cf_commlib_copies(clean, 2), 1);

    free(embeds);
    free(mentions);
    free(writable);
    free(nccl);
    free(rccl);
    free(two);
}

/* Banners straddling the end of the first 1 MiB window the section is scanned
 * in (the one at 1048552 runs past byte 1048576):
 * each found whole, none cut into a wrong version. The section holds only
 * the blob, so the window edge (1 MiB - 256 from its start) is known. */
static void test_banners_across_window_edges(void **state)
{
    char *dir = ts_tmpdir();
    struct strbuf src = STRBUF_INIT;
    cf_sb_adds(&src, "__attribute__((section(\"bannertest\"), used))\n"
                  "const struct { char pad[1048462]; char b[8][30]; } blob = { {1}, {\n");
    for (int k = 0; k < 8; k++)
        cf_sb_addf(&src, "  \"NCCL version 2.21.%d+cuda12.4\",\n", 10 + k);
    cf_sb_adds(&src, "} };\n");
    char *lib = cf_path_join(dir, "libedges.so");
    ts_cc(dir, lib, src.buf, "-shared", "-fPIC", NULL);
    struct cf_commlib_identity id;
    identify(lib, &id);
    assert_int_equal(id.n_banners, 8);
    for (int k = 0; k < 8; k++) {
        char want[40];
        snprintf(want, sizeof(want), "NCCL version 2.21.%d+cuda12.4", 10 + k);
        assert_string_equal(id.banners[k].text, want);
        assert_int_equal(id.banners[k].patch, 10 + k);
        assert_int_equal(id.banners[k].toolkit_minor, 4);
    }
    cf_sb_release(&src);
    free(lib);
}

/* A fatbin container's header and first entry header (kind 2, cubin), with
 * `payload` bytes of entry after it, as a C initializer. */
static void add_fatbin(struct strbuf *src, unsigned payload)
{
    unsigned fat = 64 + payload;
    cf_sb_addf(src, "{ 0x50,0xED,0x55,0xBA, 1,0, 16,0, %u,%u,%u,0,0,0,0,0,\n", fat & 255, fat >> 8 & 255, fat >> 16);
    cf_sb_addf(src, "  2,0, 1,1, 64,0,0,0, %u,%u,%u,0,0,0,0,0 }", payload & 255, payload >> 8 & 255, payload >> 16);
}

/* CUDA fatbins inside read-only data (libcusparse keeps 11 of its 12.7 MB of
 * .rodata in them, cuBLAS a 110 MB .cask_resource) are skipped, also when one
 * runs past a scan window's end; banners before and after them are found,
 * and bytes that only look like a container (bad version) are scanned. */
static void test_fatbins_skipped(void **state)
{
    char *dir = ts_tmpdir();
    struct strbuf src = STRBUF_INIT;
    cf_sb_adds(&src, "__attribute__((section(\"bannertest\"), used))\n"
                  "const struct {\n"
                  "  char before[40]; unsigned char fake[80]; char after_fake[40];\n"
                  "  char pad[1048576 - 300 - 160]; unsigned char fb[80]; char inside[3000];\n"
                  "  char after[40];\n"
                  "} blob = {\n"
                  "  \"NCCL version 2.21.5+cuda12.4\",\n"
                  "  { 0x50,0xED,0x55,0xBA, 7,0, 16,0, 0,1,0,0,0,0,0,0 },\n"
                  "  \"NCCL version 2.22.1+cuda12.4\",\n"
                  "  {1},\n  ");
    add_fatbin(&src, 3000);
    cf_sb_adds(&src, ",\n  \"NCCL version 9.9.9+cuda1.0 (GPU code, not a host string)\",\n"
                  "  \"NCCL version 2.23.4+cuda12.6\",\n};\n");
    char *lib = cf_path_join(dir, "libfatbins.so");
    ts_cc(dir, lib, src.buf, "-shared", "-fPIC", NULL);

    struct cf_commlib_identity id;
    identify(lib, &id);
    assert_int_equal(id.fatbins_skipped, 1);
    assert_int_equal(id.bytes_skipped, 16 + 64 + 3000);
    assert_int_equal(id.n_banners, 3);
    assert_string_equal(id.banners[0].text, "NCCL version 2.21.5+cuda12.4");
    assert_string_equal(id.banners[1].text, "NCCL version 2.22.1+cuda12.4");
    assert_string_equal(id.banners[2].text, "NCCL version 2.23.4+cuda12.6");

    /* The same file as a memory image (scanned whole, not in windows). */
    struct strbuf bytes = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(lib, 1u << 24, &bytes, &err), 0);
    struct cf_elf *mem = NULL;
    assert_int_equal(cf_elf_open_memory(bytes.buf, bytes.len, "image", &mem, &err), 0);
    struct cf_commlib_identity id_mem;
    assert_int_equal(cf_commlib_identify(mem, &id_mem, &err), 0);
    assert_int_equal(id_mem.fatbins_skipped, 1);
    assert_int_equal(id_mem.n_banners, 3);
    assert_string_equal(id_mem.banners[2].text, "NCCL version 2.23.4+cuda12.6");
    assert_int_equal(id_mem.bytes_scanned, id.bytes_scanned);
    cf_elf_close(mem);
    cf_sb_release(&bytes);
    cf_sb_release(&src);
    free(lib);
}

static void test_names(void **state)
{
    assert_int_equal(cf_commlib_from_name("libnccl.so.2"), CF_COMMLIB_NCCL);
    assert_int_equal(cf_commlib_from_name("/x/y/libnccl.so"), CF_COMMLIB_NCCL);
    assert_int_equal(cf_commlib_from_name("librccl.so.1.0"), CF_COMMLIB_RCCL);
    assert_int_equal(cf_commlib_from_name("libnccl.sox"), CF_COMMLIB_NONE);
    assert_int_equal(cf_commlib_from_name("libnccl-net.so"), CF_COMMLIB_NONE);
    assert_int_equal(cf_commlib_from_name("libtorch_cuda.so"), CF_COMMLIB_NONE);
    assert_int_equal(cf_commlib_from_name(NULL), CF_COMMLIB_NONE);
    assert_string_equal(cf_commlib_name(CF_COMMLIB_RCCL), "RCCL");
}

static int teardown(void **state)
{
    ts_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_code_matches_nccl_h),
        cmocka_unit_test(test_parse_forms),
        cmocka_unit_test(test_scan_buffer),
        cmocka_unit_test(test_real_libnccl),
        cmocka_unit_test_teardown(test_fixtures_embed_or_not, teardown),
        cmocka_unit_test_teardown(test_banners_across_window_edges, teardown),
        cmocka_unit_test_teardown(test_fatbins_skipped, teardown),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
