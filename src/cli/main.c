/* cclforge: parse the command name and hand over to one builtin. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/term.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int uses_cache; /* keeps results under the cache root (probes, scans, objects) */
};

static const struct command commands[] = {
    { "doctor", cmd_doctor, "survey toolkits, GPUs, libtorch, NCCL/RCCL and compilers; say what is wrong", 1 },
    { "inspect", cmd_inspect, "static, glibc-exact linkage and comm-library inspection of ELF files", 1 },
    { "nccl", cmd_nccl, "build, list, activate and remove NCCL/RCCL builds matched to libtorch and the GPUs", 0 },
    { "bridge", cmd_bridge, "plan, build and package the ProcessGroupNCCL bridge for a vendor libtorch", 1 },
    { "wheel", cmd_wheel, "verify a wheel (integrity, relocatability, install and import); graft files into one", 0 },
    { "smoke", cmd_smoke, "multi-rank collective smoke and bandwidth test (NCCL, RCCL, MPI)", 0 },
    { "hang", cmd_hang, "which rank stopped, at which collective, from every rank's Flight Recorder dump", 0 },
    { "report", cmd_report, "remake a run's HTML report from its saved --json document", 0 },
};

enum own_word { WORD_HELP, WORD_VERSION };
static const struct {
    const char *word;
    enum own_word what;
} own_words[] = {
    { "--help", WORD_HELP }, { "-h", WORD_HELP }, { "help", WORD_HELP },
    { "--version", WORD_VERSION }, { "version", WORD_VERSION },
};

/* A command started with 0, 1 or 2 closed would hand that number to the
 * next file it opens, and what it prints would land in that file. Each
 * closed one is held by /dev/null opened the other way round, so a write
 * to a closed stdout still fails (EBADF) and is reported as lost output.
 * One poll(2) tells which are closed; open(2) takes the lowest free number. */
static void hold_closed_std_fds(void)
{
    struct pollfd std[3] = { { .fd = 0 }, { .fd = 1 }, { .fd = 2 } };
    if (poll(std, 3, 0) < 0)
        return;
    for (int fd = 0; fd < 3; fd++)
        if (std[fd].revents & POLLNVAL)
            (void)open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cclforge [--version] [--help] [--color[=WHEN]] <command> [<args>]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s  %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'cclforge <command> --help' for a command's options.\n"
               "\n"
               "Every command also takes, anywhere before a '--':\n"
               "  --color[=WHEN]  colour: auto (the default), always (--color alone) or never\n"
               "                  (also --no-color). auto colours only the user's own terminal:\n"
               "                  never into a file or pipe, with NO_COLOR set, with TERM unset\n"
               "                  or dumb, or in a rank started by mpirun, srun, torchrun or\n"
               "                  another launcher (its terminal is the launcher's).\n"
               "\n"
               "Exit status: 0 fine, 1 problems found or the job failed (or its output\n"
               "could not be written), 2 usage error.\n"
               "Examples:\n"
               "  cclforge doctor\n"
               "  cclforge inspect --undefined build/libbridge.so\n");
}

static int command_named(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    hold_closed_std_fds();
    cf_crypto_cpu_probe();
    cf_error color_err = CF_ERROR_INIT;
    if (cf_term_take_color_option(&argc, argv, &color_err) < 0)
        return cli_usage_fail(command_named(argv[1]) ? argv[1] : NULL, &color_err);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    for (size_t i = 0; i < sizeof own_words / sizeof own_words[0]; i++)
        if (!strcmp(name, own_words[i].word)) {
            if (own_words[i].what == WORD_HELP)
                usage(stdout);
            else
                printf("cclforge %s\n", CCLFORGE_VERSION);
            return cli_finish_output(EXIT_FINE);
        }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(name, commands[i].name)) {
            if (commands[i].uses_cache)
                (void)cli_cache_root(); /* said once, here, for the whole run */
            return cli_finish_output(commands[i].run(argc - 1, argv + 1));
        }
    fprintf(stderr, "cclforge: '%s' is not a command.\n\n", cli_safe(name));
    usage(stderr);
    return EXIT_USAGE;
}
