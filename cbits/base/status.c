/* status.c - status messages and the version. */
#include "dualrev.h"

const char *dr_strerror(dr_status status)
{
    switch (status) {
    case DR_OK:
        return "success";
    case DR_ENOMEM:
        return "out of memory";
    case DR_EINVAL:
        return "invalid argument (an id not on this tape, a NULL pointer, "
               "or a value out of its domain)";
    case DR_ESHAPE:
        return "array shapes do not match";
    case DR_EBUSY:
        return "the tape has forked jobs that are not joined yet";
    case DR_ERANGE:
        return "size or index out of range";
    case DR_ENOTSUP:
        return "not supported for this tape: a node has no rule for it "
               "(second order and replay need a tape of order 2 and nodes "
               "recorded with the scalar operations)";
    case DR_ERETAPE:
        return "a comparison the recorded path depended on comes out "
               "otherwise at the new inputs: record the program again";
    }
    return "unknown status code";
}

unsigned dr_version(void)
{
    return DR_VERSION_NUMBER;
}

const char *dr_version_string(void)
{
    return DR_VERSION_STRING;
}
