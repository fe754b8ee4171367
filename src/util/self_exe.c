#include "cclforge/fs.h"

#include <stddef.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "cclforge/strbuf.h"

/* The kernel's name for the running executable, when it is already what
 * realpath would make of it: absolute (not "(unreachable)/..." from another
 * root), the file not deleted since exec ("... (deleted)", which realpath
 * refuses). One readlink where realpath's walk takes one per component. */
static char *proc_exe(void)
{
    static const char deleted[] = " (deleted)";
    char *exe = cf_readlink("/proc/self/exe");
    if (exe && (exe[0] != '/' || cf_ends_with(exe, deleted))) {
        free(exe);
        exe = NULL;
    }
    return exe;
}

char *cf_self_exe(void)
{
    char *exe = proc_exe();
    if (!exe)
        exe = cf_realpath("/proc/self/exe");
    if (!exe) {
        const char *execfn = (const char *)getauxval(AT_EXECFN);
        exe = execfn ? cf_realpath(execfn) : NULL;
    }
    return exe;
}
