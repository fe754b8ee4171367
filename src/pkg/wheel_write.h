/* Writing wheel members: wheel_write.c, shared with wheel_graft.c (and the
 * marker's name, which verify reads back). Internal to src/pkg. */
#ifndef CCLFORGE_PKG_WHEEL_WRITE_H
#define CCLFORGE_PKG_WHEEL_WRITE_H

#include <time.h>

#include "cclforge/error.h"
#include "cclforge/strbuf.h"

/* The bridge marker a cclforge-built wheel carries in its .dist-info. */
#define CF_WHEEL_MARKER "cclforge.json"

/* The time stamp of written members: SOURCE_DATE_EPOCH, else 1980-01-01. */
long cf_wheel_fixed_mtime(void);
/* One deflated member with Unix mode 0644/0755 and that time. */
typedef struct zip zip_t;
int cf_wheel_zip_add(zip_t *za, const char *name, const struct strbuf *data, int executable, time_t mtime,
                     cf_error *err);

#endif
