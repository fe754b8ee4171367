#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cclforge/fs.h"
#include "cclforge/strbuf.h"
#include "cli/term.h"

/* Messages carry paths and names from files and other hosts: escaped
 * (cli_escape) so they cannot drive the terminal; their own line breaks stay. */
static void vreport(const char *cmd, enum cf_color c, const char *what, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void vreport(const char *cmd, enum cf_color c, const char *what, const char *fmt, va_list ap)
{
    struct strbuf msg = STRBUF_INIT, safe = STRBUF_INIT;
    cf_sb_addvf(&msg, fmt, ap);
    cli_escape(cf_sb_str(&msg), 1, &safe);
    fprintf(stderr, "%scclforge%s%s: %s%s%s\n", cf_term_color(stderr, c), cmd ? " " : "", cmd ? cmd : "", what,
            cf_term_color(stderr, CF_RESET), cf_sb_str(&safe));
    cf_sb_release(&msg);
    cf_sb_release(&safe);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, CF_RED, "error: ", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, CF_YELLOW, "warning: ", fmt, ap);
    va_end(ap);
}

int cli_fail(const char *cmd, cf_error *err)
{
    cli_error(cmd, "%s", cf_error_message(err));
    int code = err && err->kind == CF_ERR_USAGE ? EXIT_USAGE : EXIT_PROBLEMS;
    cf_error_clear(err);
    return code;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(cmd, CF_RED, "usage error: ", fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try 'cclforge %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
    return EXIT_USAGE;
}

void cli_print_json(cJSON *doc)
{
    char *s = cJSON_Print(doc);
    if (s) {
        fputs(s, stdout);
        fputc('\n', stdout);
        free(s);
    }
    cJSON_Delete(doc);
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    }
    return 0;
}

/* A cache root another user could write is not used (cf_cache_root_usable):
 * checked once per process (a walk of lstat calls from "/"), said once. */
const char *cli_cache_root(void)
{
    static int checked;
    static char *root;
    if (!checked) {
        cf_error why = CF_ERROR_INIT;
        root = cf_cache_root_usable(&why);
        if (!root && why.message) /* no message: no cache root is set at all */
            fprintf(stderr, "cclforge: warning: %s; running without a cache\n", cli_safe(cf_error_message(&why)));
        cf_error_clear(&why);
        checked = 1;
    }
    return root;
}

int cli_output_failed(void)
{
    cli_error(NULL, "cannot write to standard output: %s", errno ? strerror(errno) : "an earlier write failed");
    return EXIT_PROBLEMS;
}

int cli_finish_output(int code)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        int failed = cli_output_failed();
        return code == EXIT_FINE ? failed : code;
    }
    return code;
}
