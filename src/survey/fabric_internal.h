/* Private interface between the fabric probe's files (src/survey/fabric*.c, nvml.c). */
#ifndef CCLFORGE_FABRIC_INTERNAL_H
#define CCLFORGE_FABRIC_INTERNAL_H

#include "cclforge/fabric.h"
#include "cclforge/survey.h"

/* The first line of a small sysfs-like file, trailing white space removed; NULL
 * when absent or unreadable. The path is printf-formatted. Caller frees. */
char *cf_sysfs_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Entries of a directory (no "." or ".."), sorted; none when it is absent. */
void cf_dir_entries(const char *dir, struct strvec *out);

/* Each fills its part of f. root: the --sysfs-root prefix ("" for none). */
void cf_fabric_probe_net(struct cf_fabric *f);
void cf_fabric_probe_ib(const char *root, struct cf_fabric *f);
void cf_fabric_probe_pci(const char *root, struct cf_fabric *f);
void cf_fabric_probe_limits(const struct cf_survey_opts *opts, const char *root, struct cf_fabric *f);
void cf_fabric_probe_nvml(const struct cf_survey_opts *opts, struct cf_fabric *f);
void cf_fabric_probe_kfd_links(const char *root, struct cf_fabric *f);

#endif
