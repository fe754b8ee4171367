#include "testsupport.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
