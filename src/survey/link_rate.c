/* Link rates as sysfs words them, in the units a busbw is compared with. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/path_capacity.h"

/* PCIe per-lane transfer rate -> bytes one way: 8b/10b up to gen 2, 128b/130b for
 * gens 3-5, FLIT mode (242 of 256 bytes carry data) from gen 6 */
static const struct {
    double gts, gbps_per_lane;
} pcie_gens[] = {
    { 2.5, 2.5 * 8 / 10 / 8 },     { 5.0, 5.0 * 8 / 10 / 8 },     { 8.0, 8.0 * 128 / 130 / 8 },
    { 16.0, 16.0 * 128 / 130 / 8 }, { 32.0, 32.0 * 128 / 130 / 8 }, { 64.0, 64.0 * 242 / 256 / 8 },
    { 128.0, 128.0 * 242 / 256 / 8 },
};

double cf_pcie_gbps(const char *speed, int width)
{
    if (!speed || width <= 0 || width > 32)
        return 0;
    char *end;
    double gts = strtod(speed, &end);
    if (end == speed || strncmp(end, " GT/s", 5))
        return 0;
    for (size_t i = 0; i < sizeof pcie_gens / sizeof pcie_gens[0]; i++)
        if (fabs(pcie_gens[i].gts - gts) < 0.01)
            return pcie_gens[i].gbps_per_lane * width;
    return 0;
}

/* IB widths' speeds that signal 10 bits per 8 (the rate the kernel prints is the signalling rate) */
static const char *const ib_8b10b[] = { "SDR)", "DDR)", "QDR)" };

double cf_ib_rate_gbit(const char *rate)
{
    if (!rate)
        return 0;
    char *end;
    double g = strtod(rate, &end);
    if (end == rate || !(g > 0 && g < 1e6) || strncmp(end, " Gb/sec", 7))
        return 0;
    for (size_t i = 0; i < sizeof ib_8b10b / sizeof ib_8b10b[0]; i++)
        if (strstr(end, ib_8b10b[i]))
            return g * 8 / 10;
    return g;
}

/* one direction of one link, GB/s, by nvmlNvlinkVersion_t: 1.0 (P100) 20; 2.0-4.0
 * (V100, A100, H100) 25; 5.0 (B200) 50. The older NVML numbering (the NVLink
 * generation itself) gives the same rates for every value it used. */
static const double nvlink_rates[] = { 0, 20, 25, 25, 25, 25, 25, 50 };

double cf_nvlink_gbps(int version)
{
    return version > 0 && (size_t)version < sizeof nvlink_rates / sizeof nvlink_rates[0] ? nvlink_rates[version] : 0;
}
