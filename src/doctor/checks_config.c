/* Checks of NCCL's effective configuration (the survey's nccl_config section):
 * files NCCL cannot read or misreads, names the loaded library does not know,
 * debugging settings left on, and values that do not fit this host (interfaces,
 * HCAs, GID indices, the topology file, plugins). Ids in docs/doctor.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cclforge/commlib_params.h"
#include "cclforge/elf.h"
#include "cclforge/fabric.h"
#include "cclforge/ncclconf.h"
#include "cclforge/textdist.h"
#include "doctor/doctor_internal.h"

/* "NCCL_DEBUG=INFO (/etc/nccl.conf:3)" */
static void describe(const struct cf_nccl_setting *s, struct strbuf *out)
{
    cf_sb_addf(out, "%s=%s (%s)", s->name, s->hidden ? "(hidden)" : s->value ? s->value : "", s->source);
}

/* Where to change a setting: the file line, or the environment. */
static char *remedy_for(const struct cf_nccl_setting *s, const char *what)
{
    if (!strcmp(s->source, "environment"))
        return cf_asprintf("%s: unset %s (or fix it) where the job's environment is set", what, s->name);
    return cf_asprintf("%s: edit %s", what, s->source);
}

/* What each kind of configuration note (cclforge/ncclconf.h) is as a finding. */
static const struct {
    const char *kind, *id, *remedy;
} note_findings[] = {
    { "syntax", "nccl-conf-syntax", "write KEY=VALUE with no spaces around '=' and Unix line endings" },
    { "cut", "nccl-conf-cut", "shorten the line: NCCL reads at most 1,023 characters of a name and of a value" },
    { "conf-file-in-file", "nccl-conf-file-in-file",
      "set NCCL_CONF_FILE in the job's environment, or move the lines of that file into this one" },
    { "not-applied", "nccl-conf-not-applied",
      "point NCCL_CONF_FILE at a regular file of KEY=VALUE lines, or unset it to have ~/.nccl.conf read" },
    { "home", "nccl-conf-home",
      "put .nccl.conf in the passwd home directory (getent passwd), or name the file with NCCL_CONF_FILE" },
};

static void check_files(const struct cf_nccl_config *c, struct cf_findings *out)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (c->files[i].problem)
            cf_findings_add(out, CF_SEV_ERROR, "nccl-conf-unreadable", c->files[i].path,
                            "replace it with a regular file of KEY=VALUE lines, or remove it",
                            "NCCL reads %s (%s) at every start: %s", c->files[i].path, c->files[i].role,
                            c->files[i].problem);
    for (size_t i = 0; i < c->n_notes; i++) {
        size_t k = 0; /* a report of an older cclforge has no kind: syntax */
        while (k < sizeof note_findings / sizeof note_findings[0] && c->notes[i].kind &&
               strcmp(note_findings[k].kind, c->notes[i].kind))
            k++;
        if (k == sizeof note_findings / sizeof note_findings[0])
            k = 0;
        cf_findings_add(out, CF_SEV_WARNING, note_findings[k].id, c->notes[i].where, note_findings[k].remedy, "%s",
                        c->notes[i].text);
    }
}

/* The names the library ranks here would load knows; 0 when it cannot be read. */
static int library_names(const struct cf_survey *s, struct cf_commlib_params *p, const struct cf_comm_lib **lib)
{
    memset(p, 0, sizeof *p);
    *lib = cf_survey_active_comm(s);
    if (!*lib || !(*lib)->path)
        return 0;
    struct cf_elf *elf = NULL;
    cf_error err = CF_ERROR_INIT;
    int ok = cf_elf_open((*lib)->path, &elf, &err) == 0 && cf_commlib_params_read(elf, p, &err) == 0 &&
             p->names.n > 0;
    if (elf)
        cf_elf_close(elf);
    cf_error_clear(&err);
    return ok;
}

static int is_param_name(const char *name, const char *flavour)
{
    return cf_starts_with(name, "NCCL_") || (!strcmp(flavour, "rccl") && cf_starts_with(name, "RCCL_"));
}

/* What the library ranks here load knows: its variables and plugin ABIs. */
struct known {
    struct cf_commlib_params p;
    const struct cf_comm_lib *lib;
    int have;
};

static void check_names(const struct cf_nccl_config *c, const struct known *k, struct cf_findings *out)
{
    const struct cf_commlib_params *pp = &k->p;
    const struct cf_comm_lib *lib = k->lib;
    int have = k->have;
    const char *libname = lib && lib->version ? lib->version : "";
    const char *word = lib && lib->kind && !strcmp(lib->kind, "rccl") ? "RCCL" : "NCCL";
    int unchecked = 0;
    for (size_t i = 0; i < c->n_settings; i++) {
        const struct cf_nccl_setting *x = &c->settings[i];
        struct strbuf d = STRBUF_INIT;
        describe(x, &d);
        const struct cf_nccl_param_info *info = cf_nccl_param_info(x->name);
        if (!is_param_name(x->name, c->flavour)) {
            if (strcmp(x->source, "environment"))
                cf_findings_add(out, CF_SEV_WARNING, "nccl-conf-foreign", x->source,
                                "set it where the job's environment is set instead",
                                "%s is not an NCCL variable, yet NCCL sets it in every process that loads it "
                                "(%s)",
                                x->name, cf_sb_str(&d));
        } else if (info && info->cls == CF_NCCL_PARAM_FOREIGN) {
            cf_findings_add(out, CF_SEV_INFO, "nccl-var-foreign", x->name, NULL, "%s: %s", cf_sb_str(&d), info->what);
        } else if (have && !cf_strvec_contains(&pp->names, x->name)) {
            const char *near = cf_closest_name(x->name, (const char *const *)pp->names.v, pp->names.n,
                                               strlen(x->name) / 6 + 1);
            char *remedy = near ? cf_asprintf("rename it to %s (%s)", near, x->source)
                                : remedy_for(x, "remove it");
            cf_findings_add(out, CF_SEV_WARNING, "nccl-var-unknown", x->name, remedy,
                            "%s is not a variable %s %s reads (%zu names read from %s)%s%s%s", cf_sb_str(&d), word, libname,
                            pp->names.n, lib->path, near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
            free(remedy);
        } else if (!have) {
            unchecked++;
        }
        if (info && info->cls == CF_NCCL_PARAM_DEBUG && !cf_nccl_param_benign(info, x->value)) {
            char *remedy = remedy_for(x, "remove it for production runs");
            cf_findings_add(out, CF_SEV_WARNING, "nccl-debug-setting", x->name, remedy, "%s is set: %s", cf_sb_str(&d),
                            info->what);
            free(remedy);
        }
        cf_sb_release(&d);
    }
    if (unchecked)
        cf_findings_add(out, CF_SEV_INFO, "nccl-names-unchecked", lib && lib->path ? lib->path : "NCCL", NULL,
                        "%d NCCL variable%s not checked against the library's own names: %s", unchecked,
                        unchecked == 1 ? "" : "s",
                        lib && lib->path ? "its read-only data could not be read here" : "no NCCL library found");
    const struct cf_nccl_setting *envp = cf_nccl_config_get(c, "NCCL_ENV_PLUGIN");
    if (envp && envp->value && strcasecmp(envp->value, "none"))
        cf_findings_add(out, CF_SEV_INFO, "nccl-env-plugin", envp->source, NULL,
                        "NCCL_ENV_PLUGIN=%s: NCCL 2.28+ asks that plugin for every variable, so the values "
                        "shown here may not be the ones NCCL uses",
                        envp->value);
}

/* ---- values against the host ---- */

static int has_nccl_address(const struct cf_net_if *x)
{
    for (size_t i = 0; i < x->addrs.n; i++)
        if (strcmp(x->addrs.v[i], "::1/128")) /* NCCL skips IPv6 loopback */
            return 1;
    return 0;
}

static void check_ifname(const struct cf_nccl_config *c, const struct cf_fabric *f, struct cf_findings *out)
{
    const struct cf_nccl_setting *x = cf_nccl_config_get(c, "NCCL_SOCKET_IFNAME");
    if (!x || !x->value)
        return;
    struct strbuf d = STRBUF_INIT;
    describe(x, &d);
    if (strlen(x->value) <= 1) {
        /* ncclFindInterfaces: strlen(env) > 1 */
        cf_findings_add(out, CF_SEV_WARNING, "nccl-ifname-ignored", x->name, "give the interface name or prefix",
                        "%s: NCCL ignores a value shorter than two characters and picks interfaces itself", cf_sb_str(&d));
        cf_sb_release(&d);
        return;
    }
    struct cf_nccl_if_list l;
    cf_nccl_if_list_parse(x->value, 16, &l);
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].too_long)
            cf_findings_add(out, CF_SEV_ERROR, "nccl-ifname-too-long", x->name, "use a shorter prefix",
                            "%s: an entry of 64 characters or more overflows NCCL's 64-byte buffer", cf_sb_str(&d));
    struct strbuf used = STRBUF_INIT, down = STRBUF_INIT, all = STRBUF_INIT;
    int only_loopback = 1, n_used = 0;
    for (size_t i = 0; i < f->n_ifs; i++) {
        const struct cf_net_if *ni = &f->ifs[i];
        cf_sb_addf(&all, "%s%s", all.len ? ", " : "", ni->name);
        if (!cf_nccl_if_list_match(&l, ni->name, -1))
            continue;
        if (!ni->running || !has_nccl_address(ni)) {
            cf_sb_addf(&down, "%s%s (%s)", down.len ? ", " : "", ni->name,
                       !ni->up ? "down" : !ni->running ? "no carrier" : "no address");
            continue;
        }
        n_used++;
        only_loopback &= ni->loopback;
        cf_sb_addf(&used, "%s%s", used.len ? ", " : "", ni->name);
    }
    if (!n_used)
        cf_findings_add(out, CF_SEV_ERROR, "nccl-ifname-none", x->name,
                        "set NCCL_SOCKET_IFNAME to an interface that is up with an address (see `ip -br addr`)",
                        "%s matches no interface NCCL can use here%s%s (interfaces: %s): NCCL fails with \"no "
                        "socket interface found\"",
                        cf_sb_str(&d), down.len ? "; matching but unusable: " : "", cf_sb_str(&down), all.len ? cf_sb_str(&all) : "none");
    else if (only_loopback)
        cf_findings_add(out, CF_SEV_WARNING, "nccl-ifname-loopback", x->name,
                        "name the interface other hosts reach this one on",
                        "%s selects only loopback (%s): fine for ranks on this host, other hosts cannot connect",
                        cf_sb_str(&d), cf_sb_str(&used));
    else if (down.len && !l.exclude) /* an exclusion names what not to use: the rest may be idle */
        cf_findings_add(out, CF_SEV_INFO, "nccl-ifname-partly-down", x->name, NULL,
                        "%s: NCCL uses %s; also matching but unusable: %s", cf_sb_str(&d), cf_sb_str(&used), cf_sb_str(&down));
    cf_sb_release(&used);
    cf_sb_release(&down);
    cf_sb_release(&all);
    cf_sb_release(&d);
}

static int port_active(const struct cf_ib_port *p)
{
    /* NCCL: IBV_PORT_ACTIVE (4), link layer InfiniBand or Ethernet */
    return p->state == 4 && p->link_layer &&
           (!strcmp(p->link_layer, "InfiniBand") || !strcmp(p->link_layer, "Ethernet"));
}

static void check_hca(const struct cf_nccl_config *c, const struct cf_fabric *f, struct cf_findings *out)
{
    const struct cf_nccl_setting *x = cf_nccl_config_get(c, "NCCL_IB_HCA");
    const struct cf_nccl_setting *off = cf_nccl_config_get(c, "NCCL_IB_DISABLE");
    if ((off && off->value && atoi(off->value) == 1) || (!x && !f->n_ib))
        return;
    struct cf_nccl_if_list l;
    cf_nccl_if_list_parse(x ? x->value : NULL, 32, &l);
    struct strbuf d = STRBUF_INIT, usable = STRBUF_INIT, downs = STRBUF_INIT;
    if (x)
        describe(x, &d);
    int matched = 0, active = 0;
    for (size_t i = 0; i < f->n_ib; i++)
        for (size_t k = 0; k < f->ib[i].n_ports; k++) {
            const struct cf_ib_port *p = &f->ib[i].ports[k];
            if (!cf_nccl_if_list_match(&l, f->ib[i].name, p->port))
                continue;
            matched++;
            if (port_active(p)) {
                active++;
                cf_sb_addf(&usable, "%s%s:%d", usable.len ? ", " : "", f->ib[i].name, p->port);
            } else {
                cf_sb_addf(&downs, "%s%s:%d %s/%s", downs.len ? ", " : "", f->ib[i].name, p->port,
                           p->state_name ? p->state_name : "?", p->phys_state_name ? p->phys_state_name : "?");
            }
        }
    if (x && !matched)
        cf_findings_add(out, CF_SEV_ERROR, "nccl-ib-hca-none", x->name,
                        "name HCAs that exist (ls /sys/class/infiniband), or unset NCCL_IB_HCA",
                        "%s matches no HCA port here (%zu HCA%s): NCCL falls back to sockets", cf_sb_str(&d), f->n_ib,
                        f->n_ib == 1 ? "" : "s");
    else if (matched && !active)
        cf_findings_add(out, CF_SEV_ERROR, "ib-no-active-port", x ? x->name : "InfiniBand",
                        "bring a port up (ibstat; check the cable and the subnet manager)",
                        "no HCA port NCCL would use is ACTIVE (%s): NCCL silently falls back to sockets", cf_sb_str(&downs));
    else if (downs.len)
        cf_findings_add(out, CF_SEV_WARNING, "ib-port-down", x ? x->name : "InfiniBand",
                        "bring the port up, or exclude it (NCCL_IB_HCA)",
                        "NCCL uses %s; these ports are not ACTIVE: %s", cf_sb_str(&usable), cf_sb_str(&downs));
    cf_sb_release(&d);
    cf_sb_release(&usable);
    cf_sb_release(&downs);
}

static int link_local_gid(const char *gid)
{
    return cf_starts_with(gid, "fe80:0000:0000:0000");
}

static int roce_version(const char *type)
{
    if (!type)
        return 0;
    if (cf_starts_with(type, "RoCE v2"))
        return 2;
    return cf_starts_with(type, "IB/RoCE v1") || cf_starts_with(type, "RoCE v1") ? 1 : 0;
}

static const struct cf_ib_gid *gid_at(const struct cf_ib_port *p, int index)
{
    for (size_t i = 0; i < p->n_gids; i++)
        if (p->gids[i].index == index)
            return &p->gids[i];
    return NULL;
}

static void check_gid_index(const struct cf_nccl_config *c, const struct cf_fabric *f, struct cf_findings *out)
{
    const struct cf_nccl_setting *x = cf_nccl_config_get(c, "NCCL_IB_GID_INDEX");
    if (!x || !x->value || !*x->value)
        return;
    int want = atoi(x->value);
    const struct cf_nccl_setting *rv = cf_nccl_config_get(c, "NCCL_IB_ROCE_VERSION_NUM");
    int version = rv && rv->value && *rv->value ? atoi(rv->value) : 2;
    struct strbuf d = STRBUF_INIT;
    describe(x, &d);
    for (size_t i = 0; i < f->n_ib; i++)
        for (size_t k = 0; k < f->ib[i].n_ports; k++) {
            const struct cf_ib_port *p = &f->ib[i].ports[k];
            if (!port_active(p) || strcmp(p->link_layer, "Ethernet"))
                continue; /* NCCL uses the GID index on RoCE only */
            const struct cf_ib_gid *g = gid_at(p, want);
            char subject[96];
            snprintf(subject, sizeof subject, "%s port %d", f->ib[i].name, p->port);
            /* what NCCL would pick by itself: the first valid GID of the wanted RoCE version */
            const struct cf_ib_gid *best = NULL;
            for (size_t n = 0; n < p->n_gids && !best; n++)
                if (!link_local_gid(p->gids[n].gid) && roce_version(p->gids[n].type) == version)
                    best = &p->gids[n];
            char hint[96] = "";
            if (best)
                snprintf(hint, sizeof hint, "NCCL_IB_GID_INDEX=%d (%s, %s), or unset it", best->index,
                         best->type ? best->type : "?", best->gid);
            if (want < 0 || want >= p->gid_table_len || !g)
                cf_findings_add(out, CF_SEV_ERROR, "nccl-gid-index-empty", subject, best ? hint : "unset it",
                                "%s: the GID table of %s has no configured entry %d (%d entries)", cf_sb_str(&d), subject,
                                want, p->gid_table_len);
            else if (link_local_gid(g->gid))
                cf_findings_add(out, CF_SEV_WARNING, "nccl-gid-index-link-local", subject, best ? hint : NULL,
                                "%s: GID %d of %s is link-local (%s): traffic cannot be routed between subnets",
                                cf_sb_str(&d), want, subject, g->gid);
            else if (roce_version(g->type) && roce_version(g->type) != version)
                cf_findings_add(out, CF_SEV_WARNING, "nccl-gid-index-version", subject, best ? hint : NULL,
                                "%s: GID %d of %s is %s, not RoCE v%d (NCCL_IB_ROCE_VERSION_NUM)", cf_sb_str(&d), want,
                                subject, g->type, version);
        }
    cf_sb_release(&d);
}

static void check_topo_and_plugins(const struct cf_nccl_config *c, const struct known *kn, struct cf_findings *out)
{
    if (c->topo_file_problem)
        cf_findings_add(out, CF_SEV_ERROR, "nccl-topo-file", "NCCL_TOPO_FILE",
                        "point NCCL_TOPO_FILE at a topology NCCL wrote (NCCL_TOPO_DUMP_FILE), or unset it",
                        "%s", c->topo_file_problem);
    const struct cf_comm_lib *lib = kn->lib;
    int accepted[16];
    size_t n_acc = kn->have ? cf_commlib_plugin_versions(&kn->p, "ncclNetPlugin_v", accepted, 16) : 0;
    for (size_t i = 0; i < c->n_plugins; i++) {
        const struct cf_nccl_plugin *pl = &c->plugins[i];
        struct strbuf tried = STRBUF_INIT;
        for (size_t k = 0; k < pl->tried.n; k++)
            cf_sb_addf(&tried, "%s%s", k ? ", " : "", pl->tried.v[k]);
        if (!pl->path) {
            cf_findings_add(out, pl->variable ? CF_SEV_ERROR : CF_SEV_INFO, "nccl-plugin-missing",
                            pl->variable ? pl->variable : pl->requested,
                            "install the plugin where the loader finds it (LD_LIBRARY_PATH), or unset the variable",
                            "%s=%s: none of %s is found by the loader; NCCL goes on without the %s plugin",
                            pl->variable ? pl->variable : "default", pl->requested, cf_sb_str(&tried), pl->kind);
        } else if (!strcmp(pl->kind, "net") && n_acc) {
            int ok = 0;
            struct strbuf has = STRBUF_INIT, acc = STRBUF_INIT;
            for (size_t k = 0; k < pl->symbols.n; k++)
                if (cf_starts_with(pl->symbols.v[k], "ncclNetPlugin_v")) {
                    int v = atoi(pl->symbols.v[k] + strlen("ncclNetPlugin_v"));
                    cf_sb_addf(&has, "%sv%d", has.len ? ", " : "", v);
                    for (size_t a = 0; a < n_acc; a++)
                        ok |= accepted[a] == v;
                }
            for (size_t a = 0; a < n_acc; a++)
                cf_sb_addf(&acc, "%sv%d", a ? ", " : "", accepted[a]);
            if (!ok)
                cf_findings_add(out, CF_SEV_ERROR, "nccl-plugin-abi", pl->path,
                                "use a plugin built for this NCCL's plugin API",
                                "%s exports %s but NCCL %s accepts ncclNetPlugin %s: NCCL ignores the plugin",
                                pl->path, has.len ? cf_sb_str(&has) : "no ncclNetPlugin_v* symbol",
                                lib->version ? lib->version : "", cf_sb_str(&acc));
            cf_sb_release(&has);
            cf_sb_release(&acc);
        }
        cf_sb_release(&tried);
    }
    const struct cf_nccl_setting *net = cf_nccl_config_get(c, "NCCL_NET");
    int have_net_plugin = 0;
    for (size_t i = 0; i < c->n_plugins; i++)
        have_net_plugin |= !strcmp(c->plugins[i].kind, "net") && c->plugins[i].path;
    if (net && net->value && *net->value && strcasecmp(net->value, "IB") && strcasecmp(net->value, "Socket") &&
        !have_net_plugin)
        cf_findings_add(out, CF_SEV_ERROR, "nccl-net-unknown", net->name,
                        "NCCL_NET=IB or NCCL_NET=Socket, or install the plugin that provides it",
                        "NCCL_NET=%s (%s) names no built-in network (IB, Socket) and no network plugin loads: "
                        "NCCL fails to initialise",
                        net->value, net->source);
}

void cf_check_nccl_config(const struct cf_survey *s, struct cf_findings *out)
{
    const struct cf_nccl_config *c = s->nccl_config;
    if (!c)
        return;
    struct known k;
    k.have = library_names(s, &k.p, &k.lib);
    check_files(c, out);
    check_names(c, &k, out);
    if (s->fabric) {
        check_ifname(c, s->fabric, out);
        check_hca(c, s->fabric, out);
        check_gid_index(c, s->fabric, out);
    }
    check_topo_and_plugins(c, &k, out);
    cf_commlib_params_release(&k.p);
}
