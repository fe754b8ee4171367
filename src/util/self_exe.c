#include "cclforge/fs.h"

#include <stddef.h>
#include <sys/auxv.h>

char *cf_self_exe(void)
{
    char *exe = cf_realpath("/proc/self/exe");
    if (!exe) {
        const char *execfn = (const char *)getauxval(AT_EXECFN);
        exe = execfn ? cf_realpath(execfn) : NULL;
    }
    return exe;
}
