/* The one parser of numeric flags. The whole text must be the number: no
 * leading space or sign juggling, no trailing junk, no overflow; a value out
 * of the flag's range is refused with the range named, never clamped. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits with at most one leading '-', so that "-1" is read as a number and
 * refused by the range, which is the more useful message. */
static int whole_text(const char *s)
{
    s += *s == '-';
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* [-]digits[.digits][e[+-]digits], a digit somewhere before the exponent:
 * what strtod reads, less hex, inf, nan and leading space. */
static int decimal_text(const char *s)
{
    s += *s == '-';
    size_t ints = strspn(s, "0123456789");
    s += ints;
    size_t frac = 0;
    if (*s == '.') {
        frac = strspn(s + 1, "0123456789");
        s += 1 + frac;
    }
    if (!ints && !frac)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '-' || *s == '+';
        size_t exp = strspn(s, "0123456789");
        if (!exp)
            return 0;
        s += exp;
    }
    return !*s;
}

int cli_whole(const char *flag, const char *what, const char *text, long long min, long long max, long long *out,
              cf_error *err)
{
    errno = 0;
    long long v = whole_text(text) ? strtoll(text, NULL, 10) : 0;
    if (!whole_text(text) || errno || v < min || v > max)
        return cf_error_set(err, CF_ERR_USAGE, "%s '%s': expected %s from %lld to %lld", flag, text, what, min, max);
    *out = v;
    return 0;
}

int cli_decimal(const char *flag, const char *what, const char *text, double min, double max, double *out,
                cf_error *err)
{
    errno = 0;
    double v = decimal_text(text) ? strtod(text, NULL) : 0;
    if (!decimal_text(text) || errno || !(v >= min && v <= max))
        return cf_error_set(err, CF_ERR_USAGE, "%s '%s': expected %s from %g to %g", flag, text, what, min, max);
    *out = v;
    return 0;
}

static const struct {
    char unit;
    unsigned shift;
} size_units[] = { { 'K', 10 }, { 'M', 20 }, { 'G', 30 }, { 'T', 40 } };

/* "64K" where the size is a whole number of a unit, else bytes: a size as the
 * flags take it, so that a usage message gives bounds one can type back (the
 * smoke page writes sizes for a person instead: "64 KiB") */
static void size_as_flag(uint64_t v, char *buf, size_t cap)
{
    for (size_t i = sizeof size_units / sizeof size_units[0]; i-- > 0;)
        if (v && !(v & ((1ull << size_units[i].shift) - 1))) {
            snprintf(buf, cap, "%llu%c", (unsigned long long)(v >> size_units[i].shift), size_units[i].unit);
            return;
        }
    snprintf(buf, cap, "%llu", (unsigned long long)v);
}

/* The unit after the digits: K, M, G or T in either case, then B or iB
 * (8M, 8m, 8MB, 8MiB); 0 bytes when there is none, -1 when it is not one. */
static int size_shift(const char *s)
{
    if (!*s)
        return 0;
    int shift = -1;
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++)
        if ((*s & ~0x20) == size_units[i].unit)
            shift = (int)size_units[i].shift;
    if (shift < 0)
        return -1;
    s++;
    if ((*s & ~0x20) == 'I')
        s++;
    if ((*s & ~0x20) == 'B')
        s++;
    else if (s[-1] == 'i' || s[-1] == 'I')
        return -1;
    return *s ? -1 : shift;
}

int cli_size(const char *flag, const char *text, uint64_t min, uint64_t max, uint64_t *out, cf_error *err)
{
    size_t digits = strspn(text, "0123456789");
    int shift = digits ? size_shift(text + digits) : -1;
    errno = 0;
    unsigned long long v = shift >= 0 ? strtoull(text, NULL, 10) : 0;
    if (shift < 0 || errno || v > (UINT64_MAX >> shift) || (v << shift) < min || (v << shift) > max) {
        char lo[32], hi[32];
        size_as_flag(min, lo, sizeof lo);
        size_as_flag(max, hi, sizeof hi);
        return cf_error_set(err, CF_ERR_USAGE, "%s '%s': expected a size (bytes, or with K, M, G or T: 64K, 8M, 1G) from %s to %s",
                            flag, text, lo, hi);
    }
    *out = (uint64_t)v << shift;
    return 0;
}

int cli_usage_fail(const char *cmd, cf_error *err)
{
    cli_usage(cmd, "%s", cf_error_message(err));
    cf_error_clear(err);
    return EXIT_USAGE;
}
