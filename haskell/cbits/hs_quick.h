/*
 * hs_quick.h - when the Haskell front end may run a sweep in an `unsafe`
 * foreign call (see hs_loop.c): the *_quick shims sweep when it may, and
 * return DRHS_CALL_SAFE otherwise, for the caller to make the safe call.
 */
#ifndef DRHS_QUICK_H
#define DRHS_QUICK_H

#include <dualrev.h>

/* Not a dr_status: "make the safe call instead". */
#define DRHS_CALL_SAFE (-1)

/* 1 when no Haskell step is alive and t is short (hs_loop.c). */
int drhs_quick_ok(dr_tape *t);

#endif
