#include "testsupport.h"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

static struct strvec tmpdirs = STRVEC_INIT;
static struct strvec owned = STRVEC_INIT;
static size_t skipped_tests;

void ts_note_skip(void)
{
    skipped_tests++;
}

int ts_run_group(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                 CMFixtureFunction teardown)
{
    int failed = _cmocka_run_group_tests(name, tests, n, setup, teardown);
    if (failed == 0 && n > 0 && skipped_tests >= n) {
        printf("SKIP: every test in %s skipped (a prerequisite is missing; the reasons are above): exit 77\n", name);
        return 77;
    }
    return failed;
}

char *ts_tmpdir(void)
{
    cf_error err = CF_ERROR_INIT;
    char *d = cf_mkdtemp(NULL, "cclforge-test-", &err);
    if (!d)
        fail_msg("%s", cf_error_message(&err));
    cf_strvec_push_nodup(&tmpdirs, d);
    return d;
}

void ts_cleanup(void)
{
    if (!getenv("CCLFORGE_KEEP_TMP"))
        for (size_t i = 0; i < tmpdirs.n; i++)
            cf_rm_rf(tmpdirs.v[i], NULL);
    cf_strvec_clear(&tmpdirs);
    cf_strvec_clear(&owned);
}

char *ts_write(const char *dir, const char *name, const char *text)
{
    char *path = cf_path_join(dir, name);
    char *parent = cf_dirname(path);
    cf_error err = CF_ERROR_INIT;
    if (cf_mkdir_p(parent, 0755, &err) != 0 || cf_write_file_atomic(path, text, strlen(text), &err) != 0)
        fail_msg("%s", cf_error_message(&err));
    free(parent);
    cf_strvec_push_nodup(&owned, path);
    return path;
}

int ts_run(const char *const *argv)
{
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.merge_stderr = 1;
    o.null_stdin = 1;
    o.timeout_s = 300;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_spawn_run(argv, &o, &r, &err) != 0) {
        print_message("%s\n", cf_error_message(&err));
        cf_error_clear(&err);
        return -1;
    }
    int rc = cf_spawn_ok(&r) ? 0 : (r.exited ? r.exit_code : -1);
    if (rc != 0)
        print_message("command %s failed:\n%s\n", argv[0], cf_sb_str(&r.out));
    cf_spawn_result_release(&r);
    return rc;
}

void ts_run_ok(const char *const *argv)
{
    if (ts_run(argv) != 0)
        fail_msg("command failed: %s", argv[0]);
}

const char *ts_cc(const char *dir, const char *out, const char *source, ...)
{
    char *src = cf_asprintf("%s.c", out);
    char *srcpath = ts_write(dir, cf_basename(src), source);
    free(src);
    struct strvec argv = STRVEC_INIT;
    const char *cc = getenv("CC");
    cf_strvec_push(&argv, cc && *cc ? cc : "cc");
    cf_strvec_push(&argv, "-o");
    cf_strvec_push(&argv, out);
    cf_strvec_push(&argv, srcpath);
    va_list ap;
    va_start(ap, source);
    for (const char *f; (f = va_arg(ap, const char *)) != NULL;)
        cf_strvec_push(&argv, f);
    va_end(ap);
    ts_run_ok((const char *const *)cf_strvec_argv(&argv));
    cf_strvec_clear(&argv);
    return out;
}

int ts_have(const char *prog)
{
    char *p = cf_which(prog);
    free(p);
    return p != NULL;
}

static const char *own(char *s)
{
    cf_strvec_push(&owned, s);
    free(s);
    return owned.v[owned.n - 1];
}

static int is_toolkit(const char *root)
{
    char *h = cf_path_join(root, "include/cuda.h"), *n = cf_path_join(root, "bin/nvcc");
    int yes = cf_is_file(h) || access(n, X_OK) == 0;
    free(h);
    free(n);
    return yes;
}

static int newest_first(const void *a, const void *b)
{
    return strverscmp(*(char *const *)b, *(char *const *)a);
}

const char *ts_cuda_root(void)
{
    struct strvec c = STRVEC_INIT;
    const char *envs[] = { "CUDA_HOME", "CUDA_PATH" };
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++)
        if (getenv(envs[i]) && *getenv(envs[i]))
            cf_strvec_push(&c, getenv(envs[i]));
    char *nvcc = cf_which("nvcc");
    if (nvcc && cf_ends_with(nvcc, "/bin/nvcc")) {
        nvcc[strlen(nvcc) - strlen("/bin/nvcc")] = '\0';
        cf_strvec_push(&c, nvcc);
    }
    free(nvcc);
    cf_strvec_push(&c, "/usr/local/cuda");
    glob_t g;
    if (glob("/usr/local/cuda-*", GLOB_ONLYDIR, NULL, &g) == 0) {
        qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, newest_first);
        for (size_t i = 0; i < g.gl_pathc; i++)
            cf_strvec_push(&c, g.gl_pathv[i]);
        globfree(&g);
    }
    cf_strvec_push(&c, "/opt/cuda");
    const char *root = NULL;
    for (size_t i = 0; !root && i < c.n; i++)
        if (is_toolkit(c.v[i]))
            root = own(cf_strdup(c.v[i]));
    cf_strvec_clear(&c);
    return root;
}

const char *ts_cuda_tool(const char *name)
{
    const char *root = ts_cuda_root();
    if (root) {
        char *p = cf_asprintf("%s/bin/%s", root, name);
        if (access(p, X_OK) == 0)
            return own(p);
        free(p);
    }
    char *p = cf_which(name);
    return p ? own(p) : NULL;
}

/* the value of `#define name N` in the header text h (starting with a newline), or -1 */
static long header_define(const char *h, const char *name)
{
    char *pat = cf_asprintf("\n#define %s ", name);
    const char *at = strstr(h, pat);
    long v = -1;
    if (at) {
        char *end;
        v = strtol(at + strlen(pat), &end, 10);
        if (end == at + strlen(pat))
            v = -1;
    }
    free(pat);
    return v;
}

long ts_cuda_version(void)
{
    const char *root = ts_cuda_root();
    if (!root)
        return -1;
    char *path = cf_path_join(root, "include/cuda.h");
    struct strbuf h = STRBUF_INIT;
    cf_error err = CF_ERROR_INIT;
    cf_sb_addc(&h, '\n');
    long v = cf_read_file(path, 4 << 20, &h, &err) == 0 ? header_define(h.buf, "CUDA_VERSION") : -1;
    cf_error_clear(&err);
    cf_sb_release(&h);
    free(path);
    return v;
}

static int nccl_from(const char *lib, const char *cuda, struct ts_nccl *out)
{
    char *parent = cf_dirname(lib);
    char *dir = cf_realpath(parent);
    free(parent);
    if (!dir || !cf_is_file(lib))
        goto no;
    char *up = cf_dirname(dir), *up2 = cf_dirname(up);
    char *headers[] = { cf_path_join(up, "include/nccl.h"), cf_path_join(up2, "include/nccl.h"),
                        cuda ? cf_path_join(cuda, "include/nccl.h") : NULL };
    free(up);
    free(up2);
    int found = 0;
    for (size_t i = 0; !found && i < sizeof headers / sizeof headers[0]; i++) {
        struct strbuf h = STRBUF_INIT;
        cf_error err = CF_ERROR_INIT;
        cf_sb_addc(&h, '\n'); /* a define on the first line is found too */
        if (headers[i] && cf_read_file(headers[i], 1 << 20, &h, &err) == 0) {
            long maj = header_define(h.buf, "NCCL_MAJOR"), min = header_define(h.buf, "NCCL_MINOR"),
                 pat = header_define(h.buf, "NCCL_PATCH"), code = header_define(h.buf, "NCCL_VERSION_CODE");
            /* a library named for its version (libnccl.so.2.28.9) must be the header's */
            char *real = cf_realpath(lib);
            char *named = cf_asprintf("libnccl.so.%ld.%ld.%ld", maj, min, pat);
            const char *base = real ? cf_basename(real) : "";
            int dots = 0;
            for (const char *p = base; *p; p++)
                dots += *p == '.';
            if (maj >= 0 && min >= 0 && pat >= 0 && code >= 0 && (dots < 5 || !strcmp(base, named))) {
                out->lib = own(cf_path_join(dir, "libnccl.so.2"));
                out->dir = own(cf_strdup(dir));
                out->header = own(cf_strdup(headers[i]));
                out->major = (int)maj, out->minor = (int)min, out->patch = (int)pat, out->code = code;
                snprintf(out->version, sizeof out->version, "%ld.%ld.%ld", maj, min, pat);
                found = 1;
            }
            free(real);
            free(named);
        }
        cf_error_clear(&err);
        cf_sb_release(&h);
    }
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        free(headers[i]);
    free(dir);
    return found ? 0 : -1;
no:
    free(dir);
    return -1;
}

static void push_free(struct strvec *v, char *s)
{
    cf_strvec_push(v, s);
    free(s);
}

int ts_find_nccl(struct ts_nccl *out)
{
    memset(out, 0, sizeof *out);
    struct strvec c = STRVEC_INIT;
    const char *cuda = ts_cuda_root();
    struct utsname u;
    const char *machine = uname(&u) == 0 ? u.machine : "x86_64";
    if (cuda) {
        push_free(&c, cf_asprintf("%s/lib64/libnccl.so.2", cuda));
        push_free(&c, cf_asprintf("%s/lib/libnccl.so.2", cuda));
        push_free(&c, cf_asprintf("%s/targets/%s-linux/lib/libnccl.so.2", cuda, machine));
    }
    FILE *p = popen("/sbin/ldconfig -p 2>/dev/null", "r");
    char line[4096];
    while (p && fgets(line, sizeof line, p)) {
        const char *arrow = strstr(line, " => ");
        if (strstr(line, "\tlibnccl.so.2 (") == line && arrow) {
            line[strcspn(line, "\n")] = '\0';
            cf_strvec_push(&c, arrow + 4);
        }
    }
    if (p)
        pclose(p);
    push_free(&c, cf_asprintf("/usr/lib/%s-linux-gnu/libnccl.so.2", machine));
    cf_strvec_push(&c, "/usr/lib64/libnccl.so.2");
    cf_strvec_push(&c, "/usr/lib/libnccl.so.2");
    cf_strvec_push(&c, "/usr/local/lib/libnccl.so.2");
    int rc = -1;
    for (size_t i = 0; rc != 0 && i < c.n; i++)
        rc = nccl_from(c.v[i], cuda, out);
    cf_strvec_clear(&c);
    return rc;
}

void ts_drop_section_headers(uint8_t *ehdr)
{
    if (ehdr[EI_CLASS] == ELFCLASS64) {
        memset(ehdr + offsetof(Elf64_Ehdr, e_shoff), 0, sizeof(Elf64_Off));
        memset(ehdr + offsetof(Elf64_Ehdr, e_shnum), 0, 2 * sizeof(Elf64_Half)); /* and e_shstrndx */
    } else {
        memset(ehdr + offsetof(Elf32_Ehdr, e_shoff), 0, sizeof(Elf32_Off));
        memset(ehdr + offsetof(Elf32_Ehdr, e_shnum), 0, 2 * sizeof(Elf32_Half));
    }
}

void ts_strip_section_headers(const char *path)
{
    uint8_t ehdr[sizeof(Elf64_Ehdr)];
    int fd = open(path, O_RDWR);
    if (fd < 0 || pread(fd, ehdr, sizeof ehdr, 0) != (ssize_t)sizeof ehdr)
        fail_msg("%s: cannot read its ELF header", path);
    ts_drop_section_headers(ehdr);
    if (pwrite(fd, ehdr, sizeof ehdr, 0) != (ssize_t)sizeof ehdr)
        fail_msg("%s: cannot rewrite its ELF header", path);
    close(fd);
}
