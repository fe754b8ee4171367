/* getopt_long over option rows that hold their names. getopt_long's own
 * struct option points at its name: a static table of those is relocated by
 * ld.so at every start of the PIE executable (every command's table, whichever
 * command runs), so the commands keep cli_option rows in .rodata and the
 * pointers are made here, on the stack, for the one call. */
#include "cli/cli.h"

#include <getopt.h>
#include <stdlib.h>

int cli_getopt(int argc, char **argv, const char *shortopts, const struct cli_option *opts, size_t n)
{
    struct option table[CLI_MAX_OPTIONS + 1];
    if (n > CLI_MAX_OPTIONS)
        abort(); /* a command's table outgrew CLI_MAX_OPTIONS: raise it */
    for (size_t i = 0; i < n; i++)
        table[i] = (struct option){ opts[i].name, opts[i].has_arg, NULL, opts[i].val };
    table[n] = (struct option){ NULL, 0, NULL, 0 };
    return getopt_long(argc, argv, shortopts, table, NULL);
}
