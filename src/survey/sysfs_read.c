/* Reading sysfs-like trees (one line of a file, a directory's names), shared by
 * the fabric probes (interfaces, HCAs, PCI, limits, KFD links). */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "survey/fabric_internal.h"

char *cf_sysfs_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct strbuf path = STRBUF_INIT;
    cf_sb_addvf(&path, fmt, ap);
    va_end(ap);
    struct strbuf sb = STRBUF_INIT;
    int rc = cf_is_file(path.buf) ? cf_read_file(path.buf, 1 << 16, &sb, NULL) : -1;
    cf_sb_release(&path);
    if (rc < 0) {
        cf_sb_release(&sb);
        return NULL;
    }
    size_t n = strcspn(cf_sb_str(&sb), "\n");
    cf_sb_setlen(&sb, n);
    cf_sb_rtrim(&sb);
    return cf_sb_detach(&sb);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cf_dir_entries(const char *dir, struct strvec *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    size_t first = out->n;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            cf_strvec_push(out, de->d_name);
    closedir(d);
    if (out->n > first + 1)
        qsort(out->v + first, out->n - first, sizeof *out->v, cmp_str);
}
