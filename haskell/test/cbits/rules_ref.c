/*
 * rules_ref.c - the C API's value and gradient of one scalar operation, for
 * test/Rules.hs, which compares them bit for bit with the Haskell front
 * end's.  Haskell cannot call dr_sin (a dr_real by value), so this records
 * the operation with the public API on a tape of its own and hands back the
 * value and the gradient through pointers.  Operations are named as in
 * cbits/rules/scalar_rules.h (its lists name every one); an unknown name or a
 * failure returns -1, so a misspelt name fails the test instead of testing
 * another operation.
 */
#include "dualrev.h"
#include "rules/scalar_rules.h"

#include <string.h>

typedef dr_real (*op1)(dr_tape *, dr_real);
typedef dr_real (*op2)(dr_tape *, dr_real, dr_real);

#define ROW(op) {#op, dr_##op},
static const struct {
    const char *name;
    op1 f;
} unary[] = {DR_RULES_UNARY(ROW) DR_RULES_UNARY_FUSED(ROW)};
static const struct {
    const char *name;
    op2 f;
} binary[] = {DR_RULES_BINARY(ROW)};

#define FIND(table, name)                                                    \
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)              \
        if (strcmp(table[i].name, name) == 0)                                \
            return table[i].f;                                               \
    return NULL;

static op1 find1(const char *name) { FIND(unary, name) }
static op2 find2(const char *name) { FIND(binary, name) }

/* y on t, its value and d y / d x[0..n-1]; frees t */
static int finish(dr_tape *t, dr_real y, size_t n, const dr_real *x,
                  double *v, double *g)
{
    int ok = dr_gradient(t, y, n, x, g) == DR_OK &&
             dr_tape_status(t) == DR_OK;
    *v = y.val;
    dr_tape_free(t);
    return ok ? 0 : -1;
}

int rules_ref1(const char *name, double x, double *v, double *g)
{
    op1 f = find1(name);
    dr_tape *t = f ? dr_tape_new() : NULL;
    if (!t)
        return -1;
    dr_real a = dr_input(t, x);
    return finish(t, f(t, a), 1, &a, v, g);
}

/* a or b is a constant where its flag is 0 (its gradient entry is then 0) */
int rules_ref2(const char *name, double a, int a_active, double b,
               int b_active, double *v, double *ga, double *gb)
{
    op2 f = find2(name);
    dr_tape *t = f ? dr_tape_new() : NULL;
    if (!t)
        return -1;
    dr_real x[2] = {a_active ? dr_input(t, a) : dr_const(a),
                    b_active ? dr_input(t, b) : dr_const(b)};
    double g[2];
    int r = finish(t, f(t, x[0], x[1]), 2, x, v, g);
    *ga = g[0];
    *gb = g[1];
    return r;
}

int rules_ref_powi(double x, int n, double *v, double *g)
{
    dr_tape *t = dr_tape_new();
    if (!t)
        return -1;
    dr_real a = dr_input(t, x);
    return finish(t, dr_powi(t, a, n), 1, &a, v, g);
}
