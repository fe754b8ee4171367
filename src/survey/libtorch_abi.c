/* The sizes and the NCCL version a libtorch's ProcessGroupNCCL was compiled
 * with, from its x86-64 machine code (see cclforge/libtorch_abi.h). Every read
 * goes through section bounds; an unexpected shape leaves a fact unknown. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cclforge/commlib.h"
#include "cclforge/elf.h"
#include "cclforge/fs.h"
#include "cclforge/libtorch_abi.h"
#include "cclforge/strbuf.h"
#include "cclforge/survey.h"

#define NCCL_CONFIG_MAGIC 0xcafebeefu
/* ncclConfig_t exists from NCCL 2.14; anything outside is not a version code. */
#define NCCL_CODE_MIN 21400u
#define NCCL_CODE_MAX 999999u
/* How far into a deleting destructor its final sized delete may lie. */
#define D0_SCAN_MAX 8192u

static const char OPTIONS_VTABLE[] = "_ZTVN4c10d16ProcessGroupNCCL7OptionsE";
static const char PG_VTABLE[] = "_ZTVN4c10d16ProcessGroupNCCLE";
static const char *const OPTIONS_CTORS[] = { "_ZN4c10d16ProcessGroupNCCL7OptionsC2Eb",
                                             "_ZN4c10d16ProcessGroupNCCL7OptionsC1Eb" };
/* operator delete(void*, unsigned long): what a deleting destructor calls */
static const char SIZED_DELETE[] = "_ZdlPvm";

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* A section's bytes, or -1: an unreadable section is a fact left unknown. */
static int section_view(struct cf_elf *elf, const struct cf_elf_section *s, const uint8_t **data, size_t *len)
{
    cf_error err = CF_ERROR_INIT;
    int rc = cf_elf_section_bytes(elf, s, data, len, &err);
    cf_error_clear(&err);
    return rc;
}

/* The mapped bytes at virtual address addr: *avail of them, or NULL. */
static const uint8_t *bytes_at(struct cf_elf *elf, uint64_t addr, size_t *avail)
{
    for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        if (!(s->flags & SHF_ALLOC) || s->type == SHT_NOBITS || addr < s->addr || addr - s->addr >= s->size)
            continue;
        const uint8_t *data;
        size_t len;
        if (section_view(elf, s, &data, &len) != 0 || addr - s->addr >= len)
            return NULL;
        *avail = len - (size_t)(addr - s->addr);
        return data + (addr - s->addr);
    }
    return NULL;
}

static const struct cf_elf_symbol *find_symbol(struct cf_elf *elf, const char *name, int defined)
{
    const struct cf_elf_symbol *syms;
    size_t n;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_elf_dynsyms(elf, &syms, &n, &err);
    cf_error_clear(&err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((!defined || syms[i].defined) && !strcmp(syms[i].name, name))
            return &syms[i];
    return NULL;
}

/* The dynamic relocation that writes the 8 bytes at addr (RELA sections):
 * *sym is the .dynsym index (0 none), *addend its addend. 0 when none does. */
static int reloc_at(struct cf_elf *elf, uint64_t addr, uint32_t *type, uint32_t *sym, int64_t *addend)
{
    for (size_t i = 0; i < cf_elf_section_count(elf); i++) {
        const struct cf_elf_section *s = cf_elf_section_at(elf, i);
        if (s->type != SHT_RELA)
            continue;
        const uint8_t *data;
        size_t len;
        if (section_view(elf, s, &data, &len) != 0)
            continue;
        for (size_t off = 0; off + sizeof(Elf64_Rela) <= len; off += sizeof(Elf64_Rela)) {
            if (le64(data + off) != addr)
                continue;
            uint64_t info = le64(data + off + 8);
            *type = (uint32_t)ELF64_R_TYPE(info);
            *sym = (uint32_t)ELF64_R_SYM(info);
            *addend = (int64_t)le64(data + off + 16);
            return 1;
        }
    }
    return 0;
}

static const struct cf_elf_symbol *dynsym_index(struct cf_elf *elf, uint32_t index)
{
    const struct cf_elf_symbol *syms;
    size_t n;
    cf_error err = CF_ERROR_INIT;
    int rc = cf_elf_dynsyms(elf, &syms, &n, &err);
    cf_error_clear(&err);
    /* cf_elf_dynsyms leaves out the null entry: index k is syms[k - 1] */
    return rc == 0 && index >= 1 && index <= n ? &syms[index - 1] : NULL;
}

/* The function pointer stored at addr once relocated (0 unknown): a RELATIVE
 * relocation's addend, a symbol's address plus addend, or the bytes in place
 * (DT_RELR keeps the address there). */
static uint64_t pointer_at(struct cf_elf *elf, uint64_t addr)
{
    uint32_t type, sym;
    int64_t addend;
    if (reloc_at(elf, addr, &type, &sym, &addend)) {
        if (type == R_X86_64_RELATIVE)
            return (uint64_t)addend;
        const struct cf_elf_symbol *s = type == R_X86_64_64 ? dynsym_index(elf, sym) : NULL;
        return s && s->defined ? s->value + (uint64_t)addend : 0;
    }
    size_t avail;
    const uint8_t *p = bytes_at(elf, addr, &avail);
    return p && avail >= 8 ? le64(p) : 0;
}

/* Is `target` sized operator delete: the function itself, or a PLT stub
 * (endbr64, bnd, jmp *GOT(%rip)) whose GOT slot is relocated against it. */
static int is_sized_delete(struct cf_elf *elf, uint64_t target, uint64_t *known)
{
    if (*known && target == *known)
        return 1;
    const struct cf_elf_symbol *def = find_symbol(elf, SIZED_DELETE, 1);
    if (def && def->value == target)
        return 1;
    size_t avail;
    const uint8_t *p = bytes_at(elf, target, &avail);
    if (!p || avail < 16)
        return 0;
    size_t k = 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) /* endbr64 */
        k = 4;
    if (p[k] == 0xf2) /* bnd */
        k++;
    if (p[k] != 0xff || p[k + 1] != 0x25)
        return 0;
    uint64_t got = target + k + 6 + (uint64_t)(int64_t)(int32_t)le32(p + k + 2);
    uint32_t type, sym;
    int64_t addend;
    if (!reloc_at(elf, got, &type, &sym, &addend))
        return 0;
    const struct cf_elf_symbol *s = dynsym_index(elf, sym);
    if (!s || strcmp(s->name, SIZED_DELETE) != 0)
        return 0;
    *known = target; /* one relocation scan per stub, not per call site */
    return 1;
}

/* A transfer of control at code[i] (address base + i): jmp/call rel32, or
 * jmp/call *disp(%rip). *target is the callee or, for the indirect forms, the
 * GOT slot's callee; *tail is 1 for a jump. Returns its length, 0 if none. */
static size_t transfer_at(struct cf_elf *elf, const uint8_t *code, size_t len, size_t i, uint64_t base,
                          uint64_t *target, int *tail)
{
    if (i + 5 <= len && (code[i] == 0xe9 || code[i] == 0xe8)) {
        *target = base + i + 5 + (uint64_t)(int64_t)(int32_t)le32(code + i + 1);
        *tail = code[i] == 0xe9;
        return 5;
    }
    if (i + 6 <= len && code[i] == 0xff && (code[i + 1] == 0x25 || code[i + 1] == 0x15)) {
        /* -fno-plt: the GOT slot itself; is_sized_delete reads it as a stub would */
        uint64_t got = base + i + 6 + (uint64_t)(int64_t)(int32_t)le32(code + i + 2);
        uint32_t type, sym;
        int64_t addend;
        const struct cf_elf_symbol *s =
            reloc_at(elf, got, &type, &sym, &addend) ? dynsym_index(elf, sym) : NULL;
        const struct cf_elf_symbol *def = find_symbol(elf, SIZED_DELETE, 1);
        *target = s && !strcmp(s->name, SIZED_DELETE) ? (def ? def->value : UINT64_MAX) : 0;
        *tail = code[i + 1] == 0x25;
        return 6;
    }
    return 0;
}

/* The constant loaded into %esi/%rsi by an instruction that ends at code[end]:
 * `mov $imm32,%esi` (be imm32) or `mov $imm32,%rsi` (48 c7 c6 imm32). */
static long size_operand_before(const uint8_t *code, size_t end)
{
    for (size_t back = 5; back <= 12 && back <= end; back++) {
        size_t at = end - back;
        if (code[at] == 0xbe)
            return (long)le32(code + at + 1);
        if (back >= 7 && code[at] == 0x48 && code[at + 1] == 0xc7 && code[at + 2] == 0xc6)
            return (long)le32(code + at + 3);
    }
    return -1;
}

/* A function epilogue at code[i]: leave, pops, add $n,%rsp, then ret. */
static int returns_after(const uint8_t *code, size_t len, size_t i)
{
    for (size_t k = 0; k < 4 && i < len; k++) {
        if (code[i] == 0xc3)
            return 1;
        if (code[i] == 0xc9 || (code[i] >= 0x5b && code[i] <= 0x5f))
            i += 1;
        else if (i + 1 < len && code[i] == 0x41 && code[i + 1] >= 0x5c && code[i + 1] <= 0x5f)
            i += 2;
        else if (i + 3 < len && code[i] == 0x48 && code[i + 1] == 0x83 && code[i + 2] == 0xc4)
            i += 4;
        else
            return 0;
    }
    return i < len && code[i] == 0xc3;
}

/* sizeof(class) from its deleting destructor (vtable slot 1, after the
 * complete-object destructor: the destructor is intrusive_ptr_target's first
 * virtual function): the size operand of its final tail call to sized delete. */
static long class_size(struct cf_elf *elf, const char *vtable, const char *what, uint64_t *known_delete, char **from)
{
    const struct cf_elf_header *h = cf_elf_get_header(elf);
    if (h->machine != EM_X86_64 || h->elf_class != 64) {
        *from = cf_asprintf("unknown: sizes are read from x86-64 code, this library is %s",
                            cf_elf_machine_name(h->machine));
        return -1;
    }
    const struct cf_elf_symbol *vt = find_symbol(elf, vtable, 1);
    if (!vt) {
        *from = cf_asprintf("unknown: the library exports no %s (vtable of %s)", vtable, what);
        return -1;
    }
    /* {offset-to-top, typeinfo, D1, D0, ...} */
    uint64_t d0 = pointer_at(elf, vt->value + 24);
    size_t avail;
    const uint8_t *code = d0 ? bytes_at(elf, d0, &avail) : NULL;
    if (!code) {
        *from = cf_asprintf("unknown: slot 1 of %s's vtable does not point into the library", what);
        return -1;
    }
    size_t len = avail < D0_SCAN_MAX ? avail : D0_SCAN_MAX;
    for (size_t i = 0; i < len; i++) {
        uint64_t target;
        int tail;
        size_t n = transfer_at(elf, code, len, i, d0, &target, &tail);
        /* optimised code tail-calls the final delete; -O0 calls it and returns */
        if (!n || !target || !(tail || returns_after(code, len, i + n)))
            continue;
        if (!(target == UINT64_MAX || is_sized_delete(elf, target, known_delete)))
            continue;
        long size = size_operand_before(code, i);
        if (size <= 0)
            continue;
        *from = cf_asprintf("the deleting destructor of %s (at %#llx) frees with operator delete(p, %#lx)", what,
                            (unsigned long long)d0, (unsigned long)size);
        return size;
    }
    *from = cf_asprintf("unknown: the deleting destructor of %s (at %#llx) makes no recognisable sized delete", what,
                        (unsigned long long)d0);
    return -1;
}

static int plausible_code(uint32_t v)
{
    return v >= NCCL_CODE_MIN && v <= NCCL_CODE_MAX;
}

/* The version after a magic at m[0..avail): adjacent (movabs, a constant in
 * .rodata) or the immediate of the next store within 16 bytes. */
static unsigned version_after_magic(const uint8_t *m, size_t avail)
{
    if (avail >= 8 && plausible_code(le32(m + 4)))
        return le32(m + 4);
    for (size_t k = 5; k + 4 <= avail && k <= 16; k++)
        if (plausible_code(le32(m + k)))
            return le32(m + k);
    return 0;
}

/* NCCL_CONFIG_INITIALIZER's version in the Options constructor: as immediates,
 * or in a constant the code loads with a %rip-relative operand. */
static unsigned config_version(struct cf_elf *elf, char **from)
{
    const struct cf_elf_symbol *ctor = NULL;
    for (size_t i = 0; i < 2 && !ctor; i++)
        ctor = find_symbol(elf, OPTIONS_CTORS[i], 1);
    if (!ctor || cf_elf_get_header(elf)->machine != EM_X86_64) {
        *from = cf_strdup(ctor ? "not read: the constructor is not x86-64 code"
                               : "not read: the library exports no ProcessGroupNCCL::Options::Options(bool)");
        return 0;
    }
    size_t avail;
    const uint8_t *code = bytes_at(elf, ctor->value, &avail);
    size_t len = code ? (ctor->size && ctor->size < avail ? (size_t)ctor->size : (avail < 4096 ? avail : 4096)) : 0;
    for (size_t i = 0; i + 4 <= len; i++) {
        unsigned v = 0;
        if (le32(code + i) == NCCL_CONFIG_MAGIC) {
            v = version_after_magic(code + i, len - i);
        } else {
            /* a disp32 that ends its instruction: the constant it addresses */
            uint64_t at = ctor->value + i + 4 + (uint64_t)(int64_t)(int32_t)le32(code + i);
            size_t cavail;
            const uint8_t *c = bytes_at(elf, at, &cavail);
            for (size_t k = 0; c && k + 8 <= cavail && k <= 8 && !v; k += 4)
                if (le32(c + k) == NCCL_CONFIG_MAGIC)
                    v = version_after_magic(c + k, cavail - k);
        }
        if (v) {
            *from = cf_strdup("the ncclConfig_t initializer (magic 0xcafebeef, version) in "
                              "ProcessGroupNCCL::Options::Options(bool)");
            return v;
        }
    }
    *from = cf_strdup("not found: ProcessGroupNCCL::Options::Options(bool) holds no ncclConfig_t initializer");
    return 0;
}

void cf_libtorch_abi_of_elf(struct cf_elf *elf, struct cf_libtorch_abi *abi)
{
    memset(abi, 0, sizeof *abi);
    uint64_t known_delete = 0;
    abi->options_size =
        class_size(elf, OPTIONS_VTABLE, "ProcessGroupNCCL::Options", &known_delete, &abi->options_from);
    abi->process_group_size = class_size(elf, PG_VTABLE, "ProcessGroupNCCL", &known_delete, &abi->process_group_from);
    abi->nccl_code = config_version(elf, &abi->nccl_from);
    if (abi->nccl_code)
        abi->nccl_version = cf_nccl_code_version(abi->nccl_code);
}

int cf_libtorch_abi_read(const char *gpu_lib, const char *torch_dir, struct cf_libtorch_abi *abi, cf_error *err)
{
    memset(abi, 0, sizeof *abi);
    abi->options_size = abi->process_group_size = -1;
    struct cf_elf *elf;
    if (cf_elf_open(gpu_lib, &elf, err) != 0)
        return -1;
    cf_libtorch_abi_of_elf(elf, abi);
    if (!abi->nccl_code) {
        /* a static NCCL/RCCL names itself */
        struct cf_commlib_identity id;
        cf_error ierr = CF_ERROR_INIT;
        if (cf_commlib_identify(elf, &id, &ierr) == 0 && id.found && id.banner.version_code) {
            free(abi->nccl_from);
            abi->nccl_code = id.banner.version_code;
            abi->nccl_version = cf_nccl_code_version(abi->nccl_code);
            abi->nccl_from = cf_asprintf("the NCCL banner embedded in %s (\"%s\")", cf_basename(gpu_lib),
                                         id.banner.text);
        }
        cf_error_clear(&ierr);
    }
    cf_elf_close(elf);
    char *pin = !abi->nccl_code && torch_dir ? cf_torch_nccl_pin(torch_dir) : NULL;
    if (pin) {
        free(abi->nccl_from);
        abi->nccl_version = pin;
        abi->nccl_code = (unsigned)cf_comm_version_code(pin);
        abi->nccl_from = cf_asprintf("torch's dist-info pin (Requires-Dist: nvidia-nccl-*==%s): what it runs with, "
                                     "assumed to be what it was built with",
                                     pin);
    }
    return 0;
}

void cf_libtorch_abi_release(struct cf_libtorch_abi *abi)
{
    free(abi->options_from);
    free(abi->process_group_from);
    free(abi->nccl_version);
    free(abi->nccl_from);
    memset(abi, 0, sizeof *abi);
}
