/* Network interfaces as NCCL's findInterfaces sees them: getifaddrs, IPv4 and
 * IPv6 addresses only, with the flags it filters on; and each one's line rate and
 * PCI function from /sys/class/net (of this network namespace: getifaddrs is live,
 * so --sysfs-root does not apply). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/fs.h"
#include "survey/fabric_internal.h"

static int prefix_len(const struct sockaddr *mask)
{
    if (!mask)
        return -1;
    const unsigned char *p;
    size_t n;
    if (mask->sa_family == AF_INET) {
        p = (const unsigned char *)&((const struct sockaddr_in *)mask)->sin_addr;
        n = 4;
    } else if (mask->sa_family == AF_INET6) {
        p = ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;
        n = 16;
    } else {
        return -1;
    }
    int bits = 0;
    for (size_t i = 0; i < n; i++)
        bits += __builtin_popcount(p[i]);
    return bits;
}

static struct cf_net_if *iface(struct cf_fabric *f, const char *name)
{
    for (size_t i = 0; i < f->n_ifs; i++)
        if (!strcmp(f->ifs[i].name, name))
            return &f->ifs[i];
    f->ifs = cf_xrealloc(f->ifs, (f->n_ifs + 1) * sizeof *f->ifs);
    struct cf_net_if *x = &f->ifs[f->n_ifs++];
    memset(x, 0, sizeof *x);
    x->name = cf_strdup(name);
    return x;
}

void cf_fabric_probe_net(struct cf_fabric *f)
{
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0)
        return;
    for (struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (!a->ifa_name)
            continue;
        struct cf_net_if *x = iface(f, a->ifa_name);
        x->up |= !!(a->ifa_flags & IFF_UP);
        x->running |= !!(a->ifa_flags & IFF_RUNNING);
        x->loopback |= !!(a->ifa_flags & IFF_LOOPBACK);
        if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
            continue;
        char text[INET6_ADDRSTRLEN] = "";
        const void *src = a->ifa_addr->sa_family == AF_INET
                              ? (const void *)&((const struct sockaddr_in *)a->ifa_addr)->sin_addr
                              : (const void *)&((const struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
        if (!inet_ntop(a->ifa_addr->sa_family, src, text, sizeof text))
            continue;
        cf_strvec_pushf(&x->addrs, "%s/%d", text, prefix_len(a->ifa_netmask));
    }
    freeifaddrs(all);
    for (size_t i = 0; i < f->n_ifs; i++) {
        struct cf_net_if *x = &f->ifs[i];
        if (strchr(x->name, '/') || !strcmp(x->name, "..") || !strcmp(x->name, "."))
            continue;
        char *speed = cf_sysfs_line("/sys/class/net/%s/speed", x->name); /* EINVAL while down */
        long mbps = speed ? strtol(speed, NULL, 10) : 0;
        x->speed_mbps = mbps > 0 && mbps < 100000000 ? (int)mbps : 0;
        free(speed);
        char *dev = cf_asprintf("/sys/class/net/%s/device", x->name);
        char *real = cf_realpath(dev);
        if (real && cf_pci_is_bdf(cf_basename(real)))
            x->pci = cf_strdup(cf_basename(real));
        free(real);
        free(dev);
    }
}
