/* NVML, loaded with dlopen as libcuda is (cclforge never links a vendor library):
 * per GPU its NVLink states and what each active link reaches, ECC error counts,
 * retired pages and remapped rows, clock event (throttle) reasons and MIG mode.
 * Every NVML error other than "not supported on this GPU" is recorded: a health
 * check that cannot read a counter has not passed. Signatures as in nvml.h (the
 * tests build their NVML from it). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "survey/fabric_internal.h"

typedef int nvml_ret;
typedef void *nvml_dev;
enum {
    NVML_OK = 0, NVML_INVALID_ARGUMENT = 2, NVML_NOT_SUPPORTED = 3, NVML_INSUFFICIENT_SIZE = 7,
    MAX_LINKS = 36,   /* NVML_NVLINK_MAX_LINKS */
    MAX_PAGES = 64    /* addresses asked for; a larger count comes back with INSUFFICIENT_SIZE */
};

/* nvmlPciInfo_t (nvml.h): only busId is read. The test library fills the header's own
 * struct, so a layout that drifts from this one fails there. */
struct nvml_pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32]; /* "00000000:17:00.0" (NVML_DEVICE_PCI_BUS_ID_FMT) */
};

struct nvml_api {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*driver_version)(char *, unsigned);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*handle)(unsigned, nvml_dev *);
    nvml_ret (*name)(nvml_dev, char *, unsigned);
    nvml_ret (*uuid)(nvml_dev, char *, unsigned);
    nvml_ret (*pci_info)(nvml_dev, struct nvml_pci_info *);
    nvml_ret (*nvlink_state)(nvml_dev, unsigned, int *);
    nvml_ret (*nvlink_version)(nvml_dev, unsigned, unsigned *);
    nvml_ret (*nvlink_remote_pci)(nvml_dev, unsigned, struct nvml_pci_info *);
    nvml_ret (*nvlink_remote_type)(nvml_dev, unsigned, int *);
    nvml_ret (*ecc_mode)(nvml_dev, int *, int *);
    nvml_ret (*ecc_total)(nvml_dev, int, int, unsigned long long *);
    nvml_ret (*retired_pages)(nvml_dev, int, unsigned *, unsigned long long *);
    nvml_ret (*retired_pending)(nvml_dev, int *);
    nvml_ret (*remapped_rows)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
    nvml_ret (*clock_reasons)(nvml_dev, unsigned long long *);
    nvml_ret (*mig_mode)(nvml_dev, unsigned *, unsigned *);
};

/* Entry points: the first name found wins (EventReasons replaced ThrottleReasons);
 * NULL none. */
static const struct {
    size_t offset;
    const char *names[2];
    int required;
} symbols[] = {
    { offsetof(struct nvml_api, init), { "nvmlInit_v2" }, 1 },
    { offsetof(struct nvml_api, shutdown), { "nvmlShutdown" }, 1 },
    { offsetof(struct nvml_api, error_string), { "nvmlErrorString" }, 1 },
    { offsetof(struct nvml_api, driver_version), { "nvmlSystemGetDriverVersion" }, 0 },
    { offsetof(struct nvml_api, count), { "nvmlDeviceGetCount_v2" }, 1 },
    { offsetof(struct nvml_api, handle), { "nvmlDeviceGetHandleByIndex_v2" }, 1 },
    { offsetof(struct nvml_api, name), { "nvmlDeviceGetName" }, 0 },
    { offsetof(struct nvml_api, uuid), { "nvmlDeviceGetUUID" }, 0 },
    { offsetof(struct nvml_api, pci_info), { "nvmlDeviceGetPciInfo_v3" }, 0 },
    { offsetof(struct nvml_api, nvlink_state), { "nvmlDeviceGetNvLinkState" }, 0 },
    { offsetof(struct nvml_api, nvlink_version), { "nvmlDeviceGetNvLinkVersion" }, 0 },
    { offsetof(struct nvml_api, nvlink_remote_pci), { "nvmlDeviceGetNvLinkRemotePciInfo_v2" }, 0 },
    { offsetof(struct nvml_api, nvlink_remote_type), { "nvmlDeviceGetNvLinkRemoteDeviceType" }, 0 },
    { offsetof(struct nvml_api, ecc_mode), { "nvmlDeviceGetEccMode" }, 0 },
    { offsetof(struct nvml_api, ecc_total), { "nvmlDeviceGetTotalEccErrors" }, 0 },
    { offsetof(struct nvml_api, retired_pages), { "nvmlDeviceGetRetiredPages" }, 0 },
    { offsetof(struct nvml_api, retired_pending), { "nvmlDeviceGetRetiredPagesPendingStatus" }, 0 },
    { offsetof(struct nvml_api, remapped_rows), { "nvmlDeviceGetRemappedRows" }, 0 },
    { offsetof(struct nvml_api, clock_reasons),
      { "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons" }, 0 },
    { offsetof(struct nvml_api, mig_mode), { "nvmlDeviceGetMigMode" }, 0 },
};

/* Clock event reasons that slow a collective down (nvml.h's bits); idle, sync boost,
 * application clocks and display are not a problem. */
static const struct {
    unsigned long long bit;
    const char *name;
} reasons[] = {
    { 0x4, "sw_power_cap" },          { 0x8, "hw_slowdown" },  { 0x20, "sw_thermal" },
    { 0x40, "hw_thermal" },           { 0x80, "hw_power_brake" }, { 0x400, "reliability" },
};

/* nvmlIntNvLinkDeviceType_t; NVML_NVLINK_DEVICE_TYPE_UNKNOWN (0xFF) and others: none */
static const char *const remote_types[] = { [0] = "gpu", [1] = "ibmnpu", [2] = "switch" };

struct probe {
    struct nvml_api *api;
    struct cf_nvml_gpu *g;
};

/* 1 when the value is good; 0 when not supported (not an error); -1 recorded as an error. */
static int check(struct probe *p, const char *call, nvml_ret rc)
{
    if (rc == NVML_OK)
        return 1;
    if (rc == NVML_NOT_SUPPORTED)
        return 0;
    char *e = cf_asprintf("%s: %s", call, p->api->error_string ? p->api->error_string(rc) : "error");
    if (!cf_strvec_contains(&p->g->errors, e)) /* one line per call that fails, however often it is asked */
        cf_strvec_push(&p->g->errors, e);
    free(e);
    return -1;
}

/* "00000000:07:00.0" (NVML's form) as sysfs names it; 0 when it is no bus id */
static int sysfs_bdf(struct nvml_pci_info *pci, char out[32])
{
    unsigned dom = 0, bus = 0, slot = 0, fn = 0;
    pci->bus_id[sizeof pci->bus_id - 1] = 0; /* bounded, whatever the library wrote */
    if (sscanf(pci->bus_id, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4)
        return 0;
    snprintf(out, 32, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
    return 1;
}

/* What one active link reaches, counted per remote PCI function as NCCL's topology
 * does (a link NVML cannot place is not counted: NCCL skips it too). */
static void read_peer(struct probe *p, nvml_dev dev, unsigned link)
{
    struct nvml_api *api = p->api;
    struct nvml_pci_info pci;
    memset(&pci, 0, sizeof pci);
    char bdf[32];
    if (check(p, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api->nvlink_remote_pci(dev, link, &pci)) <= 0 ||
        !sysfs_bdf(&pci, bdf))
        return;
    struct cf_nvml_gpu *g = p->g;
    for (size_t i = 0; i < g->n_nvlink_peers; i++)
        if (!strcmp(g->nvlink_peers[i].bdf, bdf)) {
            g->nvlink_peers[i].links++;
            return;
        }
    int type = -1;
    if (api->nvlink_remote_type &&
        check(p, "nvmlDeviceGetNvLinkRemoteDeviceType", api->nvlink_remote_type(dev, link, &type)) <= 0)
        type = -1;
    g->nvlink_peers = cf_xrealloc(g->nvlink_peers, (g->n_nvlink_peers + 1) * sizeof *g->nvlink_peers);
    g->nvlink_peers[g->n_nvlink_peers++] = (struct cf_nvlink_peer){
        cf_strdup(bdf),
        type >= 0 && (size_t)type < sizeof remote_types / sizeof *remote_types && remote_types[type]
            ? cf_strdup(remote_types[type]) : NULL,
        1,
    };
}

static void read_gpu(struct nvml_api *api, unsigned index, struct cf_nvml_gpu *g)
{
    memset(g, 0, sizeof *g);
    g->index = (int)index;
    g->ecc_enabled = g->retired_pending = g->remap_pending = g->remap_failure = -1;
    g->mig_current = g->mig_pending = -1;
    g->ecc_uncorrected_volatile = g->ecc_uncorrected_aggregate = g->ecc_corrected_volatile = -1;
    g->retired_sbe = g->retired_dbe = g->remapped_corr = g->remapped_unc = -1;
    struct probe p = { api, g };
    nvml_dev dev = NULL;
    if (check(&p, "nvmlDeviceGetHandleByIndex_v2", api->handle(index, &dev)) <= 0)
        return;
    char buf[96];
    if (api->name && check(&p, "nvmlDeviceGetName", api->name(dev, buf, sizeof buf)) > 0)
        g->name = cf_strndup(buf, strnlen(buf, sizeof buf));
    if (api->uuid && check(&p, "nvmlDeviceGetUUID", api->uuid(dev, buf, sizeof buf)) > 0)
        g->uuid = cf_strndup(buf, strnlen(buf, sizeof buf));
    struct nvml_pci_info pci;
    memset(&pci, 0, sizeof pci);
    char bdf[32];
    if (api->pci_info && check(&p, "nvmlDeviceGetPciInfo_v3", api->pci_info(dev, &pci)) > 0 && sysfs_bdf(&pci, bdf))
        g->bdf = cf_strdup(bdf);
    for (unsigned link = 0; api->nvlink_state && link < MAX_LINKS; link++) {
        int active = 0;
        nvml_ret rc = api->nvlink_state(dev, link, &active);
        if (rc == NVML_INVALID_ARGUMENT || rc == NVML_NOT_SUPPORTED)
            break; /* past the GPU's last link, or a GPU without NVLink */
        if (check(&p, "nvmlDeviceGetNvLinkState", rc) < 0)
            break;
        if (active && !g->nvlinks_active++ && api->nvlink_version) {
            unsigned v = 0; /* every link of a GPU is of one version */
            if (check(&p, "nvmlDeviceGetNvLinkVersion", api->nvlink_version(dev, link, &v)) > 0 && v < 64)
                g->nvlink_version = (int)v;
        }
        if (!active)
            g->nvlinks_inactive++;
        else if (api->nvlink_remote_pci)
            read_peer(&p, dev, link);
    }
    int cur = 0, pend = 0;
    if (api->ecc_mode && check(&p, "nvmlDeviceGetEccMode", api->ecc_mode(dev, &cur, &pend)) > 0)
        g->ecc_enabled = cur != 0;
    unsigned long long v = 0;
    /* NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, CORRECTED = 0; NVML_VOLATILE_ECC = 0, AGGREGATE = 1 */
    if (g->ecc_enabled == 1 && api->ecc_total) {
        if (check(&p, "nvmlDeviceGetTotalEccErrors", api->ecc_total(dev, 1, 0, &v)) > 0)
            g->ecc_uncorrected_volatile = (long long)v;
        if (check(&p, "nvmlDeviceGetTotalEccErrors", api->ecc_total(dev, 1, 1, &v)) > 0)
            g->ecc_uncorrected_aggregate = (long long)v;
        if (check(&p, "nvmlDeviceGetTotalEccErrors", api->ecc_total(dev, 0, 0, &v)) > 0)
            g->ecc_corrected_volatile = (long long)v;
    }
    /* NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0, DOUBLE_BIT_ECC_ERROR = 1. nvml.h
     * calls a NULL address buffer invalid, so one is given; a larger count comes back with
     * NVML_ERROR_INSUFFICIENT_SIZE and the number needed. */
    for (int cause = 0; api->retired_pages && cause < 2; cause++) {
        unsigned long long addrs[MAX_PAGES];
        unsigned count = MAX_PAGES;
        nvml_ret rc = api->retired_pages(dev, cause, &count, addrs);
        if (check(&p, "nvmlDeviceGetRetiredPages", rc == NVML_INSUFFICIENT_SIZE ? NVML_OK : rc) > 0)
            *(cause ? &g->retired_dbe : &g->retired_sbe) = count;
    }
    int pending = 0;
    if (api->retired_pending && check(&p, "nvmlDeviceGetRetiredPagesPendingStatus", api->retired_pending(dev, &pending)) > 0)
        g->retired_pending = pending != 0;
    unsigned corr = 0, unc = 0, ipend = 0, fail = 0;
    if (api->remapped_rows &&
        check(&p, "nvmlDeviceGetRemappedRows", api->remapped_rows(dev, &corr, &unc, &ipend, &fail)) > 0) {
        g->remapped_corr = corr;
        g->remapped_unc = unc;
        g->remap_pending = ipend != 0;
        g->remap_failure = fail != 0;
    }
    if (api->clock_reasons && check(&p, "nvmlDeviceGetCurrentClocksEventReasons", api->clock_reasons(dev, &g->throttle)) > 0)
        for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
            if (g->throttle & reasons[i].bit)
                cf_strvec_push(&g->throttle_names, reasons[i].name);
    unsigned mc = 0, mp = 0;
    if (api->mig_mode && check(&p, "nvmlDeviceGetMigMode", api->mig_mode(dev, &mc, &mp)) > 0) {
        g->mig_current = (int)mc;
        g->mig_pending = (int)mp;
    }
}

void cf_fabric_probe_nvml(const struct cf_survey_opts *opts, struct cf_fabric *f)
{
    const char *lib = opts->nvml_lib ? opts->nvml_lib : "libnvidia-ml.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        f->nvml_note = cf_asprintf("%s not loaded: %s", lib, why ? why : "dlopen failed");
        return;
    }
    struct nvml_api api;
    memset(&api, 0, sizeof api);
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *sym = NULL;
        for (int k = 0; k < 2 && !sym && symbols[i].names[k]; k++)
            sym = dlsym(h, symbols[i].names[k]);
        if (!sym && symbols[i].required) {
            f->nvml_note = cf_asprintf("%s has no %s: not NVML", lib, symbols[i].names[0]);
            dlclose(h);
            return;
        }
        memcpy((char *)&api + symbols[i].offset, &sym, sizeof sym);
    }
    nvml_ret rc = api.init();
    if (rc != NVML_OK) {
        f->nvml_note = cf_asprintf("nvmlInit_v2 failed: %s", api.error_string(rc));
        dlclose(h);
        return;
    }
    char version[96] = "";
    if (api.driver_version && api.driver_version(version, sizeof version) == NVML_OK)
        f->nvml_note = cf_asprintf("driver %s", version);
    unsigned n = 0;
    rc = api.count(&n);
    if (rc != NVML_OK) {
        free(f->nvml_note);
        f->nvml_note = cf_asprintf("nvmlDeviceGetCount_v2 failed: %s", api.error_string(rc));
    } else {
        f->nvml_ok = 1;
        f->nvml = cf_xcalloc(n ? n : 1, sizeof *f->nvml);
        for (unsigned i = 0; i < n && i < 1024; i++)
            read_gpu(&api, i, &f->nvml[f->n_nvml++]);
    }
    api.shutdown();
    dlclose(h);
}
