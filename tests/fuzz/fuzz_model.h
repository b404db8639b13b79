/*
 * fuzz_model.h - the fuzz target's model of the tape it drives: the slots
 * that hold the program's values with their reference, the fork stack,
 * the expected sticky statuses, the ids handed out; the input reader; the
 * helpers every operation uses; and the operations of the files beside
 * fuzz_dualrev.c (tests/fuzz/README.md).
 */
#ifndef FUZZ_MODEL_H
#define FUZZ_MODEL_H

#include "fuzz_ref.h"

/* ------------------------------------------------------------ the model */

enum { V_CONST, V_VALID, V_INVALID, V_UNKNOWN };

/* an operand of an operation: what the engine gets and what it means */
typedef struct opnd {
    dr_real r;
    const dual *d;
    int kind;
} opnd;

typedef struct sslot {
    bool live;
    int epoch, job;
    int dim;      /* the input direction it is, or -1 */
    dr_real r;
    dual d;
} sslot;

typedef struct aslot {
    bool live, failed, active;
    int epoch, job;
    dr_arr h;
    int rank;
    int64_t rows, cols, n;
    bool input;
    int dim[MAXE];
    dual el[MAXE];
} aslot;

/* the expected sticky status of a handle */
typedef struct hstat {
    dr_status st;
} hstat;

/* ranges [lo, hi) of ids of nodes without a second-order rule for a
   handle (fuzz_second_order.c) */
#define NBAD 8
typedef struct bads {
    int n;
    bool lost; /* more than NBAD: not known */
    dr_idx lo[NBAD], hi[NBAD];
} bads;
void bad_add(bads *b, dr_idx lo, dr_idx hi);

/* one level of the fork stack: level 0 is the root */
typedef struct level {
    dr_tape *h;
    int job;
    hstat hs;
    /* second order belongs to a handle: its order (children start at 1),
       the id from which it recorded at order 1 (DR_NONE: at order 2), the
       ranges of nodes it recorded without a rule while at order 2, and
       its first id (the root's: since the last clear) */
    int order;
    dr_idx o1_from;
    bads bad;
    dr_idx first;
    /* while this level is forked (a level above it exists); korder: the
       order its children started at (its own at the fork) */
    int nk, cur, korder;
    dr_tape *kids[3];
    int kjob[3];
    dr_status kst[3];
} level;

/* a group of consecutive input ids (dr_inputs / dr_input_range) */
typedef struct group {
    int epoch;
    dr_idx first;
    int n;
    int dim[8];
} group;

struct state {
    dr_tape *T;
    int epoch;
    sslot s[NS];
    aslot a[NA];
    level L[MAXLEV];
    int depth;
    int ndim;
    dmask anc[MAXJOBS];
    int njobs;
    bool poison;     /* array values or seeds not finite: sweeps may make
                        NaN where the reference cannot follow; no
                        gradient comparisons until the next clear */
    unsigned threads;
    /* recorder */
    bool rec_open;
    dr_rec rec;
    /* ids */
    dr_idx ids[MAXIDS];
    int nids;
    dr_idx max_id;
    dr_idx stale[NSTALE];
    int nstale;
    group grp[4];
    int ngrp;
    int last_slot;
    /* an external function without a forward rule is on the tape: the
       forward and vector-forward modes answer DR_ENOTSUP (fuzz_external.c) */
    bool no_fwd;
    /* a checkpointed loop or an external is on the tape (their rules run
       user code: a second sweep must still give the same bits) */
    int nexternal;
};
extern struct state S;
/* an array operation's operands include an active one (set while decoding
   the operands; an array result is active exactly then) */
extern bool g_act;

/* ------------------------------------------------------ the input reader */

typedef struct rd {
    const uint8_t *p;
    size_t n, i;
} rd;

unsigned u8(rd *r);
unsigned u16(rd *r);
uint64_t u64(rd *r);
bool eof(const rd *r);
/* a double: mostly small multiples of 1/16, sometimes special values,
   rarely raw bits */
double rdv(rd *r);
/* a finite, moderate weight for seeds */
double rdw(rd *r);

/* ------------------------------------------------------------- helpers */

level *top(void);
int new_job(dmask base);
bool svisible(const sslot *x);
bool avisible(const aslot *x);
/* remember an id the engine handed out; ids must never repeat */
void note_id(dr_idx id);
bool known_id(dr_idx id);
/* the model's view of a failure: the first one sticks */
void stick(hstat *h, dr_status st);
/* after a call that may fail with one of `allowed` (bit per status, bit 0:
   may also succeed): the handle's sticky status must agree */
void sync_status(const char *what, dr_tape *h, hstat *hs, unsigned allowed);
#define ST(x) (1u << (x))
void check_sticky(const char *what, dr_tape *h, const hstat *hs);
/* a visible scalar (array) slot near index k, or -1 */
int pick_s(unsigned k);
int pick_a(unsigned k);
/* a visible slot holding an input (dim >= 0) near k, or -1 */
int pick_input(unsigned k);
/* an operand from one byte: a slot (when one is visible) or a constant */
opnd operand(rd *r, dual *cbuf);
/* an operand with a wrong id (kind -1: an array id, not for scalars) */
opnd bad_operand(rd *r, dual *cbuf);

/* the engine side of a scalar operation */
dr_real eng_unary(dr_tape *t, int f, dr_real a);
dr_real eng_binary(dr_tape *t, int f, dr_real a, dr_real b);

/* where a scalar operation records (the main program or a fork_run job) */
typedef struct sctx {
    dr_tape *h;
    hstat *hs;
    dr_idx *ids; /* fork_run jobs collect their ids here (NULL: note_id) */
    int *nids;
    int cap;
} sctx;
sctx main_ctx(void);
void finish_scalar(sctx *c, const char *what, dr_real res, const dual *ref,
                   int n, const opnd *ops, double scale, bool nan_args,
                   dual *out);
void do_unary(sctx *c, int f, opnd a, dual *out, dr_real *rout);
void do_binary(sctx *c, int f, opnd a, opnd b, dual *out, dr_real *rout);
void do_powi(sctx *c, opnd a, int n, dual *out, dr_real *rout);
/* store a scalar result in slot j */
void put_s(int j, dr_real r, const dual *d, int dim);
int new_dim(void);
/* a new level of the fork stack on handle h (order 1, nothing recorded) */
void level_start(level *lv, dr_tape *h);
/* store an array result / a failed one */
aslot *put_a(int j, dr_arr h, int rank, int64_t rows, int64_t cols);
void put_failed_a(int j);
void arr_expect_fail(const char *what, dr_arr h, unsigned allowed);
/* the status a whole-tape call must give now (before its own checks) */
dr_status whole_status(void);
/* derivatives are comparable (no non-finite array values) */
bool comparable(void);

/* ------------------------------------------ operations of other files */

/* fuzz_modes.c: forward and vector modes */
void op_modes(rd *r);
/* fuzz_second_order.c: the main tape's order, its Hessians, and
   programs on a tape of order 2 checked against hyper-dual numbers */
void op_order(rd *r);
void op_second_order(rd *r);
/* fuzz_loops.c: checkpointed loops against the same loop unrolled */
void op_loop(rd *r);
/* fuzz_external.c: external functions */
void op_external(rd *r);
/* fuzz_tapes.c: ids of a second live tape */
void op_other_tape(rd *r);
/* fuzz_replay.c: record once, replay at new inputs */
void op_replay(rd *r);
/* fuzz_statements.c: statements (dr_ex_*, dr_rec_stmt, dr_sum_*,
   dr_rec_sum) and n-ary sums (dr_sumn, dr_sumn_id; a pattern of their
   byte: sums of products, dr_fe_dot_rec) */
void op_statement(rd *r);
void op_sumn(rd *r);
/* fuzz_statements.c: statements recorded with their programs
   (dr_fe_prog) on the main tape */
void op_prog(rd *r);

/* A program of cbits/record/program.h's byte format, written here from
   that format (not from the library's decoder): n leaves, c constants, m
   instructions of the operations FP_ADD ... FP_NEG, q pairs of leaf
   masks.  The other files record it (fuzz_replay.c,
   fuzz_second_order.c), each evaluating it with its own reference one
   instruction at a time. */
enum { FP_ADD = 1, FP_SUB, FP_MUL, FP_DIV, FP_NEG };
#define FP_LEAVES 6    /* dr_fe_prog's leaves (DR_FE_STMT_MAX)         */
#define FP_REGS 255    /* the registers the format has room for       */
#define FP_STEPS 8     /* instructions of a program that is not wide  */
#define FP_PAIRS 16    /* pairs the decoder writes, at most           */
#define FP_HEAD 4      /* n, c, m, q                                  */
#define FP_CODE (FP_HEAD + 2 * FP_PAIRS + 8 * FP_REGS + 3 * FP_REGS)
typedef struct fprog {
    unsigned n, c, m, q;
    bool off; /* recorded with dr_fe_programs off: always refused     */
    unsigned char code[FP_CODE];
} fprog;
/* a well-formed program over n (1 .. FP_LEAVES) leaves: up to 3
   constants and 1 .. FP_STEPS instructions; wide: as many constants as
   the registers leave room for (n + c + m = FP_REGS).  The top bits of
   its first byte choose its pairs (none; the program's own, exact; some
   of those dropped, saying too little; fuzzed masks; own and fuzzed) or
   that it is recorded with programs off (off) */
void prog_decode(rd *r, fprog *p, unsigned n, bool wide);
double prog_const(const fprog *p, unsigned j);
const unsigned char *prog_insn(const fprog *p, unsigned i);
/* the registers the last instruction depends on (bit per leaf) */
unsigned prog_reached(const fprog *p);
/* the program's partials are not constants where the leaves of act (bit
   per leaf: the ids that are not DR_NONE) move: a product of two values
   that move, or a quotient by one, anywhere in it (program.h) */
bool prog_nonlinear(const fprog *p, unsigned act);
/* a pair of code (a, b) with (a = 0 or a & act) and b & act: the engine
   may refuse without reading further (code: any bytes with code[3]
   pairs) */
bool prog_pairs_refuse(const unsigned char *code, unsigned act);
/* the ids of leaf that are not DR_NONE (bit per leaf) */
unsigned prog_active(const dr_real *leaf, unsigned n);
/* its value at leaf values x, by plain arithmetic in the program's order */
double prog_value(const fprog *p, const double *x);
/* a copy of p's bytes that lives until the input ends: a tape keeps the
   address of a program it records (the front end keeps the bytes "for as
   long as the tape"), and the main and the second tape live that long */
const unsigned char *prog_keep(const fprog *p);
/* dr_fe_prog of p over the leaves (ids and values) with value v; root
   (not NULL) given dr_fe_programs(root, on) first */
dr_idx prog_record(dr_tape *t, dr_tape *root, bool on,
                   const unsigned char *code, double v, const dr_real *leaf,
                   unsigned n);
/* the same program recorded one operation at a time (what a front end
   does where dr_fe_prog answers DR_FE_STMT_BY_OPS) */
dr_real prog_by_ops(dr_tape *t, const fprog *p, const dr_real *leaf);

/* the second live tape (fuzz_tapes.c): created on first use, freed at the
   end of the input; the ids it handed out since its last clear are noted
   (scalar and array ids), for operations of the main tape to be refused */
dr_tape *other_tape(void);
void other_tape_note(dr_idx id, bool array);
/* after every dr_tape_clear of the second tape */
void other_tape_reset(void);

/* A context given to a tape with a destroy callback (externals, loops)
   starts with an `owned`: the callback counts, and when the tape is
   cleared or freed the harness checks that it ran once and frees it.  A
   context whose call failed (or that has no destroy callback) stays the
   caller's. */
typedef struct owned {
    int destroyed;      /* times destroy was called                     */
    bool by_tape;       /* the tape must call destroy (else: never)     */
    int tape;           /* which tape holds it (TAPE_*)                 */
    struct owned *next;
} owned;
enum { TAPE_MAIN = 1, TAPE_OTHER, TAPE_SCRATCH, TAPE_REPLAY, TAPE_FRESH };
/* a successful recording call: tape holds o */
void owned_give(owned *o, int tape, bool by_tape);
/* the destroy callback of every such context */
void owned_destroy(void *ctx);
/* the tape was cleared or freed: what it held has gone */
void owned_gone(int tape, const char *when);

/* hooks: a program starts; the main tape was cleared; the program ended
   and its tape was freed (everything it held must be gone) */
void fz_start(void);
void fz_cleared(void);
void fz_end(void);
/* dr_tape_bytes holds at least the nodes (fuzz_tapes.c) */
void tape_bytes_check(const dr_tape *t, const char *when);
/* the counting allocator (fuzz_tapes.c): set before the first tape; the
   calls so far and the bytes held now */
void fz_allocator(void);
size_t fz_alloc_calls(void);
size_t fz_live_bytes(void);
/* dr_tape_free(t): it frees dr_tape_bytes(t) bytes (loops: it holds a
   checkpointed loop) */
void tape_free_counted(dr_tape *t, bool loops, const char *what);
/* per area: the main tape was cleared (fuzz_modes.c); the program ended
   (fuzz_loops.c: its scratch tape) */
void modes_cleared(void);
void loops_end(void);
/* (fuzz_statements.c: the programs' bytes prog_keep kept) */
void progs_end(void);

#endif /* FUZZ_MODEL_H */
