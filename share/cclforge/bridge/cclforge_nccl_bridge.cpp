// The cclforge bridge: a Python extension that hands a vendor libtorch's
// c10d::ProcessGroupNCCL (NCCL on NVIDIA, RCCL on ROCm and DTK) to Python as a
// c10d backend, for a Python torch that does not expose it itself.
//
// Built by `cclforge bridge build` with the define set its plan chose (see
// docs/bridge.md: USE_C10D_NCCL always), -DCCLFORGE_BRIDGE_NAME=<module name>
// (PyInit_<module name> follows it); cclforge links its ABI guard beside it.
//
// Types cross into Python through torch's own pybind11 (torch/include/pybind11)
// so Store and Backend objects are the ones torch.distributed registered.
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <torch/csrc/utils/pybind.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#ifndef CCLFORGE_BRIDGE_NAME
#error "define CCLFORGE_BRIDGE_NAME to the extension's module name (cclforge bridge build does)"
#endif
#ifndef USE_C10D_NCCL
#error "compile with -DUSE_C10D_NCCL: without it torch's headers hide ProcessGroupNCCL"
#endif

#define CCLFORGE_STR2(x) #x
#define CCLFORGE_STR(x) CCLFORGE_STR2(x)

#ifndef CCLFORGE_BRIDGE_VENDOR
#define CCLFORGE_BRIDGE_VENDOR unknown
#endif

namespace py = pybind11;

namespace {

// Checked before touching the vendor library so that bad arguments give a
// Python ValueError rather than a failure deep inside ProcessGroupNCCL.
void check_arguments(int rank, int size, int64_t timeout_ms)
{
    if (size <= 0)
        throw py::value_error("make_nccl_backend: size must be > 0, got " + std::to_string(size));
    if (rank < 0 || rank >= size)
        throw py::value_error("make_nccl_backend: rank must be in [0, size), got rank " +
                              std::to_string(rank) + " with size " + std::to_string(size));
    if (timeout_ms < 0)
        throw py::value_error("make_nccl_backend: timeout_ms must be >= 0 (0 keeps the default), got " +
                              std::to_string(timeout_ms));
}

// The sizes of ProcessGroupNCCL and its Options are checked against
// libtorch's by cclforge's ABI guard (cclforge_abi_guard.cpp), linked into
// every bridge cclforge builds, this one or a plugin's own; it also carries
// the facts `cclforge wheel verify` reads (the C symbol cclforge_abi_info).
// Torch objects are allocated as torch allocates them, with c10::make_intrusive.

// The device count by the name the vendor's c10 GPU library exports: a
// hipified libc10_hip has c10::hip::device_count, whatever torch headers the
// bridge is compiled from (CUDA-named ones declare only c10::cuda::).
#if defined(CCLFORGE_DEVICE_COUNT_HIP) && !defined(CCLFORGE_HIPIFIED_HEADERS)
} // namespace
namespace c10 {
namespace hip {
__attribute__((visibility("default"))) DeviceIndex device_count() noexcept;
}
} // namespace c10
namespace {
#endif

int visible_devices()
{
#if defined(CCLFORGE_DEVICE_COUNT_HIP)
    return c10::hip::device_count();
#else
    return c10::cuda::device_count();
#endif
}

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store> &store, int rank,
                                                    int size, int64_t timeout_ms, bool high_priority_stream)
{
    check_arguments(rank, size, timeout_ms);
    if (!store)
        throw py::value_error("make_nccl_backend: store is None; pass a torch.distributed Store");
    // Asked first so that a host without a GPU gets a plain Python error
    // without ProcessGroupNCCL being half-constructed.
    if (visible_devices() == 0)
        throw std::runtime_error("make_nccl_backend: no GPU is visible to this process (vendor " CCLFORGE_STR(
            CCLFORGE_BRIDGE_VENDOR) "); ProcessGroupNCCL needs at least one device per rank");
    auto options = c10::make_intrusive<c10d::ProcessGroupNCCL::Options>(high_priority_stream);
    if (timeout_ms > 0)
        options->timeout = std::chrono::milliseconds(timeout_ms);
    try {
        // Constructing it touches the device runtime; libtorch's message must
        // reach Python intact.
        c10::intrusive_ptr<c10d::Backend> pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
        return pg;
    } catch (const std::exception &e) {
        throw std::runtime_error(std::string("make_nccl_backend: ProcessGroupNCCL could not be created "
                                             "(vendor " CCLFORGE_STR(CCLFORGE_BRIDGE_VENDOR) "): ") +
                                 e.what());
    }
}

} // namespace

PYBIND11_MODULE(CCLFORGE_BRIDGE_NAME, m)
{
    // torch.distributed registers Store and Backend with pybind11; importing it
    // first lets the arguments and the result convert.
    py::module_::import("torch.distributed");
    m.doc() = "cclforge bridge: c10d::ProcessGroupNCCL from the vendor libtorch as a torch.distributed backend";
    m.attr("__cclforge_vendor__") = CCLFORGE_STR(CCLFORGE_BRIDGE_VENDOR);
    m.def("make_nccl_backend", &make_nccl_backend, py::arg("store"), py::arg("rank"), py::arg("size"),
          py::arg("timeout_ms") = 0, py::arg("high_priority_stream") = false,
          "Create a c10d ProcessGroupNCCL backend over `store` for `rank` of `size`.\n"
          "timeout_ms > 0 sets the collective timeout; high_priority_stream picks high-priority streams.");
}
