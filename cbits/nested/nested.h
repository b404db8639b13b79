/*
 * nested.h - derivatives of derivatives above the arrays layer
 * (cbits/README.md): the public entry points of the passes recorded as
 * operations (recorded_api.c), which register the array operations'
 * rules for them (array_rules.c) first.  Not installed.
 */
#ifndef DR_NESTED_H
#define DR_NESTED_H

#include "arrays/array.h"
#include "recorded/recorded.h"

/* the array operations' rules for the recorded passes, registered with
   the arrays layer (array_rules.c) */
DR_HIDDEN void dr__nested_register(void);

#endif /* DR_NESTED_H */
