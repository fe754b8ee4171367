/* Corpus check: for every shared object in the system library directory (and
 * CUDA's, when present), the closure cclforge resolves equals what ldd prints,
 * object for object, in ldd's order. ldd runs the system loader in trace mode;
 * it is the incumbent we compare with, used here only.
 *
 * The run is capped by CCLFORGE_CORPUS_SECONDS (default 60) so the suite stays
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
#include "cclforge/strbuf.h"
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
            strvec_push(&names, e->d_name);
    closedir(d);
    qsort(names.v, names.n, sizeof *names.v, cmp_str);
    for (size_t i = 0; i < names.n; i++) {
        char *p = cf_path_join(dir, names.v[i]);
        if (is_elf_file(p))
            strvec_push(out, p);
        free(p);
    }
    strvec_clear(&names);
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
    collect("/usr/local/cuda/lib64", &files);
    if (files.n == 0) {
        print_message("skipped: no shared objects in /usr/lib/x86_64-linux-gnu\n");
        skip();
    }
    const char *cap_env = getenv("CCLFORGE_CORPUS_SECONDS");
    double cap = cap_env ? atof(cap_env) : 60.0;
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
                different++, sb_addf(&report, "%s: ldd lists no dependencies, cclforge %zu\n", f, r.n_nodes - 1);
            cf_ldso_result_release(&r);
            ts_ldd_release(&l);
            continue;
        }
        if (rc != 0) {
            different++;
            sb_addf(&report, "%s: cclforge error: %s\n", f, cf_error_message(&err));
            cf_error_clear(&err);
            ts_ldd_release(&l);
            continue;
        }
        missing_seen += r.n_missing;
        char *diff = ts_ldd_compare(&r, &l);
        if (diff) {
            different++;
            if (different <= 5)
                sb_addf(&report, "%s:\n%s\n", f, diff);
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
        fail_msg("%zu objects resolve differently from ldd:\n%s", different, sb_str(&report));
    assert_true(compared > 0);
    sb_release(&report);
    strvec_clear(&files);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_matches_ldd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
