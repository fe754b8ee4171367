#include "cclforge/host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cf_host_name(char *buf, size_t size)
{
    if (!buf || size == 0)
        return -1;
    /* glibc fails with ENAMETOOLONG rather than truncate; the last byte is
     * kept NUL for a libc that truncates without one. */
    if (size > 1 && gethostname(buf, size - 1) == 0 && buf[0]) {
        buf[size - 1] = '\0';
        return 0;
    }
    snprintf(buf, size, "%s", "unknown");
    return -1;
}
