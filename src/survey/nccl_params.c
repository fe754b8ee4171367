/* What NCCL's variables are: a small table, documented in docs/doctor.md. A real
 * name missing here is still real (the loaded library's own names decide that);
 * the table only says which ones describe the machine, which tune, and which are
 * debugging aids or workarounds that should not stay set in production. */
#include "cclforge/ncclconf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SYS CF_NCCL_PARAM_SYSTEM
#define TUN CF_NCCL_PARAM_TUNING
#define DBG CF_NCCL_PARAM_DEBUG
#define FOR CF_NCCL_PARAM_FOREIGN

/* Sorted by name (bsearch). */
static const struct cf_nccl_param_info params[] = {
    { "NCCL_ALGO", DBG, "", "forces collective algorithms: a workaround or an experiment" },
    { "NCCL_ASYNC_ERROR_HANDLING", FOR, "", "PyTorch's old name (now TORCH_NCCL_ASYNC_ERROR_HANDLING); NCCL ignores it" },
    { "NCCL_BLOCKING_WAIT", FOR, "", "PyTorch's old name (now TORCH_NCCL_BLOCKING_WAIT); NCCL ignores it" },
    { "NCCL_BUFFSIZE", TUN, "", "buffer size per channel and peer" },
    { "NCCL_CGA_CLUSTER_SIZE", TUN, "", "CUDA thread block cluster size" },
    { "NCCL_CHECK_POINTERS", DBG, "0", "checks every pointer argument: slow" },
    { "NCCL_COLLNET_ENABLE", SYS, "", "uses the CollNet (SHARP) plugin" },
    { "NCCL_COMM_ID", SYS, "", "the bootstrap address when ranks are not started by a launcher" },
    { "NCCL_CONF_FILE", SYS, "", "the configuration file read instead of ~/.nccl.conf" },
    { "NCCL_CROSS_NIC", TUN, "", "lets rings and trees use different NICs on different nodes" },
    { "NCCL_CUMEM_ENABLE", DBG, "1", "turns off cuMem allocations when 0: a workaround" },
    { "NCCL_DEBUG", DBG, "VERSION,WARN,NONE", "INFO and TRACE log at every init and slow jobs down" },
    { "NCCL_DEBUG_FILE", DBG, "", "where NCCL's debug log goes" },
    { "NCCL_DEBUG_SUBSYS", DBG, "", "which subsystems log at NCCL_DEBUG=INFO" },
    { "NCCL_DEBUG_TIMESTAMP_FORMAT", DBG, "", "debug log time stamps" },
    { "NCCL_DEBUG_TIMESTAMP_LEVELS", DBG, "", "debug log time stamps" },
    { "NCCL_DESYNC_DEBUG", FOR, "", "PyTorch's old name (now TORCH_NCCL_DESYNC_DEBUG); NCCL ignores it" },
    { "NCCL_DIR", FOR, "", "a build-time location other tools use; NCCL ignores it" },
    { "NCCL_DMABUF_ENABLE", SYS, "", "GPUDirect RDMA through dma-buf" },
    { "NCCL_ENV_PLUGIN", SYS, "", "a plugin that supplies every NCCL variable's value (NCCL 2.28+)" },
    { "NCCL_GRAPH_DUMP_FILE", DBG, "", "dumps the search graph" },
    { "NCCL_GRAPH_FILE", DBG, "", "forces a saved search graph" },
    { "NCCL_HOME", FOR, "", "where an NCCL is installed (build tools, cclforge); NCCL ignores it" },
    { "NCCL_HOSTID", SYS, "", "overrides the host identity NCCL groups ranks by" },
    { "NCCL_IB_ADAPTIVE_ROUTING", TUN, "", "InfiniBand adaptive routing" },
    { "NCCL_IB_ADDR_FAMILY", SYS, "", "the RoCE GID address family NCCL looks for" },
    { "NCCL_IB_ADDR_RANGE", SYS, "", "the RoCE GID subnet NCCL looks for" },
    { "NCCL_IB_DISABLE", DBG, "0", "turns InfiniBand/RoCE off: inter-node traffic goes over sockets" },
    { "NCCL_IB_GID_INDEX", SYS, "", "the RoCE GID index (default: NCCL picks one)" },
    { "NCCL_IB_HCA", SYS, "", "which HCAs and ports NCCL uses" },
    { "NCCL_IB_PKEY", SYS, "", "the InfiniBand partition key index" },
    { "NCCL_IB_QPS_PER_CONNECTION", TUN, "", "queue pairs per connection" },
    { "NCCL_IB_RETRY_CNT", SYS, "", "InfiniBand retry count" },
    { "NCCL_IB_ROCE_VERSION_NUM", SYS, "", "the RoCE version of the GID NCCL picks (default 2)" },
    { "NCCL_IB_SL", SYS, "", "InfiniBand service level" },
    { "NCCL_IB_SPLIT_DATA_ON_QPS", TUN, "", "spreads messages over queue pairs" },
    { "NCCL_IB_TC", SYS, "", "traffic class (RoCE QoS)" },
    { "NCCL_IB_TIMEOUT", SYS, "", "InfiniBand verbs timeout" },
    { "NCCL_IGNORE_CPU_AFFINITY", DBG, "0", "ignores the job's CPU binding: a workaround" },
    { "NCCL_IGNORE_DISABLED_P2P", DBG, "0", "hides the warning about disabled P2P" },
    { "NCCL_INCLUDE_DIR", FOR, "", "a build-time location (PyTorch's build); NCCL ignores it" },
    { "NCCL_LAUNCH_MODE", DBG, "PARALLEL", "GROUP serialises kernel launches: a workaround" },
    { "NCCL_LIBRARY", FOR, "", "a build-time location; NCCL ignores it" },
    { "NCCL_LIB_DIR", FOR, "", "a build-time location (PyTorch's build); NCCL ignores it" },
    { "NCCL_LL128_BUFFSIZE", TUN, "", "LL128 protocol buffers" },
    { "NCCL_LL_BUFFSIZE", TUN, "", "LL protocol buffers" },
    { "NCCL_MAX_CTAS", TUN, "", "most CTAs per collective" },
    { "NCCL_MAX_NCHANNELS", TUN, "", "most channels" },
    { "NCCL_MIN_CTAS", TUN, "", "fewest CTAs per collective" },
    { "NCCL_MIN_NCHANNELS", TUN, "", "fewest channels" },
    { "NCCL_MNNVL_ENABLE", SYS, "", "multi-node NVLink" },
    { "NCCL_NCHANNELS_PER_NET_PEER", TUN, "", "channels per network peer" },
    { "NCCL_NET", SYS, "", "which network NCCL uses: IB, Socket, or a plugin's name" },
    { "NCCL_NET_DISABLE_INTRA", DBG, "0", "forbids the network inside a node" },
    { "NCCL_NET_GDR_LEVEL", SYS, "", "how far a NIC may be from a GPU for GPUDirect RDMA" },
    { "NCCL_NET_GDR_READ", SYS, "", "GPUDirect RDMA for sends" },
    { "NCCL_NET_PLUGIN", SYS, "", "the network plugin library (libnccl-net-NAME.so)" },
    { "NCCL_NSOCKS_PERTHREAD", TUN, "", "sockets per helper thread" },
    { "NCCL_NTHREADS", TUN, "", "threads per CTA" },
    { "NCCL_NVB_DISABLE", DBG, "0", "turns off NVLink through an intermediate GPU" },
    { "NCCL_NVLS_ENABLE", TUN, "", "NVLink SHARP" },
    { "NCCL_OOB_NET_ENABLE", SYS, "", "bootstrap over the network plugin" },
    { "NCCL_OOB_NET_IFNAME", SYS, "", "the interface of the bootstrap over the network plugin" },
    { "NCCL_P2P_DIRECT_DISABLE", DBG, "0", "turns off direct P2P access within a process" },
    { "NCCL_P2P_DISABLE", DBG, "0", "turns off GPU peer-to-peer: traffic goes through host memory" },
    { "NCCL_P2P_LEVEL", TUN, "", "how far apart two GPUs may be for P2P" },
    { "NCCL_PROFILER_PLUGIN", SYS, "", "the profiler plugin library" },
    { "NCCL_PROTO", DBG, "", "forces protocols (LL, LL128, Simple): a workaround or an experiment" },
    { "NCCL_PROXY_DUMP_SIGNAL", DBG, "", "dumps proxy state on a signal" },
    { "NCCL_PXN_DISABLE", DBG, "0", "turns off PXN (sends through a peer's NIC)" },
    { "NCCL_RAS_ADDR", SYS, "", "where the RAS service listens" },
    { "NCCL_RAS_ENABLE", SYS, "", "NCCL's reliability service" },
    { "NCCL_ROOT", FOR, "", "a build-time location; NCCL ignores it" },
    { "NCCL_ROOT_DIR", FOR, "", "a build-time location (CMake's FindNCCL); NCCL ignores it" },
    { "NCCL_SET_THREAD_NAME", DBG, "0", "names NCCL's threads for debuggers" },
    { "NCCL_SHM_DISABLE", DBG, "0", "turns off shared memory between local ranks" },
    { "NCCL_SOCKET_FAMILY", SYS, "", "IPv4 or IPv6 for sockets (AF_INET, AF_INET6)" },
    { "NCCL_SOCKET_IFNAME", SYS, "", "which interfaces NCCL's sockets use" },
    { "NCCL_SOCKET_NTHREADS", TUN, "", "helper threads per socket connection" },
    { "NCCL_TESTS_ALLTOALLV_MATRIX_FILE", FOR, "", "read by nccl-tests (alltoallv's matrix file); NCCL ignores it" },
    { "NCCL_TESTS_ALLTOALLV_MATRIX_SCALE", FOR, "", "read by nccl-tests (alltoallv's matrix scale); NCCL ignores it" },
    { "NCCL_TESTS_ALLTOALLV_PRINT_SUMMARY", FOR, "", "read by nccl-tests (alltoallv's summary); NCCL ignores it" },
    { "NCCL_TESTS_ALLTOALLV_SPREAD", FOR, "", "read by nccl-tests (alltoallv's spread); NCCL ignores it" },
    { "NCCL_TESTS_DEVICE", FOR, "", "read by nccl-tests (its first device); NCCL ignores it" },
    { "NCCL_TESTS_MIN_BW", FOR, "", "read by nccl-tests (its bandwidth floor); NCCL ignores it" },
    { "NCCL_TESTS_SPLIT", FOR, "", "read by nccl-tests (its communicator split); NCCL ignores it" },
    { "NCCL_TESTS_SPLIT_MASK", FOR, "", "read by nccl-tests (its communicator split mask); NCCL ignores it" },
    { "NCCL_TOPO_DUMP_FILE", DBG, "", "dumps the detected topology" },
    { "NCCL_TOPO_FILE", SYS, "", "an XML topology loaded before detection" },
    { "NCCL_TRACE_BUFFER_SIZE", FOR, "", "PyTorch's old name (now TORCH_NCCL_TRACE_BUFFER_SIZE); NCCL ignores it" },
    { "NCCL_TUNER_PLUGIN", SYS, "", "the tuner plugin library" },
    { "NCCL_VERSION", FOR, "", "set by NVIDIA's containers to the NCCL they ship; NCCL ignores it" },
};

static int cmp_name(const void *key, const void *elem)
{
    return strcmp(key, ((const struct cf_nccl_param_info *)elem)->name);
}

const struct cf_nccl_param_info *cf_nccl_param_info(const char *name)
{
    return bsearch(name, params, sizeof params / sizeof params[0], sizeof params[0], cmp_name);
}

const char *cf_nccl_param_class_name(enum cf_nccl_param_class cls)
{
    static const char *const names[] = { "", "system", "tuning", "debug", "foreign" };
    return (unsigned)cls < sizeof names / sizeof names[0] ? names[cls] : "";
}

int cf_nccl_param_benign(const struct cf_nccl_param_info *info, const char *value)
{
    if (!info || !value)
        return 0;
    size_t vlen = strlen(value);
    for (const char *p = info->benign; *p;) {
        size_t n = strcspn(p, ",");
        if (n == vlen && !strncasecmp(p, value, n))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

int cf_nccl_param_secret(const char *name)
{
    static const char *const words[] = { "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "APIKEY",
                                         "PRIVATE" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(name, words[i]))
            return 1;
    size_t n = strlen(name);
    return n >= 4 && !strcasecmp(name + n - 4, "_KEY");
}
