// The ABI guard cclforge links into every bridge it builds, whoever wrote the
// bridge's own source: compiled with exactly the flags of that source (the
// plan's defines and include roots), so it sees the same nccl.h and torch
// headers. It refuses to compile when ProcessGroupNCCL or its Options differ
// in size from the libtorch the bridge links (the sizes cclforge read from
// libtorch's machine code, -DCCLFORGE_LIBTORCH_OPTIONS_SIZE / _PG_SIZE), and
// exports what it saw as the C symbol cclforge_abi_info, which `cclforge wheel
// verify` reads from any cclforge-built bridge (docs/bridge.md, "ABI facts").
#include <cstdint>

#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#ifndef CCLFORGE_TORCH_GPU_LIB
#define CCLFORGE_TORCH_GPU_LIB ""
#endif
#ifndef CCLFORGE_COMM_LIB
#define CCLFORGE_COMM_LIB ""
#endif
#ifndef CCLFORGE_LIBTORCH_NCCL
#define CCLFORGE_LIBTORCH_NCCL ""
#endif
#ifndef CCLFORGE_TOOLKIT_VERSION
#define CCLFORGE_TOOLKIT_VERSION ""
#endif
#ifndef CCLFORGE_TOOLKIT_LIBS
#define CCLFORGE_TOOLKIT_LIBS ""
#endif
#define CCLFORGE_GUARD_STR2(x) #x
#define CCLFORGE_GUARD_STR(x) CCLFORGE_GUARD_STR2(x)
#ifndef CCLFORGE_BRIDGE_VENDOR
#define CCLFORGE_BRIDGE_VENDOR unknown
#endif

namespace {
// The sizes are template arguments so that the compiler's message shows both
// ("cclforge_abi_options_size<288, 280>"); cclforge bridge build reads them
// back from the log and names the header that differs.
template <long Headers, long Libtorch> struct cclforge_abi_options_size {
    static_assert(Headers == Libtorch, "cclforge ABI guard: sizeof(c10d::ProcessGroupNCCL::Options) in these headers "
                                       "(first argument) differs from the libtorch this bridge links (second): the "
                                       "nccl.h included is not the one libtorch was compiled with");
    static constexpr bool ok = true;
};
template <long Headers, long Libtorch> struct cclforge_abi_process_group_size {
    static_assert(Headers == Libtorch, "cclforge ABI guard: sizeof(c10d::ProcessGroupNCCL) in these headers (first "
                                       "argument) differs from the libtorch this bridge links (second): these torch "
                                       "headers are not the ones that libtorch was built from");
    static constexpr bool ok = true;
};
#if defined(CCLFORGE_LIBTORCH_OPTIONS_SIZE) && defined(CCLFORGE_LIBTORCH_PG_SIZE)
static_assert(cclforge_abi_options_size<static_cast<long>(sizeof(c10d::ProcessGroupNCCL::Options)),
                                        CCLFORGE_LIBTORCH_OPTIONS_SIZE>::ok,
              "see above");
static_assert(cclforge_abi_process_group_size<static_cast<long>(sizeof(c10d::ProcessGroupNCCL)),
                                              CCLFORGE_LIBTORCH_PG_SIZE>::ok,
              "see above");
constexpr int64_t kLibtorchOptionsSize = CCLFORGE_LIBTORCH_OPTIONS_SIZE;
constexpr int64_t kLibtorchPgSize = CCLFORGE_LIBTORCH_PG_SIZE;
#else
constexpr int64_t kLibtorchOptionsSize = -1; // cclforge could not read them from libtorch
constexpr int64_t kLibtorchPgSize = -1;
#endif
} // namespace

// Plain data, no pointers (nothing to relocate): readable from the file
// without loading it, and through ctypes alike. Field order and sizes are the format; magic names it.
extern "C" {
struct cclforge_abi_facts {
    char magic[16];                      // "cclforge-abi/1"
    int64_t options_size_headers;        // sizeof(ProcessGroupNCCL::Options) here
    int64_t options_size_libtorch;       // libtorch's, -1 unknown
    int64_t process_group_size_headers;  // sizeof(ProcessGroupNCCL) here
    int64_t process_group_size_libtorch; // libtorch's, -1 unknown
    int32_t nccl_header_code;            // NCCL_VERSION_CODE of the nccl.h / rccl.h included
    int32_t reserved;
    char nccl_libtorch[16];              // the NCCL libtorch's ProcessGroupNCCL was compiled with, "" unknown
    char torch_gpu_lib[64];              // "libtorch_cuda.so", "libtorch_hip.so"
    char comm_lib[64];                   // the comm library's file name linked: "libnccl.so.2", "librccl.so.1"
    char vendor[16];                     // "nvidia", "rocm", "dtk"
    char toolkit_version[32];            // the toolkit's version seen at build, "" unknown
    char toolkit_libs[256];              // sonames the host's toolkit provides, space-separated
};
// cclforge reads these 504 bytes from the file (src/survey/bridge_facts.c)
static_assert(sizeof(cclforge_abi_facts) == 504, "cclforge_abi_facts is a file format: 504 bytes");
__attribute__((visibility("default"))) extern const cclforge_abi_facts cclforge_abi_info;
__attribute__((used)) const cclforge_abi_facts cclforge_abi_info = {
    "cclforge-abi/1",
    static_cast<int64_t>(sizeof(c10d::ProcessGroupNCCL::Options)),
    kLibtorchOptionsSize,
    static_cast<int64_t>(sizeof(c10d::ProcessGroupNCCL)),
    kLibtorchPgSize,
    NCCL_VERSION_CODE,
    0,
    CCLFORGE_LIBTORCH_NCCL,
    CCLFORGE_TORCH_GPU_LIB,
    CCLFORGE_COMM_LIB,
    CCLFORGE_GUARD_STR(CCLFORGE_BRIDGE_VENDOR),
    CCLFORGE_TOOLKIT_VERSION,
    CCLFORGE_TOOLKIT_LIBS,
};
}
