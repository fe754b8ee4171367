/* cf_reap_orphans (cclforge/orphans.h): the caller's children are read from
 * the kernel's list (/proc/self/task/<tid>/children), or, without it
 * (CONFIG_PROC_CHILDREN off), from every /proc/<pid>/stat whose parent field
 * is the caller. */
#include "cclforge/orphans.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cclforge/clock.h"

#define MAX_LISTED 1024  /* children killed per round; more wait for the next */
#define MAX_COUNTED 4096 /* distinct pids counted (the count saturates there) */
#define GRACE_NAP_NS 20000000L /* between looks while children may still end on their own */
#define KILL_NAP_NS 1000000L   /* between kill rounds */

/* A decimal pid at p (advanced past it), 0 when none. */
static pid_t read_pid(const char **p, const char *end)
{
    while (*p < end && (**p < '0' || **p > '9'))
        (*p)++;
    long v = 0;
    while (*p < end && **p >= '0' && **p <= '9' && v < 1 << 22)
        v = v * 10 + (*(*p)++ - '0');
    return (pid_t)v;
}

/* The caller's children, from the kernel's list when it has one. */
static size_t children_listed(pid_t self, pid_t *out, size_t cap, int *have_list)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)self, (int)self);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *have_list = fd >= 0;
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    size_t k = 0;
    for (const char *p = buf, *end = buf + (n > 0 ? n : 0); p < end && k < cap;) {
        pid_t pid = read_pid(&p, end);
        if (pid > 0)
            out[k++] = pid;
    }
    return k;
}

static size_t children_scanned(pid_t self, pid_t *out, size_t cap)
{
    DIR *d = opendir("/proc");
    size_t k = 0;
    for (struct dirent *e; d && k < cap && (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        const char *paren = strrchr(buf, ')'); /* the command name may hold anything */
        if (!paren || paren + 4 > buf + n)
            continue;
        const char *p = paren + 4; /* ") S " */
        if (read_pid(&p, buf + n) == self) {
            const char *q = e->d_name;
            out[k++] = read_pid(&q, q + strlen(q));
        }
    }
    if (d)
        closedir(d);
    return k;
}

/* Reaps every child that has ended; 1 when none is left at all. */
static int reap_ended(pid_t watched, struct cf_orphans_end *out)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG);
        if (w > 0) {
            if (w == watched) {
                out->watched_reaped = 1;
                out->watched_status = st;
            }
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        return w < 0 && errno == ECHILD;
    }
}

static void nap(long ns)
{
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
}

void cf_reap_orphans(pid_t watched, double grace_s, double kill_s, struct cf_orphans_end *out)
{
    out->killed = out->watched_reaped = out->watched_status = 0;
    double until = cf_now_seconds() + grace_s;
    while (!reap_ended(watched, out)) {
        if (cf_now_seconds() >= until)
            break;
        nap(GRACE_NAP_NS);
    }
    pid_t self = getpid(), kids[MAX_LISTED], counted[MAX_COUNTED];
    size_t n_counted = 0;
    until = cf_now_seconds() + kill_s;
    while (!reap_ended(watched, out) && cf_now_seconds() <= until) {
        int have_list;
        size_t n = children_listed(self, kids, MAX_LISTED, &have_list);
        if (!have_list)
            n = children_scanned(self, kids, MAX_LISTED);
        for (size_t i = 0; i < n; i++) {
            kill(kids[i], SIGKILL);
            int seen = kids[i] == watched;
            for (size_t j = 0; j < n_counted && !seen; j++)
                seen = counted[j] == kids[i];
            if (!seen && n_counted < MAX_COUNTED)
                counted[n_counted++] = kids[i];
        }
        nap(KILL_NAP_NS);
    }
    out->killed = (int)n_counted;
}
