/* Corpus check: for every shared object in the system library directory (and
 * CUDA's, when present), the closure cclforge resolves equals what ldd prints,
 * object for object, in ldd's order. ldd runs the system loader in trace mode;
 * it is the incumbent we compare with, used here only.
 *
 * A second pass compares the symbol check with `ldd -r` (undefined symbols and
 * missing versions, as sets per file).
 *
 * Each pass is capped by CCLFORGE_CORPUS_SECONDS (default 15) so the suite stays
 * quick on a shared 2-core machine; files are visited in a fixed (sorted) order
 * and the counts are printed. Set it to 0 for no cap. */
#include "testsupport.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/ldso.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"
#include "cclforge/symcheck.h"
#include "ts_ldd.h"

static int is_elf_file(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0; /* symlinks name a file we visit under its own name */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char magic[4];
    int ok = read(fd, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0;
    close(fd);
    return ok;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void collect(const char *dir, struct strvec *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct strvec names = STRVEC_INIT;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, ".so"))
            cf_strvec_push(&names, e->d_name);
    closedir(d);
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
    for (size_t i = 0; i < names.n; i++) {
        char *p = cf_path_join(dir, names.v[i]);
        if (is_elf_file(p))
            cf_strvec_push(out, p);
        free(p);
    }
    cf_strvec_clear(&names);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_corpus_matches_ldd(void **state)
{
    if (!ts_have("ldd")) {
        print_message("skipped: ldd not installed\n");
        skip();
    }
    struct strvec files = STRVEC_INIT;
    collect("/usr/lib/x86_64-linux-gnu", &files);
    if (ts_cuda_root()) {
        char *cuda_lib = cf_path_join(ts_cuda_root(), "lib64");
        collect(cuda_lib, &files);
        free(cuda_lib);
    }
    if (files.n == 0) {
        print_message("skipped: no shared objects in /usr/lib/x86_64-linux-gnu\n");
        skip();
    }
    const char *cap_env = getenv("CCLFORGE_CORPUS_SECONDS");
    double cap = cap_env ? atof(cap_env) : 15.0;
    const char *llp = getenv("LD_LIBRARY_PATH");
    double start = now(), ours_s = 0, ldd_s = 0;
    size_t compared = 0, identical = 0, ldd_refused = 0, different = 0, missing_seen = 0, static_like = 0;
    struct strbuf report = STRBUF_INIT;
    for (size_t i = 0; i < files.n; i++) {
        if (cap > 0 && now() - start > cap)
            break;
        const char *f = files.v[i];
        double t0 = now();
        struct ts_ldd l;
        if (ts_ldd_run(f, llp, &l) != 0)
            fail_msg("could not run ldd");
        double t1 = now();
        ldd_s += t1 - t0;
        int no_deps = l.ran && l.n == 0 && strstr(l.raw, "statically linked") != NULL;
        if (!l.ran || (l.n == 0 && !no_deps)) {
            /* "not a dynamic executable", or ldd failed (e.g. a foreign-class
             * object): nothing to compare. */
            ldd_refused++;
            ts_ldd_release(&l);
            continue;
        }
        struct cf_ldso_result r;
        cf_error err = CF_ERROR_INIT;
        t0 = now();
        int rc = cf_ldso_resolve(f, NULL, &r, &err);
        ours_s += now() - t0;
        compared++;
        if (rc == 0 && no_deps) {
            /* ldd says "statically linked" for an object without DT_NEEDED. */
            if (r.n_nodes == 1)
                identical++, static_like++;
            else
                different++, cf_sb_addf(&report, "%s: ldd lists no dependencies, cclforge %zu\n", f, r.n_nodes - 1);
            cf_ldso_result_release(&r);
            ts_ldd_release(&l);
            continue;
        }
        if (rc != 0) {
            different++;
            cf_sb_addf(&report, "%s: cclforge error: %s\n", f, cf_error_message(&err));
            cf_error_clear(&err);
            ts_ldd_release(&l);
            continue;
        }
        missing_seen += r.n_missing;
        char *diff = ts_ldd_compare(&r, &l);
        if (diff) {
            different++;
            if (different <= 5)
                cf_sb_addf(&report, "%s:\n%s\n", f, diff);
            free(diff);
        } else {
            identical++;
        }
        cf_ldso_result_release(&r);
        ts_ldd_release(&l);
    }
    print_message("corpus: %zu files, %zu compared, %zu identical to ldd (%zu without dependencies), %zu different, "
                  "%zu not listable by ldd, %zu missing deps seen; %.1fs ldd, %.2fs cclforge%s\n",
                  files.n, compared, identical, static_like, different, ldd_refused, missing_seen, ldd_s, ours_s,
                  compared + ldd_refused < files.n ? " (capped: CCLFORGE_CORPUS_SECONDS)" : "");
    if (different)
        fail_msg("%zu objects resolve differently from ldd:\n%s", different, cf_sb_str(&report));
    assert_true(compared > 0);
    cf_sb_release(&report);
    cf_strvec_clear(&files);
}

/* ldd -r's problem lines, with the program-name prefix of version lines removed
 * ("prog: /lib/x.so: version `V' not found ..." -> "/lib/x.so: version ..."). */
static void ldd_r_lines(const char *file, const char *llp, struct strvec *out, double *seconds)
{
    const char *argv[] = { "ldd", "-r", file, NULL };
    char *set = llp ? cf_asprintf("LD_LIBRARY_PATH=%s", llp) : cf_strdup("LD_LIBRARY_PATH");
    const char *env[] = { set, NULL };
    struct cf_spawn_opts o = { 0 };
    o.capture_stdout = 1;
    o.merge_stderr = 1;
    o.null_stdin = 1;
    o.timeout_s = 120;
    o.env_set = env;
    struct cf_spawn_result r = CF_SPAWN_RESULT_INIT;
    double t0 = now();
    assert_int_equal(cf_spawn_run(argv, &o, &r, NULL), 0);
    *seconds += now() - t0;
    struct strvec lines = STRVEC_INIT;
    cf_strvec_split(&lines, cf_sb_str(&r.out), "\n", 0);
    for (size_t i = 0; i < lines.n; i++) {
        const char *l = lines.v[i];
        const char *v = strstr(l, ": version `");
        if (strncmp(l, "undefined symbol: ", 18) == 0) {
            cf_strvec_push(out, l);
        } else if (v) {
            const char *path = strstr(l, ": /");
            cf_strvec_push(out, path && path < v ? path + 2 : l);
        }
    }
    cf_strvec_clear(&lines);
    cf_spawn_result_release(&r);
    free(set);
}

static void test_corpus_symbols_match_ldd_r(void **state)
{
    if (!ts_have("ldd")) {
        print_message("skipped: ldd not installed\n");
        skip();
    }
    struct strvec files = STRVEC_INIT;
    collect("/usr/lib/x86_64-linux-gnu", &files);
    if (ts_cuda_root()) {
        char *cuda_lib = cf_path_join(ts_cuda_root(), "lib64");
        collect(cuda_lib, &files);
        free(cuda_lib);
    }
    const char *cap_env = getenv("CCLFORGE_CORPUS_SECONDS");
    double cap = cap_env ? atof(cap_env) : 15.0;
    const char *llp = getenv("LD_LIBRARY_PATH");
    double start = now(), ours_s = 0, ldd_s = 0;
    size_t compared = 0, identical = 0, problems = 0;
    struct strbuf report = STRBUF_INIT;
    for (size_t i = 0; i < files.n; i++) {
        if (cap > 0 && now() - start > cap)
            break;
        struct strvec theirs = STRVEC_INIT;
        ldd_r_lines(files.v[i], llp, &theirs, &ldd_s);
        struct cf_ldso_result r;
        struct cf_symcheck_result s;
        cf_error err = CF_ERROR_INIT;
        double t0 = now();
        if (cf_ldso_resolve(files.v[i], NULL, &r, &err) != 0 || cf_symcheck_run(&r, &s, &err) != 0)
            fail_msg("%s", cf_error_message(&err));
        ours_s += now() - t0;
        compared++;
        problems += s.n_problems;
        int same = theirs.n == s.n_problems;
        for (size_t k = 0; k < s.n_problems && same; k++)
            same = cf_strvec_contains(&theirs, s.problems[k].message);
        if (same) {
            identical++;
        } else {
            cf_sb_addf(&report, "%s: ldd -r %zu problems, cclforge %zu\n", files.v[i], theirs.n, s.n_problems);
            for (size_t k = 0; k < theirs.n && k < 5; k++)
                cf_sb_addf(&report, "  ldd: %s\n", theirs.v[k]);
            for (size_t k = 0; k < s.n_problems && k < 5; k++)
                cf_sb_addf(&report, "  cclforge: %s\n", s.problems[k].message);
        }
        cf_symcheck_result_release(&s);
        cf_ldso_result_release(&r);
        cf_strvec_clear(&theirs);
    }
    print_message("symbols: %zu files, %zu compared, %zu identical to ldd -r, %zu problems reported; "
                  "%.1fs ldd -r, %.2fs cclforge%s\n",
                  files.n, compared, identical, problems, ldd_s, ours_s,
                  compared < files.n ? " (capped: CCLFORGE_CORPUS_SECONDS)" : "");
    if (identical != compared)
        fail_msg("%zu objects differ from ldd -r:\n%s", compared - identical, cf_sb_str(&report));
    assert_true(compared > 0);
    cf_sb_release(&report);
    cf_strvec_clear(&files);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_matches_ldd),
        cmocka_unit_test(test_corpus_symbols_match_ldd_r),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
