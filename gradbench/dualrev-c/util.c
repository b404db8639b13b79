/* util.c - reading inputs from JSON and writing outputs to it */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gb.h"

int gb_get_number(const json_t *obj, const char *key, double *v, char *err)
{
    json_t *x = json_object_get(obj, key);
    if (!json_is_number(x)) {
        snprintf(err, GB_ERRLEN, "input field \"%s\": a number is required",
                 key);
        return -1;
    }
    *v = json_number_value(x);
    return 0;
}

int gb_get_size(const json_t *obj, const char *key, size_t *v, char *err)
{
    json_t *x = json_object_get(obj, key);
    if (!json_is_integer(x) || json_integer_value(x) < 0) {
        snprintf(err, GB_ERRLEN,
                 "input field \"%s\": a non-negative integer is required", key);
        return -1;
    }
    *v = (size_t)json_integer_value(x);
    return 0;
}

/* the numbers of a JSON array into out[0..n-1] */
static int numbers(const json_t *a, double *out, const char *key, char *err)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (!json_is_number(x)) {
            snprintf(err, GB_ERRLEN,
                     "input field \"%s\": element %zu is not a number", key, i);
            return -1;
        }
        out[i] = json_number_value(x);
    }
    return 0;
}

double *gb_get_vector(const json_t *obj, const char *key, size_t *n, char *err)
{
    json_t *a = json_object_get(obj, key);
    if (!json_is_array(a)) {
        snprintf(err, GB_ERRLEN, "input field \"%s\": an array is required",
                 key);
        return NULL;
    }
    *n = json_array_size(a);
    double *v = malloc((*n ? *n : 1) * sizeof *v);
    if (!v) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    if (numbers(a, v, key, err)) {
        free(v);
        return NULL;
    }
    return v;
}

double *gb_get_matrix(const json_t *obj, const char *key, size_t *rows,
                      size_t *cols, char *err)
{
    json_t *a = json_object_get(obj, key);
    if (!json_is_array(a) || json_array_size(a) == 0 ||
        !json_is_array(json_array_get(a, 0))) {
        snprintf(err, GB_ERRLEN,
                 "input field \"%s\": a non-empty array of arrays is required",
                 key);
        return NULL;
    }
    *rows = json_array_size(a);
    *cols = json_array_size(json_array_get(a, 0));
    if (*cols == 0 || *rows > SIZE_MAX / sizeof(double) / *cols) {
        snprintf(err, GB_ERRLEN, "input field \"%s\": bad shape", key);
        return NULL;
    }
    double *v = malloc(*rows * *cols * sizeof *v);
    if (!v) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *rows; i++) {
        json_t *row = json_array_get(a, i);
        if (!json_is_array(row) || json_array_size(row) != *cols) {
            snprintf(err, GB_ERRLEN,
                     "input field \"%s\": row %zu is not an array of %zu numbers",
                     key, i, *cols);
            free(v);
            return NULL;
        }
        if (numbers(row, v + i * *cols, key, err)) {
            free(v);
            return NULL;
        }
    }
    return v;
}

json_t *gb_json_number(double x, char *err)
{
    if (!isfinite(x)) {
        snprintf(err, GB_ERRLEN, "the result is not finite (%g)", x);
        return NULL;
    }
    json_t *j = json_real(x);
    if (!j)
        snprintf(err, GB_ERRLEN, "out of memory");
    return j;
}

json_t *gb_json_vector(const double *x, size_t n, char *err)
{
    json_t *a = json_array();
    if (!a) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *v = gb_json_number(x[i], err);
        if (!v || json_array_append_new(a, v)) {
            if (v)
                snprintf(err, GB_ERRLEN, "out of memory");
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *gb_json_matrix(const double *x, size_t rows, size_t cols, char *err)
{
    json_t *a = json_array();
    if (!a) {
        snprintf(err, GB_ERRLEN, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < rows; i++) {
        json_t *row = gb_json_vector(x + i * cols, cols, err);
        if (!row || json_array_append_new(a, row)) {
            if (row)
                snprintf(err, GB_ERRLEN, "out of memory");
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int gb_fail(char *err, const char *what, dr_status st)
{
    snprintf(err, GB_ERRLEN, "%s: dualrev: %s", what, dr_strerror(st));
    return -1;
}

const gb_function *gb_find(const char *module, const char *name)
{
    for (const gb_function *const *f = gb_functions; *f; f++)
        if (!strcmp((*f)->module, module) && !strcmp((*f)->name, name))
            return *f;
    return NULL;
}

int gb_has_module(const char *module)
{
    for (const gb_function *const *f = gb_functions; *f; f++)
        if (!strcmp((*f)->module, module))
            return 1;
    return 0;
}
