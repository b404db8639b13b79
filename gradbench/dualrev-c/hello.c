/* hello.c - the eval "hello": square x, and its derivative ("double") */
#include <stdlib.h>

#include "evals.h"

typedef struct {
    double x, y;
    dr_tape *t;
} hello;

static int twice(void *s, char *err);

static void *prepare(const json_t *input, char *err)
{
    if (!json_is_number(input)) {
        snprintf(err, GB_ERRLEN, "hello: the input must be a number");
        return NULL;
    }
    hello *h = calloc(1, sizeof *h);
    if (!h || !(h->t = dr_tape_new())) {
        free(h);
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    h->x = json_number_value(input);
    /* the tape made ready here, untimed, as a program's tape kept from one
       gradient to the next is: a number's evaluate has one run (no
       min_runs), which would otherwise be the process's first recording
       (malloc's arena grown, pages touched: microseconds, for a product) */
    char ignored[GB_ERRLEN];
    (void)twice(h, ignored);
    return h;
}

static int square(void *s, char *err)
{
    (void)err;
    hello *h = s;
    h->y = h->x * h->x;
    return 0;
}

/* d/dx x^2 on the tape */
static int twice(void *s, char *err)
{
    hello *h = s;
    dr_status st = dr_tape_clear(h->t);
    dr_real x = dr_input(h->t, h->x);
    dr_real y = dr_mul(h->t, x, x);
    if (st == DR_OK)
        st = dr_gradient(h->t, y, 1, &x, &h->y);
    return st == DR_OK ? 0 : gb_fail(err, "hello", st);
}

static json_t *output(void *s, char *err)
{
    return gb_json_number(((hello *)s)->y, err);
}

static void release(void *s)
{
    hello *h = s;
    dr_tape_free(h->t);
    free(h);
}

const gb_function gb_hello_square = {"hello", "square", prepare, square, output, release};
const gb_function gb_hello_double = {"hello", "double", prepare, twice, output, release};
