/* GPU code inventory: CUDA fatbins built by nvcc in the test, the machine's
 * real libnccl.so.2, offload bundles written byte by byte and by
 * clang-offload-bundler, and truncated/corrupt inputs. */
#include "testsupport.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/gpucode.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

#include <zlib.h>
#include <zstd.h>


static const char kernel_source[] =
    "__global__ void scale(float *x) { x[threadIdx.x] *= 2.0f; }\n"
    "extern \"C\" void launch(float *x) { scale<<<1, 32>>>(x); }\n";

/* ---- helpers ---- */

static char *find_tool(const char *env, const char *const *candidates)
{
    const char *e = getenv(env);
    if (e && *e)
        return cf_which(e);
    for (size_t i = 0; candidates[i]; i++) {
        char *p = cf_which(candidates[i]);
        if (p)
            return p;
    }
    return NULL;
}

/* $ENV, else the toolkit's (ts_cuda_tool) */
static char *find_cuda_tool(const char *env, const char *name)
{
    const char *e = getenv(env);
    if (e && *e)
        return cf_which(e);
    const char *p = ts_cuda_tool(name);
    return p ? cf_strdup(p) : NULL;
}

static char *find_nvcc(void)
{
    return find_cuda_tool("NVCC", "nvcc");
}

/* cuobjdump is the incumbent; some toolkits ship without it, so $CUOBJDUMP
 * may name one, else the nvidia-cuda-cuobjdump wheel that
 * tests/cli/gpucode_cuobjdump.sh installs into the cache is used. */
static char *find_cuobjdump(void)
{
    char *c = find_cuda_tool("CUOBJDUMP", "cuobjdump");
    if (c)
        return c;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *pattern = xdg && *xdg ? cf_asprintf("%s/cclforge/cuobjdump-venv/lib/python*/site-packages/nvidia/*/bin/cuobjdump", xdg)
                  : home ? cf_asprintf("%s/.cache/cclforge/cuobjdump-venv/lib/python*/site-packages/nvidia/*/bin/cuobjdump", home)
                         : NULL;
    glob_t g;
    if (pattern && glob(pattern, 0, NULL, &g) == 0) {
        c = cf_strdup(g.gl_pathv[0]);
        globfree(&g);
    }
    free(pattern);
    return c;
}

static char *find_bundler(void)
{
    static const char *const c[] = { "clang-offload-bundler", "clang-offload-bundler-14",
                                     "/usr/lib/llvm-14/bin/clang-offload-bundler", NULL };
    return find_tool("CLANG_OFFLOAD_BUNDLER", c);
}

/* Compiles kernel_source with nvcc and the given flags; out is the output path. */
static void nvcc_build(const char *nvcc, const char *dir, const char *out, const char *const *flags)
{
    char *src = ts_write(dir, "kernel.cu", kernel_source);
    struct strvec argv = STRVEC_INIT;
    cf_strvec_push(&argv, nvcc);
    for (size_t i = 0; flags[i]; i++)
        cf_strvec_push(&argv, flags[i]);
    cf_strvec_push(&argv, "-o");
    cf_strvec_push(&argv, out);
    cf_strvec_push(&argv, src);
    ts_run_ok((const char *const *)cf_strvec_argv(&argv));
    cf_strvec_clear(&argv);
}

/* "sm_75 sm_90 | compute_90 | lto_ | gfx..." summary of an inventory. */
static char *inventory_text(const struct cf_gpucode_inventory *inv)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < inv->n_sass; i++)
        cf_sb_addf(&sb, "%s%s", sb.len ? " " : "", inv->sass[i].name);
    for (size_t i = 0; i < inv->n_ptx; i++)
        cf_sb_addf(&sb, "%s%s", sb.len ? " " : "", inv->ptx[i].name);
    for (size_t i = 0; i < inv->n_ltoir; i++)
        cf_sb_addf(&sb, "%s%s", sb.len ? " " : "", inv->ltoir[i].name);
    for (size_t i = 0; i < inv->amd_targets.n; i++)
        cf_sb_addf(&sb, "%s%s", sb.len ? " " : "", inv->amd_targets.v[i]);
    return cf_sb_detach(&sb);
}

static char *elf_inventory_text(const char *path, struct cf_gpucode_inventory *inv)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    if (cf_elf_open(path, &elf, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    if (cf_gpucode_inventory(elf, inv, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    cf_elf_close(elf);
    return inventory_text(inv);
}

static char *buffer_inventory_text(const char *path, struct cf_gpucode_inventory *inv,
                                   struct strbuf *bytes)
{
    cf_error err = CF_ERROR_INIT;
    cf_sb_reset(bytes);
    if (cf_read_file(path, 64u << 20, bytes, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    if (cf_gpucode_inventory_buffer((const uint8_t *)bytes->buf, bytes->len, path, inv, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    return inventory_text(inv);
}

/* cuobjdump --list-elf / --list-ptx names "<file>.<n>.sm_90.cubin"; collect the
 * sorted unique "sm_90" parts, space-separated. */
static char *cuobjdump_archs(const char *cuobjdump, const char *option, const char *file,
                             const char *prefix)
{
    const char *argv[] = { cuobjdump, option, file, NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.null_stdin = 1;
    o.timeout_s = 120;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_spawn_run(argv, &o, &r, &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    struct strvec lines = STRVEC_INIT, seen = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    for (size_t i = 0; i < lines.n; i++) {
        const char *sm = strstr(lines.v[i], ".sm_");
        if (!sm)
            continue;
        const char *dot = strchr(sm + 1, '.');
        char *arch = cf_asprintf("%s%.*s", prefix, (int)(dot ? dot - sm - 4 : 0), sm + 4);
        if (!cf_strvec_contains(&seen, arch))
            cf_strvec_push(&seen, arch);
        free(arch);
    }
    /* sort by number: sm_75 < sm_100 */
    for (size_t i = 1; i < seen.n; i++)
        for (size_t j = i; j > 0 && atoi(seen.v[j - 1] + strlen(prefix)) > atoi(seen.v[j] + strlen(prefix)); j--) {
            char *t = seen.v[j];
            seen.v[j] = seen.v[j - 1];
            seen.v[j - 1] = t;
        }
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < seen.n; i++)
        cf_sb_addf(&sb, "%s%s", i ? " " : "", seen.v[i]);
    cf_strvec_clear(&lines);
    cf_strvec_clear(&seen);
    cf_spawn_result_release(&r);
    return cf_sb_detach(&sb);
}

/* Plain arch names without the 'f' variant, which cuobjdump does not print for SASS. */
static char *base_archs(const struct cf_arch *a, size_t n, const char *prefix)
{
    struct strbuf sb = STRBUF_INIT;
    unsigned last = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].sm == last && a[i].variant != 'a')
            continue;
        cf_sb_addf(&sb, "%s%s%u%s", sb.len ? " " : "", prefix, a[i].sm, a[i].variant == 'a' ? "a" : "");
        last = a[i].sm;
    }
    return cf_sb_detach(&sb);
}

/* ---- CUDA fatbins built by nvcc ---- */

static void test_nvcc_shared_library_two_archs_plus_ptx(void **state)
{
    char *nvcc = find_nvcc();
    if (!nvcc) {
        print_message("SKIP: nvcc not found (set NVCC or install the CUDA toolkit)\n");
        skip();
    }
    char *dir = ts_tmpdir();
    char *lib = cf_path_join(dir, "libkernel.so");
    const char *flags[] = { "-shared", "-Xcompiler", "-fPIC",
                            "-gencode", "arch=compute_75,code=sm_75",
                            "-gencode", "arch=compute_90,code=[sm_90,compute_90]", NULL };
    nvcc_build(nvcc, dir, lib, flags);
    struct cf_gpucode_inventory inv;
    char *text = elf_inventory_text(lib, &inv);
    assert_string_equal(text, "sm_75 sm_90 compute_90");
    /* Our container (sm_75, sm_90, compute_90) plus the one statically linked
     * cudart brings (its own sm_75 and sm_90 cubins); cuobjdump lists the same 5. */
    assert_int_equal(inv.fatbin_containers, 2);
    assert_int_equal(inv.fatbin_entries, 5);
    assert_null(inv.problem);
    assert_int_equal(inv.bundles, 0);

    char *cuobjdump = find_cuobjdump();
    if (cuobjdump) {
        char *elf_archs = cuobjdump_archs(cuobjdump, "--list-elf", lib, "sm_");
        char *ptx_archs = cuobjdump_archs(cuobjdump, "--list-ptx", lib, "compute_");
        assert_string_equal(elf_archs, "sm_75 sm_90");
        assert_string_equal(ptx_archs, "compute_90");
        free(elf_archs);
        free(ptx_archs);
        free(cuobjdump);
    } else {
        print_message("note: cuobjdump not found (set CUOBJDUMP); comparison skipped\n");
    }
    free(text);
    cf_gpucode_inventory_release(&inv);
    free(lib);
    free(nvcc);
}

static void test_nvcc_compressed_fatbin(void **state)
{
    char *nvcc = find_nvcc();
    if (!nvcc) {
        print_message("SKIP: nvcc not found\n");
        skip();
    }
    char *dir = ts_tmpdir();
    char *fb = cf_path_join(dir, "kernel.fatbin");
    const char *flags[] = { "-fatbin", "-Xfatbin", "-compress-all",
                            "-gencode", "arch=compute_75,code=sm_75",
                            "-gencode", "arch=compute_90,code=[sm_90,compute_90]", NULL };
    nvcc_build(nvcc, dir, fb, flags);
    struct cf_gpucode_inventory inv;
    struct strbuf bytes = STRBUF_INIT;
    char *text = buffer_inventory_text(fb, &inv, &bytes);
    assert_string_equal(text, "sm_75 sm_90 compute_90");
    assert_int_equal(inv.fatbin_entries, 3);
    assert_int_equal(inv.fatbin_compressed_entries, 3);
    free(text);
    cf_gpucode_inventory_release(&inv);

    /* Every prefix of the file: a clean error or fewer entries, never a crash
     * or a read past the end (ASan checks the latter). */
    for (size_t cut = 0; cut < bytes.len; cut++) {
        uint8_t *copy = cf_xmalloc(cut ? cut : 1);
        memcpy(copy, bytes.buf, cut);
        cf_error err = CF_ERROR_INIT;
        size_t containers = 99;
        int rc = cf_fatbin_walk(copy, cut, "cut", NULL, NULL, &containers, &err);
        if (cut == 0) {
            assert_int_equal(rc, 0);
            assert_int_equal(containers, 0);
        } else {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(cf_error_message(&err), "cut: "));
        }
        cf_error_clear(&err);
        free(copy);
    }
    cf_sb_release(&bytes);
    free(fb);
    free(nvcc);
}

static int collect_entry(const struct cf_fatbin_entry *e, void *ctx)
{
    struct strbuf *sb = ctx;
    char name[32];
    cf_fatbin_entry_name(e, name, sizeof(name));
    cf_sb_addf(sb, "%s%s%s", sb->len ? " " : "", name, e->compressed ? "(z)" : "");
    return 0;
}

static void test_nvcc_arch_and_family_specific(void **state)
{
    char *nvcc = find_nvcc();
    if (!nvcc) {
        print_message("SKIP: nvcc not found\n");
        skip();
    }
    char *dir = ts_tmpdir();
    char *fb = cf_path_join(dir, "variants.fatbin");
    const char *flags[] = { "-fatbin",
                            "-gencode", "arch=compute_90a,code=sm_90a",
                            "-gencode", "arch=compute_120f,code=[sm_120f,compute_120f]",
                            "-gencode", "arch=compute_100,code=sm_100",
                            "-gencode", "arch=compute_80,code=lto_80", NULL };
    nvcc_build(nvcc, dir, fb, flags);
    struct cf_gpucode_inventory inv;
    struct strbuf bytes = STRBUF_INIT;
    char *text = buffer_inventory_text(fb, &inv, &bytes);
    assert_string_equal(text, "sm_90a sm_100 sm_120f compute_120f lto_80");

    /* Entry by entry, in file order, with the compression nvcc chose (it
     * compresses PTX and LTO-IR by default, not SASS). */
    struct strbuf order = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_fatbin_walk((const uint8_t *)bytes.buf, bytes.len, fb, collect_entry,
                                    &order, NULL, &err), 0);
    assert_non_null(strstr(order.buf, "compute_120f(z)"));
    assert_non_null(strstr(order.buf, "sm_90a"));
    assert_null(strstr(order.buf, "sm_90a(z)"));

    char *cuobjdump = find_cuobjdump();
    if (cuobjdump) {
        /* cuobjdump prints sm_90a for SASS but drops the 'f' (sm_120), keeps it for PTX. */
        char *elf_archs = cuobjdump_archs(cuobjdump, "--list-elf", fb, "sm_");
        char *ours = base_archs(inv.sass, inv.n_sass, "sm_");
        assert_string_equal(elf_archs, ours);
        free(elf_archs);
        free(ours);
        free(cuobjdump);
    }
    cf_sb_release(&order);
    cf_sb_release(&bytes);
    free(text);
    cf_gpucode_inventory_release(&inv);
    free(fb);
    free(nvcc);
}

/* ---- the real NCCL ---- */

static void test_real_libnccl_archs(void **state)
{
    struct ts_nccl nccl;
    if (ts_find_nccl(&nccl) != 0) {
        print_message("SKIP: no libnccl.so.2 with its nccl.h found (set CUDA_HOME)\n");
        skip();
    }
    struct cf_gpucode_inventory inv;
    char *text = elf_inventory_text(nccl.lib, &inv);
    print_message("NCCL %s at %s: %s\n", nccl.version, nccl.lib, text);
    assert_true(inv.n_sass > 0);
    assert_null(inv.problem);
    assert_true(inv.fatbin_sections > 0);
    assert_true(inv.fatbin_containers > 0);
    /* Only headers are read: well under 1% of the file. */
    struct stat st;
    assert_int_equal(stat(nccl.lib, &st), 0);
    assert_true(inv.header_bytes_read < (uint64_t)st.st_size / 100);

    char *cuobjdump = find_cuobjdump();
    if (cuobjdump) {
        char *elf_archs = cuobjdump_archs(cuobjdump, "--list-elf", nccl.lib, "sm_");
        char *ptx_archs = cuobjdump_archs(cuobjdump, "--list-ptx", nccl.lib, "compute_");
        char *ours = base_archs(inv.sass, inv.n_sass, "sm_");
        char *ours_ptx = base_archs(inv.ptx, inv.n_ptx, "compute_");
        assert_string_equal(elf_archs, ours);
        assert_string_equal(ptx_archs, ours_ptx);
        free(elf_archs);
        free(ptx_archs);
        free(ours);
        free(ours_ptx);
        free(cuobjdump);
    } else {
        print_message("note: cuobjdump not found (set CUOBJDUMP); the arch list is not compared\n");
    }
    free(text);
    cf_gpucode_inventory_release(&inv);
}

/* ---- fatbin corruption by hand ---- */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* One container with one 64-byte-header entry and an 8-byte payload. */
static size_t make_fatbin(uint8_t *b, unsigned kind, unsigned arch, uint64_t flags)
{
    memset(b, 0, 88);
    put32(b, CF_FATBIN_MAGIC);
    put16(b + 4, 1);
    put16(b + 6, 16);
    put64(b + 8, 64 + 8);
    uint8_t *e = b + 16;
    put16(e, (uint16_t)kind);
    put16(e + 2, 0x0101);
    put32(e + 4, 64);
    put64(e + 8, 8);
    put32(e + 28, arch);
    put64(e + 40, flags);
    return 88;
}

static void test_fatbin_handmade_and_corrupt(void **state)
{
    uint8_t b[256];
    cf_error err = CF_ERROR_INIT;
    struct strbuf names = STRBUF_INIT;
    size_t n = make_fatbin(b, 2, 61, CF_FATBIN_FLAG_64BIT);
    /* Two containers separated by zero padding. */
    memset(b + n, 0, 8);
    make_fatbin(b + n + 8, 1, 61, CF_FATBIN_FLAG_COMPRESSED_OLD);
    size_t containers = 0;
    assert_int_equal(cf_fatbin_walk(b, 2 * n + 8, "two", collect_entry, &names, &containers, &err), 0);
    assert_int_equal(containers, 2);
    assert_string_equal(names.buf, "sm_61 compute_61(z)");
    cf_sb_release(&names);

    /* An unknown kind is reported by number, not dropped. */
    make_fatbin(b, 4, 70, 0);
    assert_int_equal(cf_fatbin_walk(b, n, "k4", collect_entry, &names, NULL, &err), 0);
    assert_string_equal(names.buf, "kind4_70");
    cf_sb_release(&names);

    struct {
        size_t at;
        int width;
        uint64_t value;
        const char *message;
    } faults[] = {
        { 0, 32, 0x12345678, "no fatbin magic" },
        { 4, 16, 2, "has version 2" },
        { 6, 16, 8, "bad header size 8" },
        { 8, 64, 1u << 20, "truncated" },
        { 8, 64, UINT64_MAX, "truncated" },
        { 20, 32, 32, "bad header size 32" },
        { 20, 32, UINT32_MAX, "bad header size" },
        { 24, 64, 9, "past its container's end" },
        { 24, 64, UINT64_MAX, "past its container's end" },
    };
    for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
        make_fatbin(b, 2, 75, 0);
        if (faults[i].width == 16)
            put16(b + faults[i].at, (uint16_t)faults[i].value);
        else if (faults[i].width == 32)
            put32(b + faults[i].at, (uint32_t)faults[i].value);
        else
            put64(b + faults[i].at, faults[i].value);
        assert_int_equal(cf_fatbin_walk(b, n, "bad.fatbin", NULL, NULL, NULL, &err), -1);
        assert_non_null(strstr(cf_error_message(&err), faults[i].message));
        assert_non_null(strstr(cf_error_message(&err), "bad.fatbin"));
        cf_error_clear(&err);
    }
}

/* ---- offload bundles ---- */

struct bundle_part {
    const char *id;
    const char *code;
};

/* Writes a plain bundle the way clang-offload-bundler lays it out (code
 * objects after the table, aligned to `align`). Returns its size. */
static size_t make_bundle(uint8_t *b, size_t cap, const struct bundle_part *parts, size_t n,
                          size_t align)
{
    size_t table = 24 + 8;
    for (size_t i = 0; i < n; i++)
        table += 24 + strlen(parts[i].id);
    size_t pos = 24 + 8, code = table;
    memset(b, 0, cap);
    memcpy(b, CF_BUNDLE_MAGIC, 24);
    put64(b + 24, n);
    for (size_t i = 0; i < n; i++) {
        code = (code + align - 1) / align * align;
        size_t len = strlen(parts[i].code), idlen = strlen(parts[i].id);
        assert_true(code + len <= cap);
        put64(b + pos, code);
        put64(b + pos + 8, len);
        put64(b + pos + 16, idlen);
        memcpy(b + pos + 24, parts[i].id, idlen);
        pos += 24 + idlen;
        memcpy(b + code, parts[i].code, len);
        code += len;
    }
    return code;
}

static const struct bundle_part amd_parts[] = {
    { "host-x86_64-unknown-linux-gnu-", "" },
    { "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "\177ELF gfx90a code" },
    { "hipv4-amdgcn-amd-amdhsa--gfx942", "\177ELF gfx942 code" },
    { "hipv4-amdgcn-amd-amdhsa--gfx928", "\177ELF gfx928 code" },
};

static int collect_bundle(const struct cf_bundle_entry *e, void *ctx)
{
    struct strbuf *sb = ctx;
    cf_sb_addf(sb, "[%s|%s|%s|%llu]", e->kind, e->triple, e->target_id,
            (unsigned long long)e->code_size);
    return 0;
}

static void test_bundle_handmade(void **state)
{
    uint8_t b[4096];
    size_t n = make_bundle(b, sizeof(b), amd_parts, 4, 8);
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    size_t bundles = 0, compressed = 9;
    assert_int_equal(cf_bundle_walk(b, n, "hand.hipfb", collect_bundle, NULL, &sb, &bundles,
                                    &compressed, &err), 0);
    assert_int_equal(bundles, 1);
    assert_int_equal(compressed, 0);
    assert_string_equal(sb.buf, "[host|x86_64-unknown-linux-gnu-||0]"
                                "[hipv4|amdgcn-amd-amdhsa-|gfx90a:xnack-|16]"
                                "[hipv4|amdgcn-amd-amdhsa-|gfx942|16]"
                                "[hipv4|amdgcn-amd-amdhsa-|gfx928|16]");
    cf_sb_release(&sb);

    struct cf_gpucode_inventory inv;
    assert_int_equal(cf_gpucode_inventory_buffer(b, n, "hand.hipfb", &inv, &err), 0);
    char *text = inventory_text(&inv);
    assert_string_equal(text, "gfx90a:xnack- gfx928 gfx942");
    free(text);
    cf_gpucode_inventory_release(&inv);

    /* Older IDs with a three-part triple: "hip-amdgcn-amd-amdhsa-gfx906". */
    const struct bundle_part old[] = { { "hip-amdgcn-amd-amdhsa-gfx906", "x" },
                                       { "openmp-x86_64-pc-linux-gnu", "y" } };
    n = make_bundle(b, sizeof(b), old, 2, 1);
    assert_int_equal(cf_bundle_walk(b, n, "old", collect_bundle, NULL, &sb, NULL, NULL, &err), 0);
    assert_string_equal(sb.buf, "[hip|amdgcn-amd-amdhsa|gfx906|1][openmp|x86_64-pc-linux-gnu||1]");
    cf_sb_release(&sb);

    /* Every prefix: the full one parses, the others fail cleanly. */
    n = make_bundle(b, sizeof(b), amd_parts, 4, 8);
    for (size_t cut = 1; cut < n; cut++) {
        uint8_t *copy = cf_xmalloc(cut);
        memcpy(copy, b, cut);
        int rc = cf_bundle_walk(copy, cut, "cut", NULL, NULL, NULL, &bundles, NULL, &err);
        assert_int_equal(rc, -1);
        assert_int_equal(bundles, 0);
        assert_non_null(strstr(cf_error_message(&err), "cut: "));
        cf_error_clear(&err);
        free(copy);
    }

    /* Hostile counts and sizes. */
    make_bundle(b, sizeof(b), amd_parts, 4, 8);
    put64(b + 24, UINT64_MAX);
    assert_int_equal(cf_bundle_walk(b, n, "big", NULL, NULL, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "entries"));
    cf_error_clear(&err);
    make_bundle(b, sizeof(b), amd_parts, 4, 8);
    put64(b + 32 + 8, UINT64_MAX); /* first entry's size */
    assert_int_equal(cf_bundle_walk(b, n, "size", NULL, NULL, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "past the end"));
    cf_error_clear(&err);
    make_bundle(b, sizeof(b), amd_parts, 4, 8);
    put64(b + 32 + 16, 1u << 30); /* first entry's ID length */
    assert_int_equal(cf_bundle_walk(b, n, "idlen", NULL, NULL, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "bad ID length"));
    cf_error_clear(&err);
}

static int collect_ccob(const struct cf_ccob_info *info, void *ctx)
{
    struct strbuf *sb = ctx;
    cf_sb_addf(sb, "[v%u %s total=%llu raw=%llu]", info->version, cf_ccob_method_name(info->method),
            (unsigned long long)info->total_size, (unsigned long long)info->uncompressed_size);
    return 0;
}

/* A CCOB bundle the way LLVM's CompressedOffloadBundle::compress writes it:
 * header, then the whole plain bundle compressed (zlib stream or zstd frame). */
static size_t make_ccob(uint8_t *b, size_t cap, unsigned version, unsigned method,
                        const uint8_t *plain, size_t plain_len, int zstd_window_log)
{
    static const size_t hsizes[] = { 0, 20, 24, 32 };
    size_t h = hsizes[version];
    size_t clen = 0;
    if (method == 0) {
        uLongf dl = (uLongf)(cap - h);
        assert_int_equal(compress2(b + h, &dl, plain, (uLong)plain_len, 6), Z_OK);
        clen = (size_t)dl;
    } else {
        ZSTD_CCtx *cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
        if (zstd_window_log) {
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1);
            ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, zstd_window_log);
        }
        clen = ZSTD_compress2(cctx, b + h, cap - h, plain, plain_len);
        assert_false(ZSTD_isError(clen));
        ZSTD_freeCCtx(cctx);
    }
    memcpy(b, "CCOB", 4);
    put16(b + 4, (uint16_t)version);
    put16(b + 6, (uint16_t)method);
    if (version == 1) {
        put32(b + 8, (uint32_t)plain_len);
        put64(b + 12, 0x1234);
    } else if (version == 2) {
        put32(b + 8, (uint32_t)(h + clen));
        put32(b + 12, (uint32_t)plain_len);
        put64(b + 16, 0x1234);
    } else {
        put64(b + 8, h + clen);
        put64(b + 16, plain_len);
        put64(b + 24, 0x1234);
    }
    return h + clen;
}

static void test_compressed_bundles(void **state)
{
    /* A zstd v3 bundle (gfx90a, gfx942), padding, a zlib v2 bundle (gfx928),
     * padding, then a plain bundle (gfx942 again). */
    uint8_t plain[4096], b[8192];
    memset(b, 0, sizeof(b));
    size_t plen = make_bundle(plain, sizeof(plain), amd_parts, 3, 64);
    size_t n1 = make_ccob(b, 2048, 3, 1, plain, plen, 0);
    size_t plen2 = make_bundle(plain, sizeof(plain), amd_parts + 3, 1, 8);
    size_t n2 = make_ccob(b + 2048, 2048, 2, 0, plain, plen2, 0);
    size_t n3 = make_bundle(b + 4096, 4096, amd_parts + 2, 1, 8);
    size_t len = 4096 + n3;
    struct strbuf sb = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    size_t bundles = 0, compressed = 0;
    assert_int_equal(cf_bundle_walk(b, len, "mixed", collect_bundle, collect_ccob, &sb, &bundles,
                                    &compressed, &err), 0);
    char *want = cf_asprintf("[v3 zstd total=%zu raw=%zu][host|x86_64-unknown-linux-gnu-||0]"
                             "[hipv4|amdgcn-amd-amdhsa-|gfx90a:xnack-|16]"
                             "[hipv4|amdgcn-amd-amdhsa-|gfx942|16]"
                             "[v2 zlib total=%zu raw=%zu][hipv4|amdgcn-amd-amdhsa-|gfx928|16]"
                             "[hipv4|amdgcn-amd-amdhsa-|gfx942|16]",
                             n1, plen, n2, plen2);
    assert_string_equal(sb.buf, want);
    free(want);
    assert_int_equal(bundles, 3);
    assert_int_equal(compressed, 2);
    cf_sb_release(&sb);

    struct cf_gpucode_inventory inv;
    assert_int_equal(cf_gpucode_inventory_buffer(b, len, "mixed", &inv, &err), 0);
    assert_int_equal(inv.compressed_bundles, 2);
    char *text = inventory_text(&inv);
    assert_string_equal(text, "gfx90a:xnack- gfx928 gfx942");
    free(text);
    assert_null(inv.problem);
    cf_gpucode_inventory_release(&inv);

    /* Corrupt compressed data: a clean error naming the codec. */
    uint8_t bad[256];
    size_t nb = make_ccob(bad, sizeof(bad), 3, 1, plain, plen2, 0);
    memset(bad + 32 + 6, 0xFF, nb - 32 - 6);
    assert_int_equal(cf_bundle_walk(bad, nb, "bad", collect_bundle, NULL, &sb, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "zstd"));
    cf_error_clear(&err);
    cf_sb_release(&sb);
    nb = make_ccob(bad, sizeof(bad), 2, 0, plain, plen2, 0);
    memset(bad + 24 + 2, 0x55, nb - 24 - 2);
    assert_int_equal(cf_bundle_walk(bad, nb, "badz", collect_bundle, NULL, &sb, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "zlib"));
    cf_error_clear(&err);
    cf_sb_release(&sb);
    /* Compressed data that is not a bundle. */
    nb = make_ccob(bad, sizeof(bad), 3, 1, (const uint8_t *)"hello, not a bundle", 19, 0);
    assert_int_equal(cf_bundle_walk(bad, nb, "nb", collect_bundle, NULL, &sb, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "does not hold a bundle"));
    cf_error_clear(&err);
    /* Every truncation of a compressed bundle fails cleanly. */
    for (size_t cut = 1; cut < n1; cut++) {
        uint8_t *copy = cf_xmalloc(cut);
        memcpy(copy, b, cut);
        assert_int_equal(cf_bundle_walk(copy, cut, "cut", collect_bundle, NULL, &sb, NULL, NULL, &err), -1);
        cf_error_clear(&err);
        cf_sb_release(&sb);
        free(copy);
    }

    /* A large bundle (6 MB of code objects) compressed with zstd long-distance
     * matching and a 128 MB window, as LLVM does for big inputs: the targets
     * come from the first block, without the window's memory. */
    size_t big = 6u << 20;
    uint8_t *bigplain = cf_xmalloc(big + 4096), *bigc = cf_xmalloc(big + (1u << 20));
    const struct bundle_part two[] = { { "hipv4-amdgcn-amd-amdhsa--gfx90a", "x" },
                                       { "hipv4-amdgcn-amd-amdhsa--gfx942", "y" } };
    size_t tl = make_bundle(bigplain, 4096, two, 2, 64);
    uint32_t x = 12345;
    for (size_t i = tl; i < big; i++) {
        x = x * 1103515245u + 12345u;
        bigplain[i] = (uint8_t)(x >> 24);
    }
    put64(bigplain + 32 + 8, big / 2 - 8192);                      /* gfx90a object size */
    put64(bigplain + 32 + 24 + 31, big / 2);                       /* gfx942 object offset */
    put64(bigplain + 32 + 24 + 31 + 8, big - big / 2);             /* and size */
    size_t nbig = make_ccob(bigc, big + (1u << 20), 3, 1, bigplain, big, 27);
    assert_int_equal(cf_gpucode_inventory_buffer(bigc, nbig, "big", &inv, &err), 0);
    text = inventory_text(&inv);
    assert_string_equal(text, "gfx90a gfx942");
    assert_null(inv.problem);
    free(text);
    cf_gpucode_inventory_release(&inv);
    free(bigplain);
    free(bigc);

    /* v1 stores no size: it runs to the next bundle magic. */
    uint8_t v1[128];
    memset(v1, 0xEE, sizeof(v1));
    memcpy(v1, "CCOB", 4);
    put16(v1 + 4, 1);
    put16(v1 + 6, 1);
    memset(v1 + 64, 0, 64);
    memcpy(v1 + 64, "CCOB", 4);
    put16(v1 + 68, 1);
    put16(v1 + 70, 1);
    assert_int_equal(cf_bundle_walk(v1, 84, "v1", NULL, collect_ccob, &sb, &bundles, &compressed,
                                    &err), 0);
    assert_int_equal(compressed, 2);
    cf_sb_release(&sb);

    /* Faults: unknown version, size past the end, truncated header. */
    put16(b + 4, 7);
    assert_int_equal(cf_bundle_walk(b, len, "ver", NULL, NULL, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "unknown version 7"));
    cf_error_clear(&err);
    put16(b + 4, 3);
    put64(b + 8, 1u << 20);
    assert_int_equal(cf_bundle_walk(b, len, "size", NULL, NULL, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "truncated or corrupt"));
    cf_error_clear(&err);
    assert_int_equal(cf_bundle_walk(b, 20, "short", NULL, NULL, NULL, NULL, NULL, &err), -1);
    assert_non_null(strstr(cf_error_message(&err), "truncated"));
    cf_error_clear(&err);
    /* Neither format: a clean error from the buffer entry point. */
    assert_int_equal(cf_gpucode_inventory_buffer((const uint8_t *)"hello", 5, "x", &inv, &err), -1);
    cf_error_clear(&err);
}

/* A real bundle from clang-offload-bundler, alone and embedded in a shared
 * library's .hip_fatbin section the way hipcc places it. */
static void test_bundle_from_clang_offload_bundler(void **state)
{
    char *bundler = find_bundler();
    if (!bundler) {
        print_message("SKIP: clang-offload-bundler not found (Debian package clang-tools)\n");
        skip();
    }
    char *dir = ts_tmpdir();
    char *a = ts_write(dir, "a.co", "\177ELF gfx90a");
    char *b = ts_write(dir, "b.co", "\177ELF gfx942 code object");
    char *c = ts_write(dir, "c.co", "\177ELF gfx928");
    char *out = cf_path_join(dir, "kernels.hipfb");
    char *inputs = cf_asprintf("-inputs=/dev/null,%s,%s,%s", a, b, c);
    char *outputs = cf_asprintf("-outputs=%s", out);
    const char *argv[] = { bundler, "-type=o", "-bundle-align=4096",
                           "-targets=host-x86_64-unknown-linux-gnu,"
                           "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-,"
                           "hipv4-amdgcn-amd-amdhsa--gfx942,hipv4-amdgcn-amd-amdhsa--gfx928",
                           inputs, outputs, NULL };
    ts_run_ok(argv);

    struct cf_gpucode_inventory inv;
    struct strbuf bytes = STRBUF_INIT;
    char *text = buffer_inventory_text(out, &inv, &bytes);
    assert_string_equal(text, "gfx90a:xnack- gfx928 gfx942");
    assert_int_equal(inv.bundles, 1);
    free(text);
    cf_gpucode_inventory_release(&inv);

    /* Two bundles back to back in .hip_fatbin, 4096-aligned like hipcc's. */
    char *src = cf_asprintf("__asm__(\".section .hip_fatbin,\\\"a\\\"\\n.p2align 12\\n"
                            ".incbin \\\"%s\\\"\\n.p2align 12\\n.incbin \\\"%s\\\"\\n.previous\");\n"
                            "int hip_fixture(void) { return 1; }\n",
                            out, out);
    char *lib = cf_path_join(dir, "libhipfixture.so");
    ts_cc(dir, lib, src, "-shared", "-fPIC", NULL);
    text = elf_inventory_text(lib, &inv);
    assert_string_equal(text, "gfx90a:xnack- gfx928 gfx942");
    assert_int_equal(inv.bundle_sections, 1);
    assert_int_equal(inv.bundles, 2);
    assert_null(inv.problem);
    assert_int_equal(inv.n_sass, 0);
    free(text);
    cf_gpucode_inventory_release(&inv);

    cf_sb_release(&bytes);
    free(src);
    free(lib);
    free(inputs);
    free(outputs);
    free(out);
    free(bundler);
}

/* An in-memory image (read through the mapped bytes, not the file), even when
 * labelled with the path of a different file. */
static void test_memory_image_uses_its_own_bytes(void **state)
{
    struct ts_nccl nccl;
    if (ts_find_nccl(&nccl) != 0) {
        print_message("SKIP: no libnccl.so.2 with its nccl.h found (set CUDA_HOME)\n");
        skip();
    }
    char *dir = ts_tmpdir();
    char *lib = cf_path_join(dir, "libhip.so");
    /* A small ELF with a fatbin section: bytes of a handmade container. */
    ts_cc(dir, lib,
          "__attribute__((section(\".nv_fatbin\"), used, aligned(8)))\n"
          "const unsigned char fatbin[88] = { 0x50,0xED,0x55,0xBA, 1,0, 16,0, 72,0,0,0,0,0,0,0,\n"
          "  2,0, 1,1, 64,0,0,0, 8,0,0,0,0,0,0,0, 0,0,0,0, 0,0,0,0, 1,0, 8,0, 37,0,0,0 };\n",
          "-shared", "-fPIC", NULL);
    struct strbuf bytes = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    assert_int_equal(cf_read_file(lib, 1u << 20, &bytes, &err), 0);
    const char *labels[] = { "in-memory", nccl.lib, lib };
    for (size_t i = 0; i < 3; i++) {
        struct cf_elf *elf = NULL;
        assert_int_equal(cf_elf_open_memory(bytes.buf, bytes.len, labels[i], &elf, &err), 0);
        struct cf_gpucode_inventory inv;
        assert_int_equal(cf_gpucode_inventory(elf, &inv, &err), 0);
        char *text = inventory_text(&inv);
        assert_string_equal(text, "sm_37");
        free(text);
        cf_gpucode_inventory_release(&inv);
        cf_elf_close(elf);
    }
    /* Opened from the file, the headers are read with pread, not the mapping. */
    struct cf_gpucode_inventory inv;
    char *text = elf_inventory_text(lib, &inv);
    assert_string_equal(text, "sm_37");
    assert_true(inv.file_bytes_read > 0);
    free(text);
    cf_gpucode_inventory_release(&inv);
    cf_sb_release(&bytes);
    free(lib);
}

/* A file with no GPU code has an empty inventory and no problem. */
static void test_plain_library_has_no_gpu_code(void **state)
{
    char *dir = ts_tmpdir();
    char *lib = cf_path_join(dir, "libplain.so");
    ts_cc(dir, lib, "int plain(void) { return 2; }\n", "-shared", "-fPIC", NULL);
    struct cf_gpucode_inventory inv;
    char *text = elf_inventory_text(lib, &inv);
    assert_string_equal(text, "");
    assert_int_equal(inv.fatbin_sections + inv.bundle_sections, 0);
    assert_null(inv.problem);
    free(text);
    cf_gpucode_inventory_release(&inv);
    free(lib);
}

/* A corrupt .nv_fatbin section: the inventory keeps what it read and says why it stopped. */
static void test_corrupt_section_reports_problem(void **state)
{
    char *dir = ts_tmpdir();
    uint8_t b[88];
    make_fatbin(b, 2, 86, 0);
    put64(b + 8, 4096); /* claims more than the section holds */
    struct strbuf arr = STRBUF_INIT;
    for (size_t i = 0; i < sizeof(b); i++)
        cf_sb_addf(&arr, "%s%u", i ? "," : "", b[i]);
    char *src = cf_asprintf("__attribute__((section(\".nv_fatbin\"), used, aligned(8)))\n"
                            "const unsigned char fatbin[] = { %s };\n",
                            arr.buf);
    char *lib = cf_path_join(dir, "libcorrupt.so");
    ts_cc(dir, lib, src, "-shared", "-fPIC", NULL);
    struct cf_gpucode_inventory inv;
    char *text = elf_inventory_text(lib, &inv);
    assert_string_equal(text, "");
    assert_non_null(inv.problem);
    assert_non_null(strstr(inv.problem, "section .nv_fatbin"));
    assert_non_null(strstr(inv.problem, "truncated"));
    free(text);
    cf_gpucode_inventory_release(&inv);
    cf_sb_release(&arr);
    free(src);
    free(lib);
}

static int teardown(void **state)
{
    ts_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_nvcc_shared_library_two_archs_plus_ptx, teardown),
        cmocka_unit_test_teardown(test_nvcc_compressed_fatbin, teardown),
        cmocka_unit_test_teardown(test_nvcc_arch_and_family_specific, teardown),
        cmocka_unit_test_teardown(test_real_libnccl_archs, teardown),
        cmocka_unit_test_teardown(test_fatbin_handmade_and_corrupt, teardown),
        cmocka_unit_test_teardown(test_bundle_handmade, teardown),
        cmocka_unit_test_teardown(test_compressed_bundles, teardown),
        cmocka_unit_test_teardown(test_bundle_from_clang_offload_bundler, teardown),
        cmocka_unit_test_teardown(test_memory_image_uses_its_own_bytes, teardown),
        cmocka_unit_test_teardown(test_plain_library_has_no_gpu_code, teardown),
        cmocka_unit_test_teardown(test_corrupt_section_reports_problem, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
