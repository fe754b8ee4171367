/* Placeholder until the bridge command lands; replaced by its own issue's work. */
#include "cli/builtin.h"
#include "cli/cli.h"

int cmd_bridge(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("bridge", "not implemented yet");
    return EXIT_USAGE;
}
