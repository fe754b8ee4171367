/* Placeholder until the smoke command lands; replaced by its own issue's work. */
#include "cli/builtin.h"
#include "cli/cli.h"

int cmd_smoke(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("smoke", "not implemented yet");
    return EXIT_USAGE;
}
