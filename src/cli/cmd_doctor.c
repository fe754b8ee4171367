/* Placeholder until the doctor command lands; replaced by its own issue's work. */
#include "cli/builtin.h"
#include "cli/cli.h"

int cmd_doctor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_error("doctor", "not implemented yet");
    return EXIT_USAGE;
}
