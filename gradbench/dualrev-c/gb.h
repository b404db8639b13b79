/*
 * gb.h - dualrev-c, a GradBench tool on libdualrev: the protocol server and
 * the interface every eval's functions implement (README.md).
 */
#ifndef GB_H
#define GB_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include <dualrev.h>

/* a message for a failure, written into err[0..GB_ERRLEN-1] */
#define GB_ERRLEN 512

/*
 * One function of one eval module.  prepare reads the input (the "input"
 * field of an evaluate message) into a state of its own, or returns NULL
 * and writes why into err; run computes the function once (it is timed,
 * and run as often as the message asks); output gives the result as JSON
 * (a new reference) after the last run, or NULL and a message; release
 * frees the state.
 */
typedef struct gb_function {
    const char *module;
    const char *name;
    void *(*prepare)(const json_t *input, char *err);
    int (*run)(void *state, char *err);
    json_t *(*output)(void *state, char *err);
    void (*release)(void *state);
} gb_function;

/* every function of every implemented eval, ended by NULL (evals.c) */
extern const gb_function *const gb_functions[];

/* the function of that module and name, or NULL */
const gb_function *gb_find(const char *module, const char *name);
/* whether any function belongs to the module */
int gb_has_module(const char *module);

/*
 * The protocol: reads messages, one JSON object a line, from in and writes
 * one response a line to out, until an "end" message or the end of in.
 * Returns 0, or 1 when writing failed.
 */
int gb_serve(FILE *in, FILE *out);

/* ---- helpers for the evals (util.c) ---- */

/* a number field (integers accepted) into *v: 0, or -1 with a message */
int gb_get_number(const json_t *obj, const char *key, double *v, char *err);
/* a non-negative integer field: 0, or -1 with a message */
int gb_get_size(const json_t *obj, const char *key, size_t *v, char *err);
/* an array of numbers (field key of obj) into a new malloc'd array of *n
   values: the array, or NULL with a message (an empty array gives a
   non-NULL pointer with *n == 0) */
double *gb_get_vector(const json_t *obj, const char *key, size_t *n,
                      char *err);
/* an array of rows of numbers, all of one length, into a row-major malloc'd
   array of *rows x *cols: or NULL with a message */
double *gb_get_matrix(const json_t *obj, const char *key, size_t *rows,
                      size_t *cols, char *err);
/* JSON of n numbers, or of rows x cols as rows; NULL (and a message) for a
   value that is not finite, which JSON cannot hold */
json_t *gb_json_vector(const double *x, size_t n, char *err);
json_t *gb_json_matrix(const double *x, size_t rows, size_t cols, char *err);
json_t *gb_json_number(double x, char *err);
/* a failed status as a message: "what: dualrev: the status's text" */
int gb_fail(char *err, const char *what, dr_status st);

#endif
