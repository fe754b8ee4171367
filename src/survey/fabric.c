/* The survey's "fabric" section: interfaces, HCAs, the PCI tree, limits, NVML and
 * KFD links (cclforge/fabric.h), each from its own file. */
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <stdlib.h>
#include <string.h>

#include "survey/fabric_internal.h"
#include "survey/survey_internal.h"

void cf_fabric_probe_paths(struct cf_fabric *f, int gpu_links)
{
    cf_fabric_probe_net(f);
    cf_fabric_probe_ib("", f);
    cf_fabric_probe_pci("", f);
    if (!gpu_links)
        return;
    struct cf_survey_opts none;
    memset(&none, 0, sizeof none);
    cf_fabric_probe_nvml(&none, f);
    cf_fabric_probe_kfd_links("", f);
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
