/* Display names for ELF header fields. */
#include <elf.h>
#include <stddef.h>

#include "cclforge/elf.h"

#ifndef EM_LOONGARCH /* glibc 2.36's <elf.h>; the sdist builds on older hosts (Debian 11: 2.31) */
#define EM_LOONGARCH 258
#endif

static const struct {
    unsigned machine;
    const char *name;
} machine_names[] = {
    { EM_386, "Intel 80386" },
    { EM_X86_64, "x86-64" },
    { EM_AARCH64, "AArch64" },
    { EM_ARM, "ARM" },
    { EM_PPC, "PowerPC" },
    { EM_PPC64, "PowerPC64" },
    { EM_S390, "IBM S/390" },
    { EM_RISCV, "RISC-V" },
    { EM_MIPS, "MIPS" },
    { EM_SPARC, "SPARC" },
    { EM_SPARCV9, "SPARC v9" },
    { EM_LOONGARCH, "LoongArch" },
    { EM_IA_64, "IA-64" },
    { EM_CUDA, "NVIDIA CUDA" },
    { EM_AMDGPU, "AMD GPU" },
    { EM_BPF, "BPF" },
};

const char *cf_elf_machine_name(unsigned machine)
{
    for (size_t i = 0; i < sizeof machine_names / sizeof machine_names[0]; i++)
        if (machine_names[i].machine == machine)
            return machine_names[i].name;
    return "unknown machine";
}

const char *cf_elf_kind_name(const struct cf_elf_header *header)
{
    static const char *const kinds[2][2] = { { "ELF32 LSB", "ELF32 MSB" }, { "ELF64 LSB", "ELF64 MSB" } };
    return kinds[header->elf_class == 64][header->big_endian != 0];
}
