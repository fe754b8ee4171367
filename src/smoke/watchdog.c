/* The per-operation timeout of a rank under an external launcher (no supervisor
 * watches it): a thread that raises a fatal event when the rank makes no progress
 * for too long. The caller ends the process; mpirun, srun or torchrun then stop the
 * other ranks, as they do for any failed rank. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cclforge/clock.h"
#include "smoke/smoke_internal.h"

struct smoke_watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    double timeout_s;
    double last;
    int stop;
    struct strbuf doing;
    cf_smoke_event_fn fn;
    void *ctx;
    int rank, local_rank;
};

static void *watch(void *arg)
{
    struct smoke_watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        double now = cf_now_seconds();
        if (now - w->last > w->timeout_s) {
            struct strbuf text = STRBUF_INIT;
            cf_sb_addf(&text, "rank %d hung: no progress for %.1f s (per-operation timeout --timeout %g) while %s",
                    w->rank, now - w->last, w->timeout_s, w->doing.len ? cf_sb_str(&w->doing) : "starting");
            struct cf_smoke_event ev = { .kind = CF_EV_FAIL, .rank = w->rank, .local_rank = w->local_rank };
            ev.text = cf_sb_str(&text);
            ev.fatal = 1;
            pthread_mutex_unlock(&w->lock);
            if (w->fn)
                w->fn(w->ctx, &ev); /* normally does not return */
            cf_sb_release(&text);
            pthread_mutex_lock(&w->lock);
            break;
        }
        double wait = w->timeout_s / 10 < 0.5 ? w->timeout_s / 10 : 0.5;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)(wait * 1e9);
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&w->wake, &w->lock, &until);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct smoke_watchdog *cf_smoke_watchdog_start(double timeout_s, cf_smoke_event_fn fn, void *ctx, int rank,
                                            int local_rank)
{
    if (timeout_s <= 0)
        return NULL;
    struct smoke_watchdog *w = cf_xcalloc(1, sizeof *w);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    w->timeout_s = timeout_s;
    w->last = cf_now_seconds();
    w->fn = fn;
    w->ctx = ctx;
    w->rank = rank;
    w->local_rank = local_rank;
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->wake);
        free(w);
        return NULL; /* no watchdog: the launcher's own limits still apply */
    }
    return w;
}

void cf_smoke_watchdog_progress(struct smoke_watchdog *w, const char *doing)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->last = cf_now_seconds();
    if (doing) {
        cf_sb_reset(&w->doing);
        cf_sb_adds(&w->doing, doing);
    }
    pthread_mutex_unlock(&w->lock);
}

void cf_smoke_watchdog_stop(struct smoke_watchdog *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    cf_sb_release(&w->doing);
    free(w);
}
