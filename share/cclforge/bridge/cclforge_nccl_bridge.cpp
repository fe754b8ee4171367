// The cclforge bridge: a Python extension that hands a vendor libtorch's
// c10d::ProcessGroupNCCL (NCCL on NVIDIA, RCCL on ROCm and DTK) to Python as a
// c10d backend, for a Python torch that does not expose it itself.
//
// Built by `cclforge bridge build` with -DUSE_C10D_NCCL,
// -DC10_CUDA_NO_CMAKE_CONFIGURE_FILE and -DCCLFORGE_BRIDGE_NAME=<module name>;
// the module init function is PyInit_<module name> whatever the name.
//
// Types cross into Python through torch's own pybind11 (torch/include/pybind11)
// so Store and Backend objects are the ones torch.distributed registered.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
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

// The size of ProcessGroupNCCL::Options depends on the nccl.h torch was built
// with (it embeds ncclConfig_t), and the constructors live in libtorch while
// make_intrusive allocates sizeof() from *our* headers. torch 2.15.0's wheel,
// built against a newer nccl.h than the NCCL wheel it pins, writes 16 bytes past
// an Options sized by that wheel's nccl.h. So torch objects are allocated with
// slack: the libtorch constructor may use more than we know of, destruction goes
// through libtorch's own vtable, and we only touch base-class fields (timeout).
constexpr size_t kLayoutSlack = 1024;
constexpr unsigned char kCanary = 0xA5;

template <class T, class... Args>
c10::intrusive_ptr<T> make_with_slack(Args &&...args)
{
    void *mem = ::operator new(sizeof(T) + kLayoutSlack);
    std::memset(mem, 0, sizeof(T) + kLayoutSlack);
    try {
        return c10::intrusive_ptr<T>::unsafe_steal_from_new(new (mem) T(std::forward<Args>(args)...));
    } catch (...) {
        ::operator delete(mem);
        throw;
    }
}

// How many bytes libtorch's Options constructor initialises: constructed over a
// canary-filled buffer, the last changed byte says. Equal to sizeof(Options)
// when the headers match the libtorch build.
size_t libtorch_options_extent()
{
    const size_t n = sizeof(c10d::ProcessGroupNCCL::Options) + kLayoutSlack;
    auto *mem = static_cast<unsigned char *>(::operator new(n));
    std::memset(mem, kCanary, n);
    auto *opts = new (mem) c10d::ProcessGroupNCCL::Options(false);
    size_t extent = sizeof(c10d::ProcessGroupNCCL::Options);
    for (size_t i = n; i-- > extent;)
        if (mem[i] != kCanary) {
            extent = (i + 8) & ~static_cast<size_t>(7);
            break;
        }
    // Destroyed through a base pointer the compiler cannot see through, so the
    // call goes to libtorch's destructor (its layout) via the vtable libtorch
    // installed, never to an inlined one built from our headers.
    c10d::Backend::Options *volatile base = opts;
    base->~Options();
    ::operator delete(mem);
    return extent;
}

py::dict abi_info()
{
    py::dict d;
    d["options_size_headers"] = sizeof(c10d::ProcessGroupNCCL::Options);
    d["options_size_libtorch"] = libtorch_options_extent();
    d["process_group_size_headers"] = sizeof(c10d::ProcessGroupNCCL);
    d["slack"] = kLayoutSlack;
    return d;
}

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store> &store, int rank,
                                                    int size, int64_t timeout_ms, bool high_priority_stream)
{
    check_arguments(rank, size, timeout_ms);
    if (!store)
        throw py::value_error("make_nccl_backend: store is None; pass a torch.distributed Store");
    // Asked first so that a host without a GPU gets a plain Python error
    // without ProcessGroupNCCL being half-constructed.
    if (c10::cuda::device_count() == 0)
        throw std::runtime_error("make_nccl_backend: no GPU is visible to this process (vendor " CCLFORGE_STR(
            CCLFORGE_BRIDGE_VENDOR) "); ProcessGroupNCCL needs at least one device per rank");
    auto options = make_with_slack<c10d::ProcessGroupNCCL::Options>(high_priority_stream);
    if (timeout_ms > 0)
        options->timeout = std::chrono::milliseconds(timeout_ms);
    try {
        // Constructing it touches the device runtime; libtorch's message must
        // reach Python intact.
        c10::intrusive_ptr<c10d::Backend> pg = make_with_slack<c10d::ProcessGroupNCCL>(store, rank, size, options);
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
    m.def("abi_info", &abi_info,
          "Sizes of ProcessGroupNCCL::Options as this module's headers and the loaded libtorch see them.");
}
