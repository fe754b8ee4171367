/* Printing NCCL's configuration, the fabric, and reports over many hosts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fabric.h"
#include "cclforge/hostlist.h"
#include "cclforge/ncclconf.h"
#include "cli/cli.h"
#include "cli/doctor_hosts.h"
#include "cli/term.h"

/* untrusted text for the terminal (cli_safe), "?" when unknown */
static const char *or_what(const char *s)
{
    return s ? cli_safe(s) : "?";
}

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
        printf("  %-16s %s  %s\n", c->files[i].role, cli_safe(c->files[i].path),
               c->files[i].problem  ? cli_safe(c->files[i].problem)
               : c->files[i].read    ? "read"
               : c->files[i].present ? "present, nothing applied (see the findings)"
                                     : "absent");
    if (!c->n_settings)
        printf("  no NCCL variable set\n");
    for (size_t i = 0; i < c->n_settings; i++) {
        const struct cf_nccl_setting *x = &c->settings[i];
        const struct cf_nccl_param_info *info = cf_nccl_param_info(x->name);
        printf("  %s=%s  (%s%s%s)\n", cli_safe(x->name), x->hidden ? "(hidden)" : cli_safe(x->value), cli_safe(x->source),
               info ? ", " : "", info ? cf_nccl_param_class_name(info->cls) : "");
        for (size_t k = 0; k < x->overridden.n; k++)
            printf("      overrides %s\n", cli_safe(x->overridden.v[k]));
    }
    for (size_t i = 0; i < c->n_plugins; i++)
        printf("  %s plugin %s -> %s%s%s%s\n", c->plugins[i].kind, cli_safe(c->plugins[i].requested),
               c->plugins[i].path ? cli_safe(c->plugins[i].path) : "not found", c->plugins[i].found_by ? " (" : "",
               cli_safe(c->plugins[i].found_by), c->plugins[i].found_by ? ")" : "");
}

void doctor_print_fabric(const struct cf_survey *s)
{
    const struct cf_fabric *f = s->fabric;
    if (!f)
        return;
    heading("Fabric");
    for (size_t i = 0; i < f->n_ifs; i++) {
        const struct cf_net_if *x = &f->ifs[i];
        printf("  %-10s %-7s", cli_safe(x->name), !x->up ? "down" : x->running ? "running" : "up");
        for (size_t k = 0; k < x->addrs.n; k++)
            printf(" %s", cli_safe(x->addrs.v[k]));
        printf("\n");
    }
    for (size_t i = 0; i < f->n_ib; i++)
        for (size_t k = 0; k < f->ib[i].n_ports; k++) {
            const struct cf_ib_port *p = &f->ib[i].ports[k];
            printf("  %s:%d %s/%s %s %s, %zu GIDs\n", cli_safe(f->ib[i].name), p->port, or_what(p->state_name),
                   or_what(p->phys_state_name), or_what(p->rate), or_what(p->link_layer), p->n_gids);
        }
    for (size_t i = 0; i < f->n_pci; i++) {
        const struct cf_pci_dev *d = &f->pci[i];
        printf("  %-4s %s %s NUMA %d, PCIe %s x%d (max %s x%d)%s%s\n", cli_safe(d->role), cli_safe(d->bdf),
               cli_safe(d->label), d->numa, or_what(d->cur_speed), d->cur_width, or_what(d->max_speed), d->max_width,
               d->iommu_type ? ", IOMMU " : "", cli_safe(d->iommu_type));
    }
    for (size_t i = 0; i < f->n_pairs; i++)
        printf("  %s %s - %s: %s\n", cli_safe(f->pairs[i].kind), cli_safe(f->pairs[i].a), cli_safe(f->pairs[i].b),
               cli_safe(f->pairs[i].cls));
    for (size_t i = 0; i < f->n_kfd_links; i++) {
        const struct cf_kfd_link *k = &f->kfd_links[i];
        printf("  KFD node%d - node%d: %s, weight %d (%s)\n", k->from, k->to, or_what(k->type), k->weight,
               or_what(k->table));
    }
    const struct cf_fabric_limits *l = &f->limits;
    printf("  /dev/shm %.2f GiB, memlock %s, /dev/infiniband %s, local ports %d-%d, IOMMU %s\n",
           (double)l->shm_bytes / (1024.0 * 1024 * 1024),
           l->memlock_soft == UINT64_MAX ? "unlimited" : "limited", l->dev_infiniband ? "present" : "absent",
           l->port_lo, l->port_hi, or_what(f->iommu));
    printf("  NVML: %s%s%s\n", f->nvml_ok ? "ok" : "unavailable", f->nvml_note ? ": " : "",
           cli_safe(f->nvml_note));
}

/* the hosts of a set, as a Slurm hostlist (a name each; n of them) */
static void print_hostlist(const char *lead, const char *const *names, size_t n)
{
    char *hl = cf_hostlist_of_set(names, n);
    printf("%s%zu host%s: %s\n", lead, n, n == 1 ? "" : "s", cli_safe(hl));
    free(hl);
}

/* the same finding on many hosts once, its hosts as a hostlist; notes left out */
static void print_findings(const struct cf_findings *f, const char *const *labels, size_t n)
{
    struct cf_finding_groups gs;
    cf_findings_group(f, labels, n, &gs);
    for (size_t i = 0; i < gs.n; i++) {
        const struct cf_finding_group *g = &gs.v[i];
        const struct cf_finding *x = g->f;
        if (x->severity == CF_SEV_INFO)
            continue;
        /* a finding on one host keeps its name in the subject, as consolidated */
        printf("  %-7s %s  [%s]\n", cf_severity_name(x->severity), cli_safe(g->n_hosts > 1 ? g->subject : x->subject),
               cli_safe(x->id));
        if (g->n_hosts > 1) {
            const char **names = cf_xcalloc(g->n_hosts, sizeof *names);
            for (size_t k = 0; k < g->n_hosts; k++)
                names[k] = labels[g->hosts[k]];
            print_hostlist("          on ", names, g->n_hosts);
            free(names);
        }
        printf("          %s\n", cli_safe(x->why));
        if (x->remedy)
            printf("          remedy: %s\n", cli_safe(x->remedy));
    }
    cf_finding_groups_release(&gs);
}

void doctor_print_consolidated(const struct cf_consolidated *c, const char *const *labels, size_t n, int verbose)
{
    if (!c->reason && !verbose)
        return; /* all is well: say nothing */
    printf("cclforge doctor: %s\n", c->reason ? cli_safe(c->reason) : "no problem");
    if (c->n_diffs) {
        heading("Differences");
        for (size_t i = 0; i < c->n_diffs; i++)
            printf("  %-7s %s: %s\n", cf_severity_name(c->diffs[i].sev), cli_safe(c->diffs[i].label),
                   cli_safe(c->diffs[i].summary));
    }
    if (c->findings.n) {
        heading("Findings");
        print_findings(&c->findings, labels, n);
    }
    heading("Shared by every host");
    print_hostlist("  ", labels, n);
    for (size_t i = 0; i < c->n_shared; i++)
        printf("  %s: %s\n", cli_safe(c->shared[i].label), cli_safe(c->shared[i].value));
}

/* What each host runs, hosts alike (cf_hosts_alike) in one row with their
 * hostlist and count: 1,024 hosts with one odd one are two rows. */
void doctor_print_host_table(const struct cf_hosts_view *v, const struct cf_survey *const *surveys)
{
    struct cf_alike_rows rows;
    cf_hosts_alike(v, &rows);
    printf("\n%-20s %-22s %-16s %s\n", "host", "comm library", "torch", "GPU archs");
    const char **names = cf_xcalloc(v->n + 1, sizeof *names);
    for (size_t r = 0; r < rows.n; r++) {
        size_t k = rows.v[r].n_hosts;
        for (size_t i = 0; i < k; i++)
            names[i] = v->labels[rows.v[r].hosts[i]];
        char *hl = cf_hostlist_of_set(names, k);
        char *who = k > 1 ? cf_asprintf("%s (%zu)", hl, k) : cf_strdup(hl);
        struct strbuf comm = STRBUF_INIT, torch = STRBUF_INIT, archs = STRBUF_INIT;
        const struct cf_survey *s = surveys[rows.v[r].hosts[0]];
        if (s)
            cf_compare_host_row(s, &comm, &torch, &archs);
        char *row = s ? cf_asprintf("%-22s %-16s %s", cf_sb_str(&comm), cf_sb_str(&torch), cf_sb_str(&archs))
                      : cf_strdup("(no survey)");
        printf("%-20s %s\n", cli_safe(who), cli_safe(row)); /* versions from other hosts' documents */
        free(row);
        cf_sb_release(&comm);
        cf_sb_release(&torch);
        cf_sb_release(&archs);
        free(who);
        free(hl);
    }
    free(names);
    cf_alike_rows_release(&rows);
}

void doctor_print_gather(const struct cf_gather_result *r, int verbose)
{
    const char **labels = cf_gather_labels(r);
    doctor_print_consolidated(&r->report, labels, r->n_hosts, verbose);
    if (r->report.reason || verbose) {
        printf("  (%d rank%s under %s, rank 0 at %s)\n", r->world, r->world == 1 ? "" : "s",
               or_what(r->launcher), cli_safe(r->where));
        const struct cf_survey **surveys = cf_xcalloc(r->n_hosts + 1, sizeof *surveys);
        for (size_t i = 0; i < r->n_hosts; i++)
            surveys[i] = r->hosts[i].surveyed ? &r->surveys[i] : NULL;
        struct cf_hosts_view v = { labels, r->n_hosts, &r->report, &r->missing };
        doctor_print_host_table(&v, surveys);
        free(surveys);
    }
    free(labels);
}
