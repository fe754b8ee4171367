/* Placeholder until the wheel command lands; replaced by its own issue's work. */
#include "cli/builtin.h"
#include "cli/cli.h"

int cmd_wheel(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("wheel", "not implemented yet");
    return EXIT_USAGE;
}
