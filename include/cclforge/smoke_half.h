/* IEEE fp16 and bfloat16 <-> float in plain C, for host-side fills, checks and the
 * MPI backend's reduction (MPI has no 16-bit float types). Header-only: inlined in
 * the per-element loops. Round to nearest even, NaN stays NaN. */
#ifndef CCLFORGE_SMOKE_HALF_H
#define CCLFORGE_SMOKE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t cf_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float cf_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float cf_bf16_to_f32(uint16_t h)
{
    return cf_f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t cf_f32_to_bf16(float f)
{
    uint32_t u = cf_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet and a NaN */
        return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float cf_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) /* inf or NaN */
        return cf_f32_from_bits(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return cf_f32_from_bits(sign);
        /* subnormal: normalise */
        exp = 127 - 15 + 1;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            exp--;
        }
        mant &= 0x3ffu;
        return cf_f32_from_bits(sign | (exp << 23) | (mant << 13));
    }
    return cf_f32_from_bits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

static inline uint16_t cf_f32_to_f16(float f)
{
    uint32_t u = cf_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u);
    if (abs >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (abs < 0x33000000u) /* below half the smallest subnormal */
            return sign;
        uint32_t exp = abs >> 23;
        uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - exp; /* 14..24 */
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1u);
        uint32_t midpoint = 1u << (shift - 1);
        if (rem > midpoint || (rem == midpoint && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t r = abs + 0xfffu + ((abs >> 13) & 1u) - 0x38000000u;
    return (uint16_t)(sign | (r >> 13));
}

#endif
