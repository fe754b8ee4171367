/* Printing NCCL's configuration, the fabric, and reports over many hosts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cclforge/fabric.h"
#include "cclforge/ncclconf.h"
#include "cli/doctor_hosts.h"
#include "cli/term.h"

static void heading(const char *title)
{
    printf("\n%s%s%s\n", cf_term_color(stdout, CF_BOLD), title, cf_term_color(stdout, CF_RESET));
}

void doctor_print_nccl_config(const struct cf_survey *s)
{
    const struct cf_nccl_config *c = s->nccl_config;
    if (!c)
        return;
    heading(!strcmp(c->flavour, "rccl") ? "RCCL configuration" : "NCCL configuration");
    for (size_t i = 0; i < c->n_files; i++)
        printf("  %-16s %s  %s\n", c->files[i].role, c->files[i].path,
               c->files[i].problem ? c->files[i].problem
               : c->files[i].read  ? "read"
                                   : "absent");
    if (!c->n_settings)
        printf("  no NCCL variable set\n");
    for (size_t i = 0; i < c->n_settings; i++) {
        const struct cf_nccl_setting *x = &c->settings[i];
        const struct cf_nccl_param_info *info = cf_nccl_param_info(x->name);
        printf("  %s=%s  (%s%s%s)\n", x->name, x->hidden ? "(hidden)" : x->value ? x->value : "", x->source,
               info ? ", " : "", info ? cf_nccl_param_class_name(info->cls) : "");
        for (size_t k = 0; k < x->overridden.n; k++)
            printf("      overrides %s\n", x->overridden.v[k]);
    }
    for (size_t i = 0; i < c->n_plugins; i++)
        printf("  %s plugin %s -> %s%s%s%s\n", c->plugins[i].kind, c->plugins[i].requested,
               c->plugins[i].path ? c->plugins[i].path : "not found", c->plugins[i].found_by ? " (" : "",
               c->plugins[i].found_by ? c->plugins[i].found_by : "", c->plugins[i].found_by ? ")" : "");
}

void doctor_print_fabric(const struct cf_survey *s)
{
    const struct cf_fabric *f = s->fabric;
    if (!f)
        return;
    heading("Fabric");
    for (size_t i = 0; i < f->n_ifs; i++) {
        const struct cf_net_if *x = &f->ifs[i];
        printf("  %-10s %-7s", x->name, !x->up ? "down" : x->running ? "running" : "up");
        for (size_t k = 0; k < x->addrs.n; k++)
            printf(" %s", x->addrs.v[k]);
        printf("\n");
    }
    for (size_t i = 0; i < f->n_ib; i++)
        for (size_t k = 0; k < f->ib[i].n_ports; k++) {
            const struct cf_ib_port *p = &f->ib[i].ports[k];
            printf("  %s:%d %s/%s %s %s, %zu GIDs\n", f->ib[i].name, p->port, p->state_name ? p->state_name : "?",
                   p->phys_state_name ? p->phys_state_name : "?", p->rate ? p->rate : "?",
                   p->link_layer ? p->link_layer : "?", p->n_gids);
        }
    for (size_t i = 0; i < f->n_pci; i++) {
        const struct cf_pci_dev *d = &f->pci[i];
        printf("  %-4s %s %s NUMA %d, PCIe %s x%d (max %s x%d)%s%s\n", d->role, d->bdf, d->label ? d->label : "",
               d->numa, d->cur_speed ? d->cur_speed : "?", d->cur_width, d->max_speed ? d->max_speed : "?",
               d->max_width, d->iommu_type ? ", IOMMU " : "", d->iommu_type ? d->iommu_type : "");
    }
    for (size_t i = 0; i < f->n_pairs; i++)
        printf("  %s %s - %s: %s\n", f->pairs[i].kind, f->pairs[i].a, f->pairs[i].b, f->pairs[i].cls);
    for (size_t i = 0; i < f->n_kfd_links; i++) {
        const struct cf_kfd_link *k = &f->kfd_links[i];
        printf("  KFD node%d - node%d: %s, weight %d (%s)\n", k->from, k->to, k->type ? k->type : "?", k->weight,
               k->table ? k->table : "?");
    }
    const struct cf_fabric_limits *l = &f->limits;
    printf("  /dev/shm %.2f GiB, memlock %s, /dev/infiniband %s, local ports %d-%d, IOMMU %s\n",
           (double)l->shm_bytes / (1024.0 * 1024 * 1024),
           l->memlock_soft == UINT64_MAX ? "unlimited" : "limited", l->dev_infiniband ? "present" : "absent",
           l->port_lo, l->port_hi, f->iommu ? f->iommu : "?");
    printf("  NVML: %s%s%s\n", f->nvml_ok ? "ok" : "unavailable", f->nvml_note ? ": " : "",
           f->nvml_note ? f->nvml_note : "");
}

static void print_findings(const struct cf_findings *f)
{
    for (size_t i = 0; i < f->n; i++) {
        const struct cf_finding *x = &f->v[i];
        if (x->severity == CF_SEV_INFO)
            continue;
        printf("  %-7s %s  [%s]\n          %s\n", cf_severity_name(x->severity), x->subject, x->id, x->why);
        if (x->remedy)
            printf("          remedy: %s\n", x->remedy);
    }
}

void doctor_print_consolidated(const struct cf_consolidated *c, const char *const *labels, size_t n, int verbose)
{
    if (!c->reason && !verbose)
        return; /* all is well: say nothing */
    printf("cclforge doctor: %s\n", c->reason ? c->reason : "no problem");
    if (c->n_diffs) {
        heading("Differences");
        for (size_t i = 0; i < c->n_diffs; i++)
            printf("  %-7s %s: %s\n", cf_severity_name(c->diffs[i].sev), c->diffs[i].label, c->diffs[i].summary);
    }
    if (c->findings.n) {
        heading("Findings");
        print_findings(&c->findings);
    }
    heading("Shared by every host");
    printf("  hosts:");
    for (size_t i = 0; i < n; i++)
        printf(" %s", labels[i]);
    printf("\n");
    for (size_t i = 0; i < c->n_shared; i++)
        printf("  %s: %s\n", c->shared[i].label, c->shared[i].value);
}

void doctor_print_gather(const struct cf_gather_result *r, int verbose)
{
    const char **labels = cf_xcalloc(r->n_hosts ? r->n_hosts : 1, sizeof *labels);
    for (size_t i = 0; i < r->n_hosts; i++)
        labels[i] = r->hosts[i].label;
    doctor_print_consolidated(&r->report, labels, r->n_hosts, verbose);
    if (r->report.reason || verbose)
        printf("  (%d rank%s under %s, rank 0 at %s)\n", r->world, r->world == 1 ? "" : "s",
               r->launcher ? r->launcher : "?", r->where);
    free(labels);
}

cJSON *doctor_gather_json(const struct cf_gather_result *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "schema", "cclforge.doctor-gather/1");
    cJSON_AddStringToObject(doc, "launcher", r->launcher ? r->launcher : "");
    cJSON_AddNumberToObject(doc, "world", r->world);
    cJSON_AddStringToObject(doc, "rank0", r->where);
    cJSON *hosts = cJSON_AddArrayToObject(doc, "hosts");
    for (size_t i = 0; i < r->n_hosts; i++) {
        cJSON *h = cJSON_CreateObject();
        cJSON_AddStringToObject(h, "label", r->hosts[i].label);
        cJSON *ranks = cJSON_AddArrayToObject(h, "ranks");
        for (size_t k = 0; k < r->hosts[i].ranks.n; k++)
            cJSON_AddItemToArray(ranks, cJSON_CreateNumber(atoi(r->hosts[i].ranks.v[k])));
        cJSON_AddBoolToObject(h, "surveyed", r->hosts[i].surveyed);
        if (r->hosts[i].surveyed) {
            cJSON *sv = cf_survey_to_json(&r->surveys[i]);
            cJSON_AddItemToObject(sv, "findings", cf_findings_to_json(&r->per_host[i]));
            cJSON_AddItemToObject(h, "report", sv);
        }
        cJSON_AddItemToArray(hosts, h);
    }
    cJSON *missing = cJSON_AddArrayToObject(doc, "missing");
    for (size_t i = 0; i < r->missing.n; i++)
        cJSON_AddItemToArray(missing, cJSON_CreateString(r->missing.v[i]));
    cf_consolidated_to_json(&r->report, doc);
    return doc;
}
