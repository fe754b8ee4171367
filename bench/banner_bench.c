/* Version and arch detection on a large library (default: the CUDA 13
 * libnccl.so.2, 218 MB) against the ways people do it today, same run, same
 * file: reading the whole file and scanning it (into memory, or streamed),
 * `strings -a FILE | grep "CCL version"`, and `cuobjdump --list-elf` for archs.
 *
 * Every method runs in its own child process so its peak RSS (ru_maxrss) is
 * its own; its time is taken inside the child (the external tools' include
 * their process start, as a user would see). "warm" runs find the file in the page cache (best of N); "cold"
 * runs follow posix_fadvise(DONTNEED), and the pages the method brought into
 * the page cache (readahead included) are counted with mincore() afterwards.
 *
 * Build and run: bench/gpucode_bench.sh [FILE] (after the normal build). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/gpucode.h"
#include "cclforge/spawn.h"
#include "cclforge/strbuf.h"

#define DEFAULT_FILE "/usr/local/cuda-13.0/lib/libnccl.so.2"
#define WARM_RUNS 5

/* What a method reports back to the parent through a pipe. */
struct method_report {
    int ok;
    unsigned long long logical_bytes; /* bytes the method itself examined */
    double seconds;                   /* measured inside the child: no fork/exec of ours */
    char answer[160];
};

typedef void (*method_fn)(const char *file, struct method_report *r);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cclforge_banner(const char *file, struct method_report *r)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    struct cf_commlib_identity id;
    if (cf_elf_open(file, &elf, &err) != 0 || cf_commlib_identify(elf, &id, &err) != 0) {
        snprintf(r->answer, sizeof(r->answer), "error: %s", cf_error_message(&err));
        return;
    }
    size_t headers = cf_elf_section_count(elf) * 64 + 64;
    cf_elf_close(elf);
    r->ok = id.found;
    r->logical_bytes = id.bytes_scanned + headers;
    snprintf(r->answer, sizeof(r->answer), "%s", id.found ? id.banner.text : "(none)");
}

static void cclforge_archs(const char *file, struct method_report *r)
{
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    struct cf_gpucode_inventory inv;
    if (cf_elf_open(file, &elf, &err) != 0 || cf_gpucode_inventory(elf, &inv, &err) != 0) {
        snprintf(r->answer, sizeof(r->answer), "error: %s", cf_error_message(&err));
        return;
    }
    size_t headers = cf_elf_section_count(elf) * 64 + 64;
    cf_elf_close(elf);
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < inv.n_sass; i++)
        cf_sb_addf(&sb, "%s%s", sb.len ? " " : "", inv.sass[i].name);
    for (size_t i = 0; i < inv.n_ptx; i++)
        cf_sb_addf(&sb, " %s", inv.ptx[i].name);
    r->ok = inv.n_sass + inv.n_ptx > 0;
    r->logical_bytes = inv.header_bytes_read + headers;
    snprintf(r->answer, sizeof(r->answer), "%s", cf_sb_str(&sb));
    cf_sb_release(&sb);
    cf_gpucode_inventory_release(&inv);
}

static void report_banner_in(const uint8_t *buf, size_t len, struct method_report *r)
{
    struct cf_commlib_banner b;
    static const char needle[] = "CCL version ";
    for (size_t pos = 1; pos < len;) {
        const uint8_t *hit = memmem(buf + pos, len - pos, needle, sizeof(needle) - 1);
        if (!hit)
            break;
        if (cf_banner_parse((const char *)hit - 1, len - (size_t)(hit - 1 - buf), &b) == 0) {
            r->ok = 1;
            snprintf(r->answer, sizeof(r->answer), "%s", b.text);
            return;
        }
        pos = (size_t)(hit - buf) + 1;
    }
}

/* The naive approach: the whole file in memory, then memmem. */
static void whole_read_memmem(const char *file, struct method_report *r)
{
    int fd = open(file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return;
    uint8_t *buf = malloc((size_t)st.st_size);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    r->logical_bytes = got;
    if (buf)
        report_banner_in(buf, got, r);
    free(buf);
}

/* A careful whole-file scan: 1 MiB chunks with an overlap, constant memory. */
static void stream_scan(const char *file, struct method_report *r)
{
    enum { CHUNK = 1 << 20, KEEP = 256 };
    int fd = open(file, O_RDONLY);
    if (fd < 0)
        return;
    uint8_t *buf = malloc(CHUNK + KEEP);
    size_t have = 0;
    unsigned long long total = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, CHUNK);
        if (n <= 0)
            break;
        total += (unsigned long long)n;
        have += (size_t)n;
        if (!r->ok)
            report_banner_in(buf, have, r);
        size_t keep = have < KEEP ? have : KEEP;
        memmove(buf, buf + have - keep, keep);
        have = keep;
    }
    close(fd);
    free(buf);
    r->logical_bytes = total;
}

struct grep_ctx {
    struct method_report *r;
};

static void grep_line(void *ctx, const char *line)
{
    struct grep_ctx *g = ctx;
    struct cf_commlib_banner b;
    const char *at = strstr(line, "CCL version ");
    if (!g->r->ok && at && at > line && cf_banner_parse(at - 1, strlen(at - 1), &b) == 0) {
        g->r->ok = 1;
        snprintf(g->r->answer, sizeof(g->r->answer), "%s", b.text);
    }
}

/* `strings -a FILE | grep "CCL version"`, without a shell: strings' lines are filtered here. */
static void strings_grep(const char *file, struct method_report *r)
{
    const char *argv[] = { "strings", "-a", file, NULL };
    struct cf_spawn_opts o = { 0 };
    struct grep_ctx g = { r };
    o.null_stdin = 1;
    o.on_line = grep_line;
    o.line_ctx = &g;
    o.capture_limit = 1 << 16;
    struct cf_spawn_result res = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_spawn_run(argv, &o, &res, &err) != 0) {
        snprintf(r->answer, sizeof(r->answer), "could not run strings: %s", cf_error_message(&err));
        r->ok = 0;
    }
    struct stat st;
    if (stat(file, &st) == 0)
        r->logical_bytes = (unsigned long long)st.st_size;
    cf_spawn_result_release(&res);
}

static const char *cuobjdump_path;

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void cuobjdump_list(const char *file, struct method_report *r)
{
    const char *argv[] = { cuobjdump_path, "--list-elf", "--list-ptx", file, NULL };
    struct cf_spawn_opts o = { 0 };
    o.null_stdin = 1;
    o.capture_stdout = 1;
    struct cf_spawn_result res = CF_SPAWN_RESULT_INIT;
    cf_error err = CF_ERROR_INIT;
    if (cf_spawn_run(argv, &o, &res, &err) == 0 && cf_spawn_ok(&res)) {
        r->ok = 1;
        snprintf(r->answer, sizeof(r->answer), "%d ELF/PTX lines", count_lines(cf_sb_str(&res.out)));
    }
    cf_spawn_result_release(&res);
}

struct method {
    const char *name;
    const char *task;
    method_fn run;
    int needs_cuobjdump;
};

static const struct method methods[] = {
    { "cclforge banner (read-only data only)", "banner", cclforge_banner, 0 },
    { "whole file read + memmem", "banner", whole_read_memmem, 0 },
    { "streamed 1 MiB read + memmem", "banner", stream_scan, 0 },
    { "strings -a, grep", "banner", strings_grep, 0 },
    { "cclforge archs (fatbin headers only)", "archs", cclforge_archs, 0 },
    { "cuobjdump --list-elf --list-ptx", "archs", cuobjdump_list, 1 },
};

struct measurement {
    double seconds;
    long maxrss_kb;
    struct method_report report;
};

static int evict(const char *file)
{
    int fd = open(file, O_RDONLY);
    if (fd < 0)
        return -1;
    fdatasync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return rc;
}

/* Bytes of the file now in the page cache. */
static unsigned long long resident_bytes(const char *file)
{
    int fd = open(file, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0)
        return 0;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
    unsigned char *vec = malloc(pages);
    unsigned long long n = 0;
    if (vec && mincore(map, (size_t)st.st_size, vec) == 0)
        for (size_t i = 0; i < pages; i++)
            n += vec[i] & 1;
    free(vec);
    munmap(map, (size_t)st.st_size);
    return n * (unsigned long long)page;
}

static int measure(const struct method *m, const char *file, struct measurement *out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct method_report r;
        memset(&r, 0, sizeof(r));
        double t = now_s();
        m->run(file, &r);
        r.seconds = now_s() - t;
        ssize_t w = write(fds[1], &r, sizeof(r));
        _exit(w == (ssize_t)sizeof(r) ? 0 : 1);
    }
    close(fds[1]);
    memset(out, 0, sizeof(*out));
    ssize_t got = read(fds[0], &out->report, sizeof(out->report));
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    out->seconds = got == (ssize_t)sizeof(out->report) ? out->report.seconds : now_s() - t0;
    out->maxrss_kb = ru.ru_maxrss;
    return got == (ssize_t)sizeof(out->report) ? 0 : -1;
}

static void warm_up(const char *file)
{
    struct method_report r;
    memset(&r, 0, sizeof(r));
    stream_scan(file, &r);
}

int main(int argc, char **argv)
{
    const char *file = argc > 1 ? argv[1] : DEFAULT_FILE;
    struct stat st;
    if (stat(file, &st) != 0) {
        fprintf(stderr, "banner_bench: %s: %s\n", file, strerror(errno));
        return 1;
    }
    const char *env = getenv("CUOBJDUMP");
    char *found = cf_which(env && *env ? env : "cuobjdump");
    if (!found)
        found = cf_which("/usr/local/cuda/bin/cuobjdump");
    cuobjdump_path = found;

    double size_mb = (double)st.st_size / 1e6;
    printf("file: %s (%.1f MB)\n\n", file, size_mb);
    printf("| method | task | warm s (best of %d) | cold s | in page cache after cold run | bytes examined | peak RSS | answer |\n",
           WARM_RUNS);
    printf("|---|---|---|---|---|---|---|---|\n");
    double best_warm[sizeof(methods) / sizeof(methods[0])];
    double cold_s[sizeof(methods) / sizeof(methods[0])];
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        const struct method *m = &methods[i];
        best_warm[i] = cold_s[i] = -1;
        if (m->needs_cuobjdump && !cuobjdump_path) {
            printf("| %s | %s | - | - | - | - | - | not run: cuobjdump not found (set CUOBJDUMP) |\n",
                   m->name, m->task);
            continue;
        }
        struct measurement cold, warm, best;
        int evicted = evict(file) == 0;
        if (measure(m, file, &cold) != 0) {
            printf("| %s | %s | failed |\n", m->name, m->task);
            continue;
        }
        unsigned long long cached = resident_bytes(file);
        warm_up(file);
        best.seconds = 1e9;
        for (int k = 0; k < WARM_RUNS; k++)
            if (measure(m, file, &warm) == 0 && warm.seconds < best.seconds)
                best = warm;
        best_warm[i] = best.seconds;
        cold_s[i] = cold.seconds;
        char examined[64] = "n/a (external tool)";
        if (best.report.logical_bytes)
            snprintf(examined, sizeof(examined), "%.2f MB (%.3f%%)",
                     best.report.logical_bytes / 1e6,
                     100.0 * (double)best.report.logical_bytes / (double)st.st_size);
        printf("| %s | %s | %.4f | %.4f | %s%.2f MB (%.2f%%) | %s | %.1f MB | %s |\n",
               m->name, m->task, best.seconds, cold.seconds, evicted ? "" : "(not evicted) ",
               cached / 1e6, 100.0 * (double)cached / (double)st.st_size, examined,
               best.maxrss_kb / 1024.0, best.report.ok ? best.report.answer : "(not found)");
    }
    printf("\nspeed-up of cclforge banner over: whole read %.0fx warm / %.0fx cold; streamed %.0fx / %.0fx; "
           "strings|grep %.0fx / %.0fx\n",
           best_warm[1] / best_warm[0], cold_s[1] / cold_s[0], best_warm[2] / best_warm[0],
           cold_s[2] / cold_s[0], best_warm[3] / best_warm[0], cold_s[3] / cold_s[0]);
    if (best_warm[5] > 0)
        printf("speed-up of cclforge archs over cuobjdump: %.0fx warm / %.0fx cold\n",
               best_warm[5] / best_warm[4], cold_s[5] / cold_s[4]);
    free(found);
    return 0;
}
