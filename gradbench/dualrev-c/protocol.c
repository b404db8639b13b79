/* protocol.c - GradBench's protocol: one JSON message a line in, one
   response a line out (README.md) */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gb.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* sets success false and the error message */
static void fail(json_t *resp, const char *msg)
{
    json_object_set_new(resp, "success", json_false());
    json_object_set_new(resp, "error", json_string(msg));
}

static void define(const json_t *msg, json_t *resp)
{
    const char *module = json_string_value(json_object_get(msg, "module"));
    if (!module) {
        fail(resp, "define: the field \"module\" must be a string");
        return;
    }
    if (!gb_has_module(module)) {
        char err[GB_ERRLEN];
        snprintf(err, sizeof err, "dualrev-c does not implement the eval \"%s\"",
                 module);
        fail(resp, err);
        return;
    }
    json_object_set_new(resp, "success", json_true());
}

/* runs the function min_runs times and at least min_seconds in all */
static void evaluate(const json_t *msg, json_t *resp)
{
    char err[GB_ERRLEN] = "";
    const char *module = json_string_value(json_object_get(msg, "module"));
    const char *name = json_string_value(json_object_get(msg, "function"));
    const json_t *input = json_object_get(msg, "input");
    if (!module || !name) {
        fail(resp, "evaluate: the fields \"module\" and \"function\" must be strings");
        return;
    }
    const gb_function *f = gb_find(module, name);
    if (!f) {
        snprintf(err, sizeof err, "dualrev-c has no function \"%s\" in \"%s\"",
                 name, module);
        fail(resp, err);
        return;
    }
    /* the number of runs: min_runs and min_seconds, where given */
    double min_runs = 1, min_seconds = 0;
    json_t *r = json_object_get(input, "min_runs"),
           *s = json_object_get(input, "min_seconds");
    if ((r && !json_is_number(r)) || (s && !json_is_number(s))) {
        fail(resp, "evaluate: \"min_runs\" and \"min_seconds\" must be numbers");
        return;
    }
    if (r)
        min_runs = json_number_value(r);
    if (s)
        min_seconds = json_number_value(s);
    if (!(min_runs >= 1 && min_runs <= 1e9 && min_seconds >= 0 &&
          min_seconds <= 1e6)) {
        fail(resp, "evaluate: \"min_runs\" must be from 1 to 1e9, "
                   "\"min_seconds\" from 0 to 1e6");
        return;
    }
    if (!input) {
        fail(resp, "evaluate: the field \"input\" is missing");
        return;
    }
    void *state = f->prepare(input, err);
    if (!state) {
        fail(resp, err);
        return;
    }
    json_t *timings = json_array();
    double elapsed = 0;
    int ok = timings != NULL;
    for (double runs = 0; ok && (runs < min_runs || elapsed < min_seconds);
         runs++) {
        int64_t t0 = now_ns();
        if (f->run(state, err)) {
            ok = 0;
            break;
        }
        int64_t dt = now_ns() - t0;
        elapsed += (double)dt / 1e9;
        json_t *t = json_pack("{s:s, s:I}", "name", "evaluate", "nanoseconds",
                              (json_int_t)dt);
        if (!t || json_array_append_new(timings, t)) {
            snprintf(err, sizeof err, "out of memory");
            ok = 0;
        }
    }
    json_t *out = ok ? f->output(state, err) : NULL;
    f->release(state);
    if (!out) {
        json_decref(timings);
        fail(resp, err[0] ? err : "out of memory");
        return;
    }
    json_object_set_new(resp, "success", json_true());
    json_object_set_new(resp, "output", out);
    json_object_set_new(resp, "timings", timings);
}

/* the response to one line; *end set for an "end" message (no response) */
static json_t *respond(const char *line, int *end)
{
    json_error_t jerr;
    json_t *msg = json_loads(line, JSON_DECODE_ANY, &jerr);
    json_t *resp = json_object();
    if (!resp) {
        json_decref(msg);
        return NULL;
    }
    if (!msg || !json_is_object(msg)) {
        char err[GB_ERRLEN];
        if (msg)
            snprintf(err, sizeof err, "a message must be a JSON object");
        else
            snprintf(err, sizeof err, "malformed JSON (column %d): %s",
                     jerr.column, jerr.text);
        json_object_set_new(resp, "id", json_null());
        fail(resp, err);
        json_decref(msg);
        return resp;
    }
    json_t *id = json_object_get(msg, "id");
    json_object_set(resp, "id", id ? id : json_null());
    const char *kind = json_string_value(json_object_get(msg, "kind"));
    if (!kind)
        fail(resp, "the field \"kind\" must be a string");
    else if (!strcmp(kind, "start"))
        json_object_set_new(resp, "tool", json_string("dualrev-c"));
    else if (!strcmp(kind, "define"))
        define(msg, resp);
    else if (!strcmp(kind, "evaluate"))
        evaluate(msg, resp);
    else if (!strcmp(kind, "analysis"))
        ; /* acknowledged by the id alone */
    else if (!strcmp(kind, "end")) {
        *end = 1;
        json_decref(resp);
        resp = NULL;
    } else {
        char err[GB_ERRLEN];
        snprintf(err, sizeof err, "unknown message kind \"%s\"", kind);
        fail(resp, err);
    }
    json_decref(msg);
    return resp;
}

int gb_serve(FILE *in, FILE *out)
{
    char *line = NULL;
    size_t cap = 0;
    int end = 0, rc = 0;
    while (!end && getline(&line, &cap, in) != -1) {
        if (strspn(line, " \t\r\n") == strlen(line))
            continue; /* blank lines are no messages */
        json_t *resp = respond(line, &end);
        if (end)
            break;
        char *text = resp ? json_dumps(resp, JSON_COMPACT | JSON_REAL_PRECISION(17))
                          : NULL;
        json_decref(resp);
        if (!text) {
            /* no memory for a response: say so in a line made by hand */
            text = strdup("{\"id\":null,\"success\":false,\"error\":\"out of memory\"}");
            if (!text) {
                rc = 1;
                break;
            }
        }
        int bad = fprintf(out, "%s\n", text) < 0 || fflush(out) != 0;
        free(text);
        if (bad) {
            rc = 1;
            break;
        }
    }
    free(line);
    return rc;
}
