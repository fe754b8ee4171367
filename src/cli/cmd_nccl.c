/* Placeholder until the nccl command lands; replaced by its own issue's work. */
#include "cli/builtin.h"
#include "cli/cli.h"

int cmd_nccl(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("nccl", "not implemented yet");
    return EXIT_USAGE;
}
