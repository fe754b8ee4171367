/* The survey's "fabric" section: interfaces, HCAs, the PCI tree, limits, NVML and
 * KFD links (cclforge/fabric.h), each from its own file. */
#include <dirent.h>
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "survey/fabric_internal.h"
#include "survey/survey_internal.h"

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

void cf_probe_fabric(const struct cf_survey_opts *opts, struct cf_survey *s)
{
    const char *root = opts->sysfs_root ? opts->sysfs_root : "";
    struct cf_fabric *f = cf_xcalloc(1, sizeof *f);
    cf_fabric_probe_net(f);
    cf_fabric_probe_ib(root, f);
    cf_fabric_probe_pci(root, f);
    cf_fabric_probe_limits(opts, root, f);
    if (!opts->no_nvidia_driver && !(opts->skip & CF_SURVEY_SKIP_NVML))
        cf_fabric_probe_nvml(opts, f);
    else
        f->nvml_note = cf_strdup("not loaded (--no-nvidia)");
    cf_fabric_probe_kfd_links(root, f);
    struct utsname u;
    if (uname(&u) == 0)
        f->kernel = cf_strdup(u.release);
    f->glibc = cf_strdup(gnu_get_libc_version());
    s->fabric = f;
}
