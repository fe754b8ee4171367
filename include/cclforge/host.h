/* This host, as the kernel names it. */
#ifndef CCLFORGE_HOST_H
#define CCLFORGE_HOST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This host's name (uname's nodename) in buf, always NUL-terminated: 0, or
 * -1 with buf "unknown" when the kernel gives none that fits. One answer for
 * every report that names the host, so a rank, its launcher and doctor agree. */
int cf_host_name(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
