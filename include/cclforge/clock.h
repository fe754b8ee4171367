/* The one clock every timeout, progress meter and measurement reads. */
#ifndef CCLFORGE_CLOCK_H
#define CCLFORGE_CLOCK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on CLOCK_MONOTONIC: never jumps with the wall clock. */
double cf_now_seconds(void);

#ifdef __cplusplus
}
#endif
#endif
