/* Paired per-process cost of a few commands, the way a shell runs them:
 *
 *   spawn_cpu REPEATS -- [NAME=VALUE...] CMD1 ARGS... -- CMD2 ARGS... [-- ...]
 *
 * Leading NAME=VALUE words of a command are added to its environment (as
 * env(1) would, without env's own process start in the measure).
 * Each repeat starts every command once (posix_spawn, output to /dev/null),
 * in an order that rotates with the repeat, so a load change during the run
 * hits every command alike. Per command it prints the median and the
 * quartiles of the child's CPU time (user + system from wait4: the kernel's
 * exec, the loader, the work and the exit, without any measuring process's
 * own start-up, which perf stat -r or a shell's `time` would add) and of the
 * wall time from spawn to reap, in microseconds, one line each:
 *
 *   cpu MEDIAN Q1 Q3 wall MEDIAN Q1 Q3 CMD...
 *
 * Built and run by bench/startup.sh and bench/inspect_corpus.sh. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { MAX_COMMANDS = 32, MAX_ENV = 4096 };

/* environ after the command's leading NAME=VALUE words (getenv takes the
 * first match, so they win); *cmd moves past them. */
static char **command_env(char ***cmd)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + MAX_ENV + 1, sizeof *env);
    if (!env)
        exit(1);
    while (**cmd && strchr(**cmd, '=') && k < MAX_ENV)
        env[k++] = *(*cmd)++;
    for (size_t i = 0; i < n; i++)
        env[k++] = environ[i];
    return env;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double us_of(struct timeval tv)
{
    return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec;
}

int main(int argc, char **argv)
{
    int repeats = argc > 1 ? atoi(argv[1]) : 0;
    char **cmds[MAX_COMMANDS];
    int n = 0;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            argv[i] = NULL; /* ends the previous command's argv */
            if (i + 1 < argc && n < MAX_COMMANDS)
                cmds[n++] = &argv[i + 1];
        }
    if (repeats < 1 || n < 1) {
        fprintf(stderr, "usage: spawn_cpu REPEATS -- CMD ARGS... [-- CMD ARGS...] (at most %d commands)\n", MAX_COMMANDS);
        return 2;
    }
    char **envs[MAX_COMMANDS];
    char **shown[MAX_COMMANDS];
    for (int c = 0; c < n; c++) {
        shown[c] = cmds[c];
        envs[c] = command_env(&cmds[c]);
        if (!cmds[c][0]) {
            fprintf(stderr, "spawn_cpu: command %d has no program\n", c + 1);
            return 2;
        }
    }
    double *cpu = calloc((size_t)n * (size_t)repeats, sizeof *cpu);
    double *wall = calloc((size_t)n * (size_t)repeats, sizeof *wall);
    if (!cpu || !wall)
        return 1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < n; k++) {
            int c = (k + r) % n;
            pid_t pid;
            struct timespec s, e;
            struct rusage ru;
            int status;
            clock_gettime(CLOCK_MONOTONIC, &s);
            int rc = posix_spawnp(&pid, cmds[c][0], &fa, NULL, cmds[c], envs[c]);
            if (rc) {
                fprintf(stderr, "spawn_cpu: cannot start %s: %s\n", cmds[c][0], strerror(rc));
                return 1;
            }
            if (wait4(pid, &status, 0, &ru) != pid) {
                perror("spawn_cpu: wait4");
                return 1;
            }
            clock_gettime(CLOCK_MONOTONIC, &e);
            cpu[(size_t)c * repeats + r] = us_of(ru.ru_utime) + us_of(ru.ru_stime);
            wall[(size_t)c * repeats + r] = (double)(e.tv_sec - s.tv_sec) * 1e6 + (double)(e.tv_nsec - s.tv_nsec) / 1e3;
        }
    for (int c = 0; c < n; c++) {
        double *p = cpu + (size_t)c * repeats, *w = wall + (size_t)c * repeats;
        qsort(p, (size_t)repeats, sizeof *p, cmp_double);
        qsort(w, (size_t)repeats, sizeof *w, cmp_double);
        printf("cpu %.1f %.1f %.1f wall %.1f %.1f %.1f", p[repeats / 2], p[repeats / 4], p[3 * repeats / 4],
               w[repeats / 2], w[repeats / 4], w[3 * repeats / 4]);
        for (char **a = shown[c]; *a; a++)
            printf(" %s", *a);
        printf("\n");
    }
    free(cpu);
    free(wall);
    return 0;
}
