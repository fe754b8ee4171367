#include "cclforge/fs.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "cclforge/strbuf.h"

/* The kernel's name for the running executable, when it is already what
 * realpath would make of it: absolute (not "(unreachable)/..." from another
 * root), the file not deleted since exec ("... (deleted)", which realpath
 * refuses). One readlink where realpath's walk takes one per component. */
static char *proc_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
    if (n <= 0 || (size_t)n >= sizeof buf || buf[0] != '/')
        return NULL;
    static const char deleted[] = " (deleted)";
    if ((size_t)n >= sizeof deleted - 1 && !memcmp(buf + n - (sizeof deleted - 1), deleted, sizeof deleted - 1))
        return NULL;
    return cf_strndup(buf, (size_t)n);
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
