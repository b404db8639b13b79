/*
 * ext-hooks-sparse.c - an external function's record leaves hooks unset
 * (tests/fuzz/README.md, "Findings").  dr_record_external takes its
 * struct dr_ext from the tape's arena, which does not zero what it hands
 * out, and sets reverse, clear_adj, forward, reverse_vec, replay,
 * replayed and acc_into, but not reverse2, hvp_result, pattern,
 * tangent_record or adjoint_record.  An allocator that hands out memory
 * holding 0xbe (as ASan's malloc does) makes the sparse Hessian's walk
 * over the log call pattern at 0xbebebebebebebebe (SEGV in ext_args,
 * cbits/drivers/sparse.c); with plain malloc the memory is often zero,
 * or after a dr_tape_clear a record's from before.  Build from the
 * repository root, e.g. (cbits/engine.mk's sources):
 *
 *   gcc -O1 -g -Iinclude -Icbits tests/fuzz/repro/ext-hooks-sparse.c \
 *       $(ENGINE_SRC) -lopenblas -lpthread -lm
 */
#include <dualrev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an allocator whose memory holds 0xbe */
static void *fill_malloc(size_t n, void *user)
{
    (void)user;
    void *p = malloc(n);
    if (p)
        memset(p, 0xbe, n);
    return p;
}
static void plain_free(void *p, void *user)
{
    (void)user;
    free(p);
}

static void rev(void *ctx, size_t n, const double *x, size_t m,
                const double *y, const double *ybar, double *xbar)
{
    (void)ctx, (void)n, (void)x, (void)m, (void)y;
    xbar[0] += 2.0 * ybar[0];
}

int main(void)
{
    dr_set_allocator(fill_malloc, plain_free, NULL);
    dr_tape *t = dr_tape_new();
    dr_tape_set_order(t, 2);
    dr_real x = dr_input(t, 1.5), out;
    double y = 3.0;
    dr_external f = {NULL, rev, NULL, NULL, NULL};
    dr_status st = dr_record_external(t, &f, 1, &x, 1, &y, &out);
    printf("dr_record_external: %d\n", st);
    fflush(stdout);
    /* z after the call, not through its output: the pattern's walk over
       the log meets the call's entry (expected: DR_ENOTSUP or DR_OK, the
       call having no second-order rule; got: SEGV) */
    dr_real z = dr_sin(t, x);
    dr_sparse H = {0};
    st = dr_sparse_hessian(t, z, 1, &x, &H);
    printf("dr_sparse_hessian: %d\n", st);
    dr_sparse_free(&H);
    dr_tape_free(t);
    return 0;
}
