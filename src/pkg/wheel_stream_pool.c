/* Every member streamed once, on a fixed pool of worker threads: members are
 * independent (inflate, CRC-32 and digest are 80 % of verify's time on
 * torch's wheel), so each worker takes the next one from a shared counter
 * and streams it with buffers of its own. The counter deals them largest
 * first: torch's two largest libraries hold 85 % of its bytes and stand at
 * members 12,064 and 12,065 of 13,187; dealt in archive order they would
 * start last and one worker would stream both while the others idle. Each
 * member's results live in its own struct vmember and its problems go to
 * the log under its number, so the report is the serial pass's, byte for
 * byte, whatever the number of workers or the order they finish in.
 * Memory per worker: CF_WHEEL_CHUNK (64 KiB) and the member it streams (a
 * struct cf_wheel_stream: 64 KiB of input, and the inflate engine's state:
 * zlib's ~40 KiB of state and window, or ISA-L's 87 KB), ~170-215 KiB; 16
 * workers at most, ~3.4 MiB. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pkg/wheel_verify_internal.h"

#define MAX_JOBS 16      /* the memory bound above; more cores than this gain little */
#define JOBS_ENV "CCLFORGE_WHEEL_JOBS"

int cf_wheel_jobs(int *jobs, cf_error *err)
{
    const char *env = getenv(JOBS_ENV);
    if (env && *env) {
        char *end;
        errno = 0;
        long v = strtol(env, &end, 10);
        if (errno || *end || end == env || v < 1 || v > MAX_JOBS)
            return cf_error_set(err, CF_ERR_USAGE, "%s=%s: the number of worker threads for wheel verify, from 1 "
                                                   "to %d (unset it for one per online CPU)",
                                JOBS_ENV, env, MAX_JOBS);
        *jobs = (int)v;
        return 0;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *jobs = cpus < 1 ? 1 : cpus > MAX_JOBS ? MAX_JOBS : (int)cpus;
    return 0;
}

struct pool {
    struct verify_ctx *c;
    const size_t *order; /* the members the workers stream, largest first */
    size_t n;
    atomic_size_t next;  /* the next index into order */
    struct cf_wheel_problem_log *log;
};

static void *work(void *arg)
{
    struct pool *pl = arg;
    unsigned char *buf = cf_xmalloc(CF_WHEEL_CHUNK);
    for (size_t k; (k = atomic_fetch_add(&pl->next, 1)) < pl->n;)
        cf_wheel_stream_member(pl->c, pl->order[k], buf, pl->log);
    free(buf);
    return NULL;
}

struct sized {
    uint64_t size;
    size_t i;
};

static int larger_first(const void *a, const void *b)
{
    const struct sized *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i;
}

void cf_wheel_stream_members(struct verify_ctx *c, int jobs, struct cf_wheel_problems *p)
{
    struct cf_wheel_problem_log log;
    cf_wheel_problem_log_init(&log);
    /* members libzip reads (bzip2, lzma: rare) share one zip_t, which is not
     * for threads: the calling thread streams them after the pool */
    struct sized *by_size = cf_xcalloc(c->n ? c->n : 1, sizeof *by_size);
    size_t *order = cf_xcalloc(c->n ? c->n : 1, sizeof *order), n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->m[i].z->is_dir || cf_zip_member_supported(c->m[i].z))
            by_size[n++] = (struct sized){ c->m[i].z->usize, i };
    qsort(by_size, n, sizeof *by_size, larger_first);
    for (size_t k = 0; k < n; k++)
        order[k] = by_size[k].i;
    free(by_size);

    struct pool pl = { c, order, n, 0, &log };
    size_t want = (size_t)(jobs < 1 ? 1 : jobs) - 1, started = 0;
    if (want > n)
        want = n;
    pthread_t *threads = cf_xcalloc(want ? want : 1, sizeof *threads);
    /* a thread that cannot be started leaves its share to the others; the calling thread is one worker */
    while (started < want && pthread_create(&threads[started], NULL, work, &pl) == 0)
        started++;
    work(&pl);
    for (size_t t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    free(threads);
    free(order);

    unsigned char *buf = cf_xmalloc(CF_WHEEL_CHUNK);
    for (size_t i = 0; i < c->n; i++)
        if (!c->m[i].z->is_dir && !cf_zip_member_supported(c->m[i].z))
            cf_wheel_stream_member(c, i, buf, &log);
    free(buf);
    cf_wheel_problem_log_flush(&log, p);
}
