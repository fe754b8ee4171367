/* cf_getrandom and cf_renameat2 on this kernel, and on a kernel without the
 * calls: a child process installs a seccomp filter that answers ENOSYS for
 * them, as CentOS 7's 3.10 kernel does, and the fallbacks must then do the job. */
#include "testsupport.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cclforge/strbuf.h"
#include "cclforge/syscompat.h"

/* The calling thread's syscalls nr1 and nr2 fail with ENOSYS from now on. */
static int deny_as_old_kernel(long nr1, long nr2)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr1, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr2, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
    };
    struct sock_fprog prog = { .len = sizeof code / sizeof code[0], .filter = code };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int nonzero(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 1;
    return 0;
}

static void mkfile(const char *dir, const char *name, const char *text)
{
    ts_write(dir, name, text);
}

static int file_says(const char *dir, const char *name, const char *text)
{
    char *p = cf_asprintf("%s/%s", dir, name);
    char buf[64] = { 0 };
    FILE *f = fopen(p, "r");
    free(p);
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

/* Each check, in whichever process runs it: 0 when all hold, else the number of the first that failed. */
static int checks(const char *dir)
{
    unsigned char buf[256] = { 0 };
    if (cf_getrandom(buf, sizeof buf, 0) != (ssize_t)sizeof buf || !nonzero(buf, sizeof buf))
        return 1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd < 0)
        return 2;
    mkfile(dir, "a", "A");
    mkfile(dir, "b", "B");
    if (cf_renameat2(dfd, "a", dfd, "b", RENAME_NOREPLACE) == 0 || errno != EEXIST)
        return 3;
    if (!file_says(dir, "a", "A") || !file_says(dir, "b", "B"))
        return 4;
    if (cf_renameat2(dfd, "a", dfd, "b", RENAME_EXCHANGE) != 0)
        return 5;
    if (!file_says(dir, "a", "B") || !file_says(dir, "b", "A"))
        return 6;
    if (cf_renameat2(dfd, "a", dfd, "c", RENAME_NOREPLACE) != 0 || !file_says(dir, "c", "B"))
        return 7;
    if (cf_renameat2(dfd, "missing", dfd, "b", RENAME_EXCHANGE) == 0)
        return 8;
    if (!file_says(dir, "b", "A"))
        return 9;
    close(dfd);
    return 0;
}

static void test_on_this_kernel(void **state)
{
    (void)state;
    assert_int_equal(checks(ts_tmpdir()), 0);
}

static void test_on_a_kernel_without_the_calls(void **state)
{
    (void)state;
    char *dir = ts_tmpdir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (deny_as_old_kernel(SYS_getrandom, SYS_renameat2) < 0)
            _exit(100);
        /* the filter is in force: the raw calls fail as on the old kernel */
        char b[4];
        if (syscall(SYS_getrandom, b, sizeof b, 0) != -1 || errno != ENOSYS)
            _exit(101);
        _exit(checks(dir));
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 100)
        skip(); /* seccomp unavailable here */
    assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_on_this_kernel),
        cmocka_unit_test(test_on_a_kernel_without_the_calls),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_cleanup();
    return rc;
}
