/* Placeholder until the inspect command lands; replaced by its own issue's work. */
#include "cli/builtin.h"
#include "cli/cli.h"

int cmd_inspect(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("inspect", "not implemented yet");
    return EXIT_USAGE;
}
