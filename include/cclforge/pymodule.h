/* What makes a file a Python extension module, and a bridge module, as seen
 * without importing it: its file name (the name import looks for) and the
 * strings its read-only data holds. One home for the factory's name. */
#ifndef CCLFORGE_PYMODULE_H
#define CCLFORGE_PYMODULE_H

#include <stddef.h>

#include "cclforge/elf.h"
#include "cclforge/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The function a ProcessGroupNCCL bridge module defines (a torch.distributed backend creator). */
#define CF_BRIDGE_FACTORY "make_nccl_backend"

/* When the file name `base` (no directory) is one CPython would import as an
 * extension module, stores its leaf (a Python identifier) in leaf[cap] and
 * returns CF_PYMODULE_TAGGED for <leaf>.abi3.so and <leaf>.cpython-<tag>[-<platform>].so
 * (only a module is named so) or CF_PYMODULE_PLAIN for <leaf>.so (a module or
 * a library: "libtorch.so"); 0 for any other name ("libx.so.1", "x.so.2",
 * a leaf that is no identifier). */
enum { CF_PYMODULE_PLAIN = 1, CF_PYMODULE_TAGGED = 2 };
int cf_pymodule_leaf(const char *base, char *leaf, size_t cap);

/* 1 when the file's allocated, non-executable data (.rodata and kin; the
 * whole file when it has no section headers) holds `s` as a NUL-terminated
 * string: pybind11 keeps a function's Python name there, so a module defining
 * make_nccl_backend carries it. 0 when not, -1 with err when it cannot be read. */
int cf_elf_holds_string(const struct cf_elf *elf, const char *s, cf_error *err);

#ifdef __cplusplus
}
#endif
#endif
