#!/usr/bin/env python3
"""Write the seed corpus of the dualrev fuzz target (tests/fuzz/corpus/).

Each file is a program for the decoder in fuzz_dualrev.c: an opcode byte
(an index into its OPS table, modulo its length) followed by that
operation's argument bytes.  The files start with a few inputs so that
operations find operands, then mix one family of operations (the file
name says which) with gradients and sweeps.  Deterministic: running it again
writes the same files.

    python3 tests/fuzz/gen_corpus.py [outdir]
"""
import os
import random
import sys

# opcodes (positions in OPS[] of fuzz_dualrev.c)
INPUT, INPUTS, CONST, UNARY, BINARY, POWI, BAD_ID, RECORD = 0, 1, 2, 3, 5, 7, 8, 9
REC, ARR_CREATE, ARR_ELEM, ARR_SCALE, ARR_BCAST, ARR_LINALG = 10, 12, 14, 15, 16, 17
ARR_REDUCE, ARR_STRUCT, GRADIENT, GRAD_RANGE, SEED_REV = 18, 19, 20, 22, 23
FORK, FORK_RUN, THREADS, CLEAR, MISUSE = 25, 27, 28, 29, 30
# the other files' operations (fuzz_modes.c, fuzz_second_order.c, ...)
MODES, ORDER, SECOND, LOOP, EXTERNAL, OTHER, REPLAY = 31, 33, 34, 35, 36, \
    37, 38
STMT, SUMN, PROG = 39, 40, 41

FAMILIES = {
    "scalar": [UNARY, UNARY, BINARY, BINARY, POWI, GRADIENT, SEED_REV],
    "inputs": [INPUT, INPUTS, CONST, GRAD_RANGE, GRADIENT, BINARY],
    "record": [RECORD, RECORD, BINARY, GRADIENT, SEED_REV],
    "recorder": [REC, REC, REC, UNARY, BINARY, GRADIENT],
    "badid": [BAD_ID, BINARY, GRADIENT, CLEAR, UNARY, MISUSE],
    "array": [ARR_CREATE, ARR_ELEM, ARR_SCALE, ARR_REDUCE, SEED_REV, GRADIENT],
    "linalg": [ARR_CREATE, ARR_LINALG, ARR_BCAST, ARR_REDUCE, SEED_REV],
    "struct": [ARR_CREATE, ARR_STRUCT, ARR_REDUCE, SEED_REV, GRADIENT],
    "fork": [FORK, FORK, BINARY, UNARY, INPUT, GRADIENT],
    "forkrun": [FORK_RUN, THREADS, BINARY, GRADIENT, SEED_REV],
    "clear": [CLEAR, INPUT, BINARY, BAD_ID, GRADIENT],
    "misuse": [MISUSE, MISUSE, BINARY, GRADIENT, CLEAR],
    "modes": [MODES, MODES, MODES, BINARY, UNARY, INPUT, ARR_CREATE,
              ARR_ELEM, RECORD],
    "modes-fork": [MODES, MODES, FORK, BINARY, FORK_RUN, INPUT],
    "second": [SECOND, SECOND, BINARY],
    "order": [ORDER, ORDER, ORDER, UNARY, BINARY, INPUT, RECORD, GRADIENT,
              ARR_CREATE, ARR_REDUCE, SEED_REV],
    "order-fork": [ORDER, ORDER, FORK, FORK, UNARY, BINARY, INPUT],
    "loop": [LOOP, LOOP, BINARY, GRADIENT, SEED_REV, MODES],
    "external": [EXTERNAL, EXTERNAL, UNARY, GRADIENT, SEED_REV, MODES,
                 FORK, CLEAR],
    "tapes": [OTHER, OTHER, OTHER, SECOND, BINARY, GRADIENT, ARR_CREATE],
    "replay": [REPLAY, REPLAY, REPLAY, BINARY],
    "statements": [STMT, STMT, SUMN, SUMN, REC, BINARY, GRADIENT, SEED_REV],
    # statements with programs: on the main tape, in the second tape's
    # programs and in replayed ones (PROG_SECOND, PROG_REPLAY below)
    "prog": ["prog-main", "prog-main", "prog-main", BINARY, GRADIENT,
             SEED_REV, ORDER, "prog-second", "prog-replay"],
    # programs mostly linear in their leaves (recorded), with pairs of
    # every kind and programs off at times (after the others: their
    # files are as they were)
    "prog-linear": ["lprog-main", "lprog-main", "lprog-main", BINARY,
                    GRADIENT, SEED_REV, ORDER, "lprog-second",
                    "lprog-replay"],
    # statements of the caller's code that replay (dr_record_statement),
    # among the other kinds in replayed programs (last: the files before
    # are as they were)
    "stmt": ["stmt-replay", "stmt-replay", "stmt-replay", BINARY, GRADIENT,
             SEED_REV, ORDER],
    # sums of products (dr_fe_dot_rec) on the main tape, at order 1 and 2,
    # programs on and off (last: the files before are as they were)
    "dot": ["dot-main", "dot-main", "dot-main", "dot-jac", "dot-seeds",
            ORDER, ORDER, "prog-main"],
}

# argument bytes per operation (default 3 to 8): the other files'
# operations read more
ARGS = {MODES: (8, 30), ORDER: (6, 16), SECOND: (40, 140), LOOP: (20, 60),
        EXTERNAL: (16, 40), OTHER: (6, 16), STMT: (8, 30), SUMN: (4, 14)}


def small(rng):
    """a byte that decodes to a small double (k/16 - 5)"""
    return rng.randrange(40, 130)


def program(rng, family, length):
    out = bytearray()
    for _ in range(4):                       # a few inputs first
        out += bytes([INPUT, small(rng), rng.randrange(256)])
    if family in ("array", "linalg", "struct"):
        for _ in range(3):                   # and arrays
            out += bytes([ARR_CREATE, rng.choice([1, 3, 1, 3, 0])])
            out += bytes([rng.randrange(256)])
            out += bytes([rng.randrange(2, 5), rng.randrange(1, 4)])
            out += bytes(small(rng) for _ in range(16))
    ops = FAMILIES[family]
    while len(out) < length:
        op = rng.choice(ops)
        if op in NEW_OPS:
            out += rand_new_op(rng, op)
            continue
        out.append(op)
        # argument bytes: mostly small values and slot numbers
        lo, hi = ARGS.get(op, (3, 9))
        for _ in range(rng.randrange(lo, hi)):
            out.append(small(rng) if rng.random() < 0.6
                       else rng.randrange(256))
    return bytes(out)


def val(x):
    """the byte that decodes to x (a multiple of 1/16 in [-5, 5))"""
    b = int(round(x * 16 + 80))
    assert 0 <= b < 160 and (b - 80) / 16 == x
    return b


def inp(x, slot):
    return bytes([INPUT, val(x), slot])


def un(f, a, dst):
    return bytes([UNARY, f, a, dst])


def bi(f, a, b, dst):
    return bytes([BINARY, f, a, b, dst])


CONST0 = [0xe0, val(0)]     # an operand byte pair: the constant 0
U_SQRT, U_LOG, U_ABS, U_RELU = 1, 5, 16, 19
B_ADD, B_MUL, B_ATAN2, B_POW, B_MIN, B_MAX, B_HYPOT = 0, 2, 4, 5, 6, 7, 8

# the header's conventions at special points; the program's last result is
# differentiated with respect to every input when the program ends
SPECIAL = {
    "min-tie": inp(1, 0) + inp(1, 1) + bi(B_MIN, 0, 1, 2),
    "max-tie": inp(-2, 0) + inp(-2, 1) + bi(B_MAX, 1, 0, 2),
    "abs-0": inp(0, 0) + un(U_ABS, 0, 1),
    "relu-0": inp(0, 0) + un(U_RELU, 0, 1),
    "hypot-0": inp(0, 0) + inp(0, 1) + bi(B_HYPOT, 0, 1, 2),
    "pow-0-2": inp(0, 0) + inp(2, 1) + bi(B_POW, 0, 1, 2),
    "pow-0-0": inp(0, 0) + inp(0, 1) + bi(B_POW, 0, 1, 2),
    "pow-1-3": inp(1, 0) + inp(3, 1) + bi(B_POW, 0, 1, 2),
    "atan2-0": inp(0, 0) + inp(0, 1) + bi(B_ATAN2, 0, 1, 2),
    # sqrt at 0 (an infinite partial) multiplied by 0: not reached
    "sqrt-unreached": inp(0, 0) + un(U_SQRT, 0, 1)
        + bytes([BINARY, B_MUL, 1]) + bytes(CONST0) + bytes([2])
        + bi(B_ADD, 2, 0, 3),
    "log-unreached": inp(0, 0) + un(U_LOG, 0, 1)
        + bytes([BINARY, B_MUL, 1]) + bytes(CONST0) + bytes([2])
        + bi(B_ADD, 2, 0, 3),
    # expm1 at -40 is -1, so its partial v + 1 is 0 where exp(-40) is not:
    # twice (x = -10, expm1(40 expm1(4 x))), the engine's gradient 160
    # exp(-80) is the formula error of a zero partial times another
    "expm1-zero-partials": bytes([INPUT, 174, 0])          # -10
        + bytes([BINARY, B_MUL, 0, 0xe0, val(4), 1])
        + un(4, 1, 2)                                       # expm1
        + bytes([BINARY, B_MUL, 2, 0xe0, 197, 3])           # * 40
        + un(4, 3, 4),
}


def mat(slot, vals, rows=3, cols=3, active=True):
    """an input (or constant) matrix into array slot"""
    return bytes([ARR_CREATE, 3 if active else 2, slot, rows, cols]
                 + [val(v) for v in vals])


def arr_sum(arr, sslot):
    return bytes([ARR_REDUCE, 1, 0, sslot, arr])


def seeds(*sslots):
    out = bytes([SEED_REV, 0, len(sslots) - 1])
    for sl in sslots:
        out += bytes([sl, 0])               # weight 1
    return out


M1 = [0.5, -1, 2, 1.5, 0.25, -2, 3, -0.5, 1]
M2 = [1, 2, -1, 0.5, -1.5, 2.5, -3, 0.75, 1.25]
# a sweep that reaches an array, then one that does not: its adjoint reads
# zeros, and dr_arr_adjoint_ptr NULL (not the first sweep's buffer)
SPECIAL["array-adjoint-unreached"] = (
    mat(0, M1) + arr_sum(0, 1) + inp(0.5, 2) + seeds(1) + seeds(2))
# array structure: a block of a matrix, side-by-side concatenation and a
# product of transposes, each summed, all three seeded together; then the
# adjoint of every input element is compared
SPECIAL["array-blocks"] = (
    mat(0, M1) + mat(2, M2)
    + bytes([ARR_STRUCT, 2, 1, 0, 1, 2, 1, 2])      # a1 = a0[1:3, 1:3]
    + bytes([ARR_LINALG, 27, 3, 0, 2])              # a3 = a0^T a2^T
    + bytes([ARR_STRUCT, 10, 4, 2, 1, 1])           # a4 = [a1 a1]
    + arr_sum(1, 5) + arr_sum(3, 6) + arr_sum(4, 7)
    + seeds(5, 6, 7))



# ------------------------------------------------ the other files' operations
# Encoders that mirror the decoders of fuzz_modes.c, fuzz_second_order.c,
# fuzz_loops.c, fuzz_external.c and fuzz_tapes.c byte for byte; an operand
# is a slot number (< 32) or C(x), a constant.

W = {1.0: 0, -1.0: 1, 0.5: 2, 2.0: 3, -3.0: 4, 0.0: 5, 1e-3: 6, 7.0: 7}


def C(x):
    return bytes([0xe0, val(x)])


def C_(b):
    """a constant of the table of special values, by its byte"""
    return bytes([0xe0, b])


def opnd(a):
    return a if isinstance(a, bytes) else bytes([a])


def kbyte(kind, mod, bits=0, clear=0):
    """the least byte k with k % mod == kind, the bits set and clear"""
    for k in range(256):
        if k % mod == kind and k & bits == bits and not k & clear:
            return k
    raise ValueError((kind, mod, bits, clear))


U = {n: i for i, n in enumerate(
    "neg sqrt cbrt exp expm1 log log1p sin cos tan asin acos atan sinh cosh "
    "tanh abs erf sigmoid relu square asinh acosh atanh softplus".split())}
B = {n: i for i, n in enumerate(
    "add sub mul div atan2 pow min max hypot logbase".split())}


# -- forward and vector modes (op_modes): ys are slots, xs input slots
def modes(kind, ys, xs, ws=(), kk=0, bits=0, clear=0):
    k = kbyte(kind, 6, bits, clear)
    out = bytes([MODES, k, len(ys), len(xs)])
    for y in ys:
        out += bytes([0]) + opnd(y)
    out += bytes(xs)
    if kind in (2, 3):
        out += bytes([kk])
    return out + bytes(W[w] for w in ws)


def jvp(ys, xs, xdot, tangents=False):
    return modes(0, ys, xs, xdot, bits=0x20 if tangents else 0,
                 clear=0x40 if not tangents else 0x40)


def vjp(ys, xs, ybar):
    return modes(1, ys, xs, ybar, clear=0x40)


def jvp_vec(ys, xs, kk, X):
    return modes(2, ys, xs, X + [1.0] * (24 - len(X)), kk, clear=0x70)


def vjp_vec(ys, xs, kk, Y):
    return modes(3, ys, xs, Y + [1.0] * (12 - len(Y)), kk, clear=0x70)


def forward(seeds_, clear_arrays=True, vec=None, keep=False):
    """seeds_: ('x', slot, w) or ('a', array slot, w); vec: (kk, array slot,
    [w per direction], y slot, x slot, [xdot per direction]); keep: the
    array seeds stay for the sweeps that follow"""
    bits = ((0x10 if clear_arrays else 0) | (0x20 if vec else 0)
            | (0x80 if keep else 0))
    out = bytes([MODES, kbyte(4, 6, bits, 0xb0 & ~bits), len(seeds_)])
    for kind, slot, w in seeds_:
        out += bytes([(0 if kind == "x" else 2) | slot << 3, W[w]])
    if vec:
        kk, a, ws, y, x, xd = vec
        out += bytes([kk - 2, a] + [W[w] for w in ws] + [y, x]
                     + [W[w] for w in xd])
    return out


# -- the main tape's order (op_order)
def set_order(order, root=False):
    bits = (0x10 if order == 1 else 0) | (0x08 if root else 0)
    return bytes([ORDER, kbyte(0, 4, bits, 0xe0 | (0x18 & ~bits))])


def hess(y, xs, v=(1.0, -1.0, 0.5, 2.0), dense=True):
    k = kbyte(1, 4, 0x10 if dense else 0, 0x08 | (0 if dense else 0x10))
    return bytes([ORDER, k]) + opnd(y) + bytes([len(xs)] + list(xs)
                                               + [W[w] for w in v])


def tangent_main(y, seeds_, dst, root=True):
    k = kbyte(3, 4, 0x08 if root else 0, 0xf0 | (0 if root else 0x08))
    out = bytes([ORDER, k]) + opnd(y) + bytes([len(seeds_)])
    for slot, w in seeds_:
        out += bytes([slot, W[w]])
    return out + bytes([dst])


# -- a program on the second tape (op_second_order)
class Second:
    def __init__(self, k=0, pre=b""):
        self.k, self.pre, self.ops = k, pre, []

    def input(self, x, dst, via_inputs=False):
        self.ops.append(bytes([0, val(x), dst | (0x80 if via_inputs else 0)]))

    # rec: through a recorder (neg; add, sub, mul, div; record of one or
    # two arguments)
    def unary(self, f, a, dst, rec=False):
        fb = kbyte(U[f], len(U), 0x80) if rec else U[f]
        self.ops.append(bytes([2, fb]) + opnd(a) + bytes([dst]))

    def binary(self, f, a, b, dst, rec=False):
        fb = kbyte(B[f], len(B), 0x80) if rec else B[f]
        self.ops.append(bytes([4, fb]) + opnd(a) + opnd(b) + bytes([dst]))

    def powi(self, a, nidx, dst):
        self.ops.append(bytes([6]) + opnd(a) + bytes([nidx, dst]))

    def record(self, args, value, dst, nary=False, rec=False):
        k = len(args) | (8 if nary else 0)
        if rec:
            k = kbyte(len(args), 5, 0x80 | (8 if nary else 0),
                      0 if nary else 8)
        out = bytes([7, k])
        for a, p in args:
            out += opnd(a) + bytes([val(p)])
        self.ops.append(out + bytes([val(value), dst]))

    def mark(self, i):
        self.ops.append(bytes([8, i]))

    def tangent(self, y, seeds_, dst, frm=0):
        """seeds_: (input slot, weight) or (input slot, 'slot', active)"""
        out = bytes([9, len(seeds_) | frm << 2, y])
        for sd in seeds_:
            if sd[1] == "slot":
                out += bytes([sd[0], 0xc0 | sd[2]])
            else:
                out += bytes([sd[0], 0, W[sd[1]]])
        self.ops.append(out + bytes([dst]))

    def array(self, a, b, dst):
        self.ops.append(bytes([10]) + opnd(a) + opnd(b) + bytes([dst]))

    def order1(self, f, a, dst):
        self.ops.append(bytes([0x8d, 1, U[f]]) + opnd(a) + bytes([dst]))

    def sumn(self, xs, dst, idform=False):
        self.ops.append(bytes([12, len(xs) | (8 if idform else 0)])
                        + b"".join(opnd(x) for x in xs) + bytes([dst]))

    def prog(self, leaves, pg, dst, wide=False):
        """a statement with its program (prog() below) over operands: a
        flag of the sums' operation"""
        k = (len(leaves) - 1) | 0x40 | (0x80 if wide else 0)
        self.ops.append(bytes([12, k]) + b"".join(opnd(x) for x in leaves)
                        + pg + bytes([dst]))

    def misuse(self, slot, case, extra=b""):
        self.ops.append(bytes([11, slot, case]) + extra)

    def checks(self, y, xs, v=(1.0, -1.0, 0.5, 2.0, -3.0, 1.0),
               dense=True, tangent=True, w2=None):
        out = bytes([y, len(xs)]) + bytes(0xe0 if x is None else x
                                          for x in xs)
        out += bytes(W[w] for w in v)
        out += bytes([1 if dense else 0, 0 if tangent else 1])
        if tangent:
            n = len({x for x in xs if x is not None})
            out += bytes(W[w] for w in (w2 or [0.5, -1.0, 2.0, 1.0, 1.0,
                                               1.0])[:n])
        return out

    def bytes(self, *check_args, **check_kw):
        # k & 0x20: an external and a checkpointed loop of slot 0 first
        ext = bytes([0]) if self.k & 0x20 else b""
        return (bytes([SECOND, self.k]) + self.pre + bytes([len(self.ops)])
                + b"".join(self.ops) + ext
                + self.checks(*check_args, **check_kw))


# -- checkpointed loops (op_loop)
def loop_prog(n, ops, outmap):
    """ops: (kind, f, a, b, c, kc): kind 0 unary f(a), 1 binary f(a, b),
    2 f(a, c + kc k), 3 f(c + kc k, a)"""
    out = bytes([n - 1, len(ops) - 1])
    for kind, f, a, b, c, kc in ops:
        out += bytes([kind, f, a, b, val(c), 3 if kc else 0])
    return out + bytes(outmap)


def loop(prog, x0, steps, seg, snap, w, k=0):
    """on the main tape: x0 input slots, steps a byte < 24 (or 0x80 | the
    index of the table), seg a byte (0x80: chosen by the library), snap a
    byte (0xff: SIZE_MAX)"""
    return (bytes([LOOP, k]) + prog + bytes(x0) + bytes([steps, seg, snap])
            + bytes(W[x] for x in w))


# -- external functions (op_external)
def external(fn, xs, m, M, c, k=0):
    out = bytes([EXTERNAL, k, fn, len(xs), m - 1])
    for j in range(3):
        out += bytes(int(M[j][i] * 4 + 4) for i in range(4))
        out += bytes([int(c[j] * 8 + 4)])
    for x in xs:
        out += bytes([0]) + opnd(x)
    return out


# -- record once, replay (op_replay): inputs (kind 0 dr_input, 1 dr_inputs,
# 2 dr_input_range, 3 dr_record0), array inputs (kind bit 0: borrowed,
# bit 1: the _id form; a shape of SHAPES) and operations (kind 0 unary
# f(a), 1 binary f(a, b), 2 f(a, v), 3 powi, 4 select(c, a, b), 5
# comparison f of a, b, 6 discrete f of a, 7 given partials, 8 dr_sumn, 9
# an external, 10 a checkpointed loop, 11 an array operation: their
# parameters made by the functions below); the inputs given new values
# (those without a value always); the array inputs left alone (mode 0),
# given new values (1; a borrowed one new memory) or written in place (2)
def vbyte(x):
    """a value's byte: val(x), or a byte of the table of special values
    given as a string ('-0', '0.1')"""
    table = {"-0": 161, "0.1": 170, "1e16": 188, "1e300": 179}
    return table[x] if isinstance(x, str) else val(x)


# the shapes of fuzz_replay.c (SHAPES): vectors of 0, 1, 3, 4, 6, matrices
# 2x2, 2x3, 3x2
SHAPE = {0: 0, 1: 1, 3: 2, 4: 3, 6: 4, (2, 2): 5, (2, 3): 6, (3, 2): 7}
SHAPE_N = [0, 1, 3, 4, 6, 4, 6, 6]
# an operand of a sum, an external or a loop: a register, or CT(i), the
# constant CTAB[i] (0, 1, -0.5, 2, -0, 0.25, 3, -1.5)
def CT(i):
    return 0xe0 | i


def replay(inputs, ops, new, pick=0xff, k=0, misuse=None, arrays=(),
           anew=(), aflags=0):
    """arrays: (kind, shape, values); anew: (mode, values) for each"""
    out = bytes([REPLAY, k, len(inputs) - 1, len(ops) - 1,
                 len(arrays) | aflags << 2])
    for kind, x in inputs:
        out += bytes([kind, vbyte(x)])
    for kind, shape, vals in arrays:
        assert len(vals) == SHAPE_N[SHAPE[shape]]
        out += bytes([kind | SHAPE[shape] << 2]) + bytes(vbyte(x)
                                                         for x in vals)
    for op in ops:
        kind, f, a, b, c, v = op[:6]
        out += bytes([kind, f, a, b, c, val(v)]) + bytes(op[6:])
    out += bytes([pick]) + bytes(vbyte(x) for x in new)
    for mode, vals in anew:
        out += bytes([mode]) + (bytes(vbyte(x) for x in vals) if mode
                                else b"")
    return out + (bytes([misuse]) if misuse is not None else b"")


def sumn(terms, idform=False, lie=False, noval=False):
    """n-ary sum of registers and constants CT(i)"""
    e = len(terms) | (8 if idform else 0) | (0x10 if lie else 0) \
        | (0x20 if noval else 0)
    return (8, 0, 0, 0, 0, 0, e) + tuple(terms)


def ext(fn, xs, m, seed=0, primal=True, forward=True, lie=False,
        destroy=True):
    """an external: fn 0 linear, 1 sin, 2 exp, 3 products; xs: operands"""
    fl = (0 if primal else 1) | (0 if forward else 2) | (4 if lie else 0) \
        | (0 if destroy else 8)
    return (9, 0, 0, 0, 0, 0, fn | len(xs) << 2 | (m - 1) << 5, fl,
            seed) + tuple(xs)


def lstep(kind, f, a, b, c, kc=False):
    """a step operation: kind 0 f(a), 1 f(a, b), 2 f(a, c), 3 f(a) where
    a < c, else the constant c; kc: c + k/8"""
    return (kind | (0x10 if kc else 0), f, a, b, val(c))


def rloop(x0, steps, outmap, nsteps, seg=0, snaps=2, fail=None,
          lie=False, destroy=True):
    """a checkpointed loop over the operands x0; fail: None or the index
    of the threshold (1, 2, 4, 64) beyond which |x[0]| fails a step"""
    f = (0 if fail is None else 0x80 | fail) | (0x40 if lie else 0) \
        | (0 if destroy else 0x20)
    out = (10, f, 0, 0, 0, 0, len(x0) - 1 | (len(steps) - 1) << 2, nsteps,
           seg, snaps)
    for st in steps:
        out += st
    return out + tuple(outmap) + tuple(x0)


AO = {n: i for i, n in enumerate(
    "const from_reals map elem scale dot sum max lse softmax index mv "
    "matmul outer reshape slice concat gather bcast".split())}


def aop(name, a=0, b=0, c=0, v=0, p=0, p2=0, terms=(), idform=False):
    """an array operation on array registers a, b, scalar operand c (a
    register or CT(i)), constant v, parameters p, p2"""
    return (11, AO[name], a, b, c, v, p | (0x80 if idform else 0),
            p2) + tuple(terms)


MA = [[1, -0.5, 0.25, 0], [0.75, 1, -1, 0.5], [-0.25, 0.5, 1, -1]]
CA = [0.25, -0.5, 0]


# ------------------------------------------- hand-made: the other files'
# a few inputs and values on the main tape: inputs in slots 0..3, then
# s4 = sin s0, s5 = s4 s1, s6 = exp s2, s7 = s5 + s6, s8 = s7 / s3
U_SIN, U_EXP, B_DIV = 7, 3, 3
PRE = (inp(0.75, 0) + inp(-1.25, 1) + inp(0.5, 2) + inp(1.5, 3)
       + un(U_SIN, 0, 4) + bi(B_MUL, 4, 1, 5) + un(U_EXP, 2, 6)
       + bi(B_ADD, 5, 6, 7) + bi(B_DIV, 7, 3, 8))
XS = [0, 1, 2, 3]

SPECIAL["modes"] = (
    PRE + jvp([5, 7, 8], XS, [1.0, -1.0, 0.5, 2.0], tangents=True)
    + vjp([7, 8], XS, [1.0, -3.0])
    + jvp_vec([7, 8], XS, 3, [1.0, 0.5, -1.0, 2.0, 0.0, 1.0, -3.0, 1.0,
                              0.5, 7.0, 1.0, 2.0])
    + vjp_vec([5, 7, 8], XS, 3, [1.0, 0.5, -1.0, 2.0, 0.0, 1.0, -3.0, 1.0,
                                 0.5])
    + vjp([8], [0, 0, 1], [2.0])                    # an input twice
    + forward([("x", 0, 1.0), ("x", 2, -1.0), ("x", 0, 0.5)]))
SPECIAL["modes-arrays"] = (
    PRE + mat(0, M1) + arr_sum(0, 9) + bi(B_MUL, 9, 8, 10)
    + forward([("a", 0, 1.0), ("x", 1, 0.5)], clear_arrays=True,
              vec=(2, 0, [1.0, -1.0], 10, 1, [0.5, 2.0]))
    + jvp([10, 9], XS, [1.0, 2.0, -1.0, 0.5])
    + vjp_vec([10, 9], XS, 2, [1.0, -1.0, 0.5, 2.0])
    # no outputs, no inputs (NULL arrays) on a tape with an array node
    + vjp_vec([], XS, 3, []) + vjp_vec([10, 9], [], 3, [1.0] * 6)
    + jvp_vec([], XS, 2, []) + jvp_vec([10], [], 2, [])
    # seeds left on the array: dr_jvp takes them, a Jacobian must not
    + forward([("a", 0, 2.0)], keep=True) + jvp([10, 9], [1], [1.0])
    + bytes([GRADIENT, 1, 1, 1, 0, 10, 0, 9, 1]))
# NULL arrays, sizes that overflow, and no outputs or inputs at any k
SPECIAL["modes-misuse"] = (
    PRE + bytes([MODES, kbyte(5, 6, 0, 0x40), MODES, kbyte(5, 6, 0x40)])
    + mat(0, M1) + bytes([MODES, kbyte(5, 6, 0x40)]))

# second order: every rule, in a function whose Hessian needs its second
# partials: f(a b) a, f(a, b) a
UVAL = {"acosh": (1.5, 2.0), "log1p": (0.75, 0.5)}
for f in U:
    a, b = UVAL.get(f, (0.75, 0.5))
    P = Second()
    P.input(a, 0)
    P.input(b, 1)
    P.binary("mul", 0, 1, 2)
    P.unary(f, 2, 3)
    P.binary("mul", 3, 0, 4)
    SPECIAL["second-" + f] = P.bytes(4, [0, 1], dense=U[f] % 2 == 0)
BVAL = {"pow": (1.5, 1.25), "logbase": (2.5, 1.5)}
for f in B:
    a, b = BVAL.get(f, (0.75, 1.25))
    P = Second()
    P.input(a, 0)
    P.input(b, 1)
    P.binary(f, 0, 1, 2)
    P.binary("mul", 2, 0, 3)
    SPECIAL["second-" + f] = P.bytes(3, [0, 1], dense=B[f] % 2 == 0)
P = Second()                                  # extreme exponents at +-1
P.input(1.0, 0)
P.input(-1.0, 1)
P.powi(0, 11, 2)                              # x^INT_MIN
P.powi(1, 10, 3)                              # x^INT_MAX
P.powi(0, 2, 4)                               # x^-1
P.binary("add", 2, 3, 5)
P.binary("add", 5, 4, 6)
SPECIAL["second-powi"] = P.bytes(6, [0, 1, 0])
P = Second()                                  # linear nodes, squared
P.input(0.75, 0)
P.input(-0.5, 1)
P.input(2.0, 2)
P.record([(0, 2.0), (1, -0.5)], 3.0, 3)
P.record([(0, 1.5), (1, 0.25), (2, -1.0)], 0.5, 4, nary=True)
P.binary("mul", 3, 4, 5)
SPECIAL["second-record"] = P.bytes(5, [0, 1, 2])
# the same through recorders: a Hessian of a recorder's operations,
# constants on either side, nodes of given partials (slots below 8)
P = Second()
P.input(0.75, 0)
P.input(-0.5, 1)
P.input(2.0, 2)
P.binary("mul", 0, 1, 3, rec=True)
P.binary("div", 3, 2, 4, rec=True)
P.binary("sub", C(2.0), 4, 5, rec=True)
P.binary("add", 5, 0, 5, rec=True)
P.unary("neg", 5, 6, rec=True)
P.binary("div", C(-3.0), 6, 6, rec=True)
P.record([(0, 2.0), (1, -0.5)], 3.0, 7, rec=True)
P.record([(2, 0.25)], 0.5, 4, rec=True)
P.binary("mul", 7, 4, 7, rec=True)
P.binary("mul", 6, 7, 7, rec=True)
P.binary("mul", 7, 6, 5)
SPECIAL["second-recorder"] = P.bytes(5, [0, 1, 2])
SPECIAL["second-recorder-hvp"] = P.bytes(7, [0, 2, 1], dense=False)
P = Second()                                  # n-ary sums, squared
P.input(0.75, 0)
P.input(-0.5, 1)
P.input(2.0, 2)
P.sumn([0, 1, C(1.5), 0], 3)
P.sumn([2, 1, 2, 3, C(-0.5), 0], 4, idform=True)
P.binary("mul", 3, 4, 5)
P.sumn([5, 3], 6)
P.unary("sin", 6, 7)
SPECIAL["second-sumn"] = P.bytes(7, [0, 1, 2])
SPECIAL["second-sumn-hvp"] = P.bytes(5, [0, 2, 1], dense=False)
P = Second()                                  # sums that round by order
P.input(0.75, 0)
P.ops.append(bytes([0, 188, 1 | 0x80]))       # 1e16, through dr_inputs
P.sumn([0, 1, C(1), C(1)], 2)
P.sumn([C(1), C(1), 1, 0], 3, idform=True)
P.binary("sub", 2, 3, 4)
P.binary("mul", 4, 0, 5)
P.unary("sin", 5, 6)
SPECIAL["second-sumn-order"] = P.bytes(6, [0, 1])
P = Second()                                  # an input given twice
P.input(0.75, 0)
P.input(-0.5, 1)
P.binary("mul", 0, 0, 2)
P.unary("sin", 2, 3)
P.binary("mul", 3, 1, 4)
SPECIAL["second-repeated"] = P.bytes(4, [0, 1, 0], dense=True)
SPECIAL["second-repeated-hvp"] = P.bytes(4, [0, 0, 1], dense=False)
P = Second()                                  # nested: d/dz sin(x z) x
P.input(0.75, 0)
P.input(-1.5, 1)
P.mark(0)
P.input(0.5, 2)
P.binary("mul", 0, 2, 3)
P.unary("sin", 3, 4)
P.binary("mul", 4, 1, 5)
P.tangent(5, [(2, 1.0)], 6, frm=1)            # from the mark
P.tangent(5, [(2, "slot", 1), (0, 0.5)], 7)   # an active seed
P.binary("mul", 6, 7, 3)
SPECIAL["second-nested"] = P.bytes(3, [0, 1, 2])
P = Second(k=0x41 | 2 | 4 | 0x10 | 0x20, pre=bytes([val(0.5), 3]))
P.input(0.75, 0)                              # refusals, a job of order 2
P.input(1.25, 1)
P.binary("hypot", 0, 1, 2)
P.array(0, 2, 3)                              # no rule: DR_ENOTSUP after
P.unary("exp", 3, 4)
P.order1("cos", 1, 5)                         # recorded at order 1
P.misuse(2, 0)
P.misuse(2, 1, bytes([0]))
P.misuse(2, 2)
P.misuse(2, 3, bytes([0]))
P.misuse(2, 4)
P.misuse(2, 5, bytes([0]))
SPECIAL["second-refusals"] = P.bytes(2, [0, 1])
SPECIAL["second-refusals-after"] = P.bytes(4, [0, 1])
# no inputs on a tape with a node of no rule: nothing to compute, DR_OK
SPECIAL["second-no-inputs-hvp"] = P.bytes(4, [], dense=False)
SPECIAL["second-no-inputs-hessian"] = P.bytes(4, [], dense=True)

# the main tape's order: everything at order 2, then some at order 1
SPECIAL["order"] = (
    set_order(2, root=True) + PRE + hess(8, XS)
    + hess(7, [0, 2, 2, 3], dense=False)
    + tangent_main(8, [(0, 1.0), (1, 0.5)], 9) + bi(B_MUL, 9, 8, 10)
    + hess(10, XS) + set_order(1, root=True) + un(U_SIN, 10, 11)
    + hess(8, XS) + hess(11, XS) + set_order(2, root=True)
    + tangent_main(11, [(2, 2.0)], 12) + tangent_main(8, [(3, 1.0)], 13))
SPECIAL["order-fork"] = (
    PRE + bytes([FORK, 0, 0]) + set_order(2) + inp(0.25, 9)
    + un(U_SIN, 9, 10) + bi(B_MUL, 10, 9, 11)
    + tangent_main(11, [(9, 1.0)], 12, root=False)
    + bytes([FORK, 2]) + set_order(2, root=True) + hess(8, XS)
    + hess(12, XS))

# checkpointed loops: state (s0, s1) -> (s0 + 0.25 + k / 8,
# sin(s0 s1)), against the loop unrolled
LP = loop_prog(2, [(1, B_MUL, 0, 1, 0, False), (0, U_SIN, 2, 0, 0, False),
                   (2, B_ADD, 0, 0, 0.25, True)], [4, 3])
LP3 = loop_prog(3, [(1, B_MUL, 0, 2, 0, False), (3, B_DIV, 1, 0, 1.5, False),
                    (0, U_EXP, 4, 0, 0, False), (1, B_HYPOT, 3, 5, 0, False)],
                [5, 2, 6])


def steps_byte(idx):
    """a byte choosing entry idx of the loop's table of step counts"""
    return next(b for b in range(0x80, 0x100) if b % 10 == idx)


SPECIAL["loop"] = (
    PRE + loop(LP, [0, 1], steps_byte(7), 3, 2, [1.0, -1.0])   # 40 steps
    + loop(LP, [2, 3], 13, 0x80, 0xff, [0.5, 2.0])            # 13, chosen
    + loop(LP3, [0, 1, 2], steps_byte(8), 1, 0, [1.0, 0.5, -1.0])  # 100
    + loop(LP3, [3, 1, 0], 5, 7, 8, [2.0, 1.0, 1.0])
    + jvp([9, 10], XS, [1.0, -1.0, 0.5, 2.0]) + bytes([GRADIENT, 1, 3, 6])
    + bytes([0, 9, 0, 10, 0, 11]) + bytes([0, 1, 2, 3, 4, 5]))
SPECIAL["loop-misuse"] = (
    PRE + bytes([LOOP, 0x15]) + LP + bytes([0, 1, 5, 1, 0, 2])  # capture
    + bytes([LOOP, 0x15]) + LP + bytes([0, 1, 1, 0, 0, 2])    # (one step)
    + bytes([LOOP, 0x05]) + LP + bytes([0, 1, 9, 0, 3, 1, 2])  # a failure
    + bytes([LOOP, 0x06]) + LP + bytes([val(0.5), val(1.0), 9, 2, 1, 5, 0, 0])
    + bytes([LOOP, 0x06]) + LP + bytes([val(0.5), val(1.0), 9, 2, 1, 3, 1, 1])
    + b"".join(bytes([LOOP, 7, 3, i, 2 + j]) for i in (9, 10, 11, 12)
               for j in (0, 1, 3)))

# external functions of every kind; one without a forward rule
MX = [[1, -0.5, 0.25, 0.75], [0.75, 1, -1, 0.5], [-0.25, 0.5, 1, -1]]
SPECIAL["external"] = (
    PRE + external(1, [0, 1, 2], 2, MX, CA, k=0x90)        # sin(M x + c)
    + bi(B_MUL, 9, 16, 24)
    + external(2, [7, 3, 24], 3, MX, CA, k=0xa0)            # products
    + external(3, [8, 0], 2, MX, CA, k=0xb0)                # exp (uses y)
    + external(0, [], 1, MX, CA, k=0xc0)                    # no inputs
    + bi(B_ADD, 10, 11, 25) + bi(B_MUL, 25, 27, 26) + bi(B_ADD, 26, 28, 29)
    + seeds(29, 24) + jvp([29, 24], XS, [1.0, -1.0, 0.5, 2.0])
    + vjp_vec([29, 24], XS, 2, [1.0, 0.5, -1.0, 2.0])
    + bytes([GRADIENT, 1, 2, 4, 0, 29, 0, 24, 0, 1, 2, 3]))
SPECIAL["external-nofwd"] = (
    PRE + external(1, [0, 1], 2, MX, CA, k=0x91) + bi(B_MUL, 9, 16, 24)
    + jvp([24], XS, [1.0, -1.0, 0.5, 2.0]) + vjp([24], XS, [1.0])
    + bytes([FORK, 0, 1]) + external(2, [0, 1], 2, MX, CA, k=0xd0)
    + bytes([FORK, 1]) + external(0, [2, 3], 1, MX, CA, k=0xe2)
    + bytes([FORK, 2]) + bi(B_MUL, 13, 22, 30)
    + b"".join(bytes([EXTERNAL, 0x0c, 1, 2, 0]) + bytes([4] * 15)
               + bytes([0, 0, 0, 1, c]) for c in range(7)))

# ids of the second tape on the main tape's operations, and back
SPECIAL["tapes"] = (
    PRE + bytes([OTHER, 0, 0, 0, val(0.5), U_SIN, 20])
    + bytes([OTHER, 1, 1, 0, val(0.5), 4, B_MUL, 21])
    + b"".join(bytes([OTHER, 2 | s << 4, 2, 0, val(1)]) for s in range(3))
    + b"".join(bytes([OTHER, 3, 0, 0, val(1), 7, k2]) for k2 in range(16))
    + bytes([OTHER, 5, 0, 0, val(1), 5, 0])
    + bytes([OTHER, 5, 1, 0, val(1), 5, 1])
    + b"".join(bytes([OTHER, 6, 0, 0, val(1), k2])
               + (bytes([4]) if k2 % 4 == 3 else b"") for k2 in range(4))
    + bytes([OTHER, 7, 0, 0, val(1), 6]))


# record once, replay: guards that hold and one that flips, inputs of every
# kind, nodes that do not replay, a tape of order 1, the misuse
RIN = [(0, 0.75), (1, -1.5), (2, 0.5), (3, 2.0)]
ROPS = [(1, B_MUL, 0, 1, 0, 0), (0, U_SIN, 4, 0, 0, 0),
        (5, 0, 5, 2, 0, 0),                    # sin(x0 x1) < x2: a guard
        (4, 0, 0, 3, 2, 0),                    # select(x2, x0, x3)
        (6, 0, 7, 0, 0, 0),                    # floor, added
        (6, 4, 4, 0, 0, 0),                    # isnan
        (3, 3, 8, 0, 0, 0), (2, B_HYPOT, 9, 0, 0, 1.5),
        (1, B_ATAN2, 10, 6, 0, 0)]
SPECIAL["replay"] = (
    replay(RIN, ROPS, [0.8125, -1.25, 0.5625, 2.25])
    + replay(RIN, ROPS, [0.75, -1.5, -3.0, 2.0])      # the guard flips
    + replay(RIN, ROPS, [1.75, 2.5, 0.5, 2.0])        # floor flips
    + replay(RIN, ROPS[:4] + [(7, 0, 5, 0, 0, 0)], [1, 2, 3, 4], k=0x10)
    + replay(RIN, ROPS, [1, 2, 3, 4], k=0x0f)
    + b"".join(replay(RIN, ROPS, [1, 1, 1, 1], k=0xe0, misuse=m)
               for m in range(5)))
# a select whose condition is an input without a value (left out: it
# keeps the value of its first use), the guard a < b flipping or not
RSEL = [(2, 0.875), (0, 1.0), (0, 2.0)]
RSELOPS = [(4, 0, 1, 2, 0, 0), (5, 0, 1, 2, 0, 0)]
SPECIAL["replay-select"] = (
    replay(RSEL, RSELOPS, [0.875, 3.0, 2.0], pick=2, k=0xe0, misuse=3)
    + replay(RSEL, RSELOPS, [0.875, 1.25, 2.0], pick=2, k=0xe0, misuse=3))
# x + floor(x) from 0.1 replayed at -0 (floor -0 == the recorded +0)
SPECIAL["replay-zero"] = replay([(0, "0.1")], [(6, 0, 0, 0, 0, 0)], ["-0"])

# arrays: a copied matrix a0 and a borrowed vector a1 (registers r0, r1
# scalar inputs); every array operation's kernel, replayed with new values
# (a borrowed input new memory), written in place, left alone; a guard on
# an array's value that flips (with borrowed memory written in place:
# written back); the misuse of dr_replay_arrays
MAT = [0.5, -1, 1.5, 0.25, 2, -0.75]
VEC = [1, -0.5, 0.25]
RAIN2 = [(0, 0.75), (1, -0.5)]
RARR = [(0, (2, 3), MAT), (1, 3, VEC)]
MAT1 = [0.5625, -1, 1.5, 0.25, 1.875, -0.75]
VEC1 = [1.0625, -0.5, 0.3125]
RARROPS = [aop("mv", 0, 1), aop("map", 2, p=5), aop("scale", 3, c=0),
           aop("dot", 4, 3), aop("softmax", 0), aop("index", 5, p=1,
                                                    p2=0x12),
           (1, B_MUL, 2, 3, 0, 0), (5, 0, 4, 1, 0, 0),     # r4 < r1
           aop("sum", 0, p=1), aop("dot", 6, 2), (1, B_ADD, 5, 4, 0, 0),
           (6, 5, 6, 0, 0, 0)]                             # isinf r6
SPECIAL["replay-arrays"] = (
    replay(RAIN2, RARROPS, [0.8125, -0.5], pick=1, arrays=RARR,
           anew=[(1, MAT1), (1, VEC1)])
    + replay(RAIN2, RARROPS, [0.75, -0.4375], pick=2, arrays=RARR,
             anew=[(0, []), (2, VEC1)], aflags=1)
    + replay(RAIN2, RARROPS, [0.6875, -0.5], pick=1, arrays=RARR,
             anew=[(0, []), (0, [])], aflags=3)
    + replay(RAIN2, RARROPS, [0.75, 4], pick=3, arrays=RARR,
             anew=[(1, MAT1), (2, [-3, 4, 2])])           # a flip
    + replay(RAIN2, RARROPS, [0.75, 4], pick=3, arrays=RARR,
             anew=[(1, MAT1), (1, [-3, 4, 2])])           # new memory
    + replay(RAIN2, RARROPS, [0.75, -0.5], pick=0, arrays=RARR,
             anew=[(1, [4, 4, 4, -4, -4, -4]), (2, [-3, 4, 2])])
    + b"".join(replay(RAIN2, RARROPS, [0.75, -0.5], pick=3, k=0xe0,
                      misuse=m, arrays=RARR, anew=[(1, MAT1), (1, VEC1)])
               for m in range(5, 10))
    + replay(RAIN2, RARROPS, [0.75, -0.5], k=0xe0, misuse=7, arrays=RARR,
             anew=[(0, []), (2, VEC1)]))
# every array operation, as handles and as ids
RAOPS = [
    [aop("const", v=0.5, p=7 | 0x40), aop("from_reals", p=3,
                                          terms=(0, 1, CT(1))),
     aop("map", 1, p=7), aop("elem", 3, 4, p=2), aop("scale", 5, c=0),
     aop("dot", 6, 1), aop("sum", 0), aop("max", 0), aop("lse", 0, p=1),
     aop("softmax", 0, p=1), aop("index", 8, p=1, p2=0x21),
     aop("mv", 8, 1)],
    [aop("matmul", 0, 0, p=1), aop("outer", 1, 1),
     aop("reshape", 1, p2=3), aop("slice", 0, p=0x12, p2=0x09),
     aop("concat", 1, 1), aop("gather", 6, p=1, p2=2),
     aop("gather", 0, p2=1), aop("bcast", 0, 1), aop("bcast", 1, p=1, p2=2),
     aop("sum", 9, p=2), aop("sum", 10, p=1), aop("dot", 12, 12)],
    [aop("mv", 1, 0), aop("mv", 2, 0), aop("mv", 0, 0), aop("bcast", 0, 2),
     aop("bcast", 3, p2=2), aop("elem", 6, 4, p=3), aop("softmax", 7),
     aop("lse", 8), aop("slice", 3, p=1, p2=0x09), aop("reshape", 0),
     aop("index", 10, p2=4), (1, B_MUL, 2, 3, 0, 0)],
]
for i, ops in enumerate(RAOPS):
    for idform in (False, True):
        if idform:
            ops = [op[:6] + (op[6] | 0x80,) + op[7:] if op[0] == 11 else op
                   for op in ops]
        SPECIAL["replay-arrayops-%d%s" % (i, "-id" if idform else "")] = (
            replay(RAIN2, ops, [0.8125, -0.4375], pick=3, arrays=RARR,
                   anew=[(1, MAT1), (2, VEC1)], aflags=1)
            + replay(RAIN2, ops, [0.6875, -0.5], pick=1, arrays=RARR,
                     anew=[(0, []), (1, VEC1)]))
# where a maximum was moves at the new values (max, logsumexp, softmax
# keep it for their rules): the matrix's from 2 (element 4) to 2.5
# (element 0), the vector's from 1 (element 0) to 1.25 (element 1)
RMAXOPS = [aop("max", 0), aop("max", 1), (1, B_MUL, 2, 3, 0, 0),   # r4
           aop("lse", 0, p=1), aop("softmax", 1), aop("dot", 3, 1),  # r5
           aop("sum", 2), (1, B_MUL, 4, 5, 0, 0), (1, B_MUL, 7, 6, 0, 0),
           (1, B_MUL, 8, 0, 0, 0)]
MATM = [2.5, -1, 1.5, 0.25, 2, -0.75]
VECM = [0.5, 1.25, 0.25]
SPECIAL["replay-arrays-max"] = (
    replay(RAIN2, RMAXOPS, [0.8125, -0.5], pick=1, arrays=RARR,
           anew=[(1, MATM), (2, VECM)])
    + replay(RAIN2, RMAXOPS, [0.75, -0.5], pick=0, arrays=RARR,
             anew=[(0, []), (1, VECM)])
    + replay(RAIN2, [op[:6] + (op[6] | 0x80,) + op[7:] if op[0] == 11
                     else op for op in RMAXOPS], [0.75, -0.4375], pick=2,
             arrays=RARR, anew=[(1, MATM), (0, [])]))
# externals with a primal (an input without a value first used by one),
# without a forward rule, without a primal, given a value other than
# their input node's
REXT = [(0, 0.75), (0, -0.5), (2, 0.25)]
REXTOPS = [ext(1, [0, 1, CT(1)], 2, seed=5), ext(2, [3, 2], 1, seed=11),
           ext(3, [4, 5, 0], 3, seed=7), ext(0, [], 1, seed=3),
           (1, B_ADD, 8, 9, 0, 0), (5, 0, 10, 1, 0, 0),    # r10 < r1
           (1, B_MUL, 10, 7, 0, 0), (6, 3, 11, 0, 0, 0)]   # rint
SPECIAL["replay-external"] = (
    replay(REXT, REXTOPS, [0.8125, -0.5, 0.3125], pick=1)
    + replay(REXT, REXTOPS, [0.75, -0.4375, 0.25], pick=2)
    + replay(REXT, REXTOPS, [-3.0, 4.0, -2.0], pick=3)     # flips
    + replay(REXT, REXTOPS[:4] + [ext(1, [9, 6], 1, forward=False,
                                      destroy=False)],
             [0.8125, -0.5, 0.3125], pick=1)
    + replay(REXT, REXTOPS[:3] + [ext(1, [6, 0], 1, primal=False)],
             [0.8125, -0.5, 0.3125], pick=1, k=0x10)
    + replay(REXT, REXTOPS[:3] + [ext(1, [6, 0], 1, lie=True)],
             [0.8125, -0.5, 0.3125], pick=1, k=0x10))
# checkpointed loops: (s0, s1) -> (s0 + 0.25 + k/8, sin(s0 s1)); a branch
# in the step that makes an output constant at the new point; a step that
# fails there, or where the loop was recorded
LOOP1 = rloop([0, 1], [lstep(1, B_MUL, 0, 1, 0), lstep(0, U_SIN, 2, 0, 0),
                       lstep(2, B_ADD, 0, 0, 0.25, kc=True)], [4, 3], 10,
              seg=3, snaps=2)
LOOP2 = rloop([3, 2], [lstep(3, U_SIN, 1, 0, 1.5), lstep(1, B_MUL, 0, 2, 0)],
              [3, 2], 3, seg=0, snaps=0)
LOOP3 = rloop([0], [lstep(2, B_MUL, 0, 0, 1.25)], [1], 4, seg=1, snaps=1,
              fail=1, destroy=False)
RLOOP = [(0, 0.5), (0, -0.25), (1, 1.0)]
RLOOPOPS = [LOOP1, LOOP2, LOOP3, (1, B_ADD, 5, 6, 0, 0),
            (1, B_MUL, 7, 4, 0, 0), (5, 3, 8, 1, 0, 0)]    # r8 >= r1
SPECIAL["replay-loop"] = (
    replay(RLOOP, RLOOPOPS, [0.5625, -0.25, 1.0625])
    + replay(RLOOP, RLOOPOPS, [0.5, -0.3125, 1.0], pick=2)
    + replay(RLOOP, RLOOPOPS, [0.5, -0.25, 2.0], pick=4)   # constant
    + replay(RLOOP, RLOOPOPS, [1.5, -0.25, 1.0], pick=1)   # step fails
    + replay([(0, 3.0), (0, -0.25), (1, 1.0)], RLOOPOPS,
             [0.5, -0.25, 1.0], pick=1)                    # failed before
    + replay(RLOOP, [rloop([0, 1, 2], [lstep(1, B_HYPOT, 0, 2, 0)],
                           [3, 0, 1], 0)] + RLOOPOPS[3:],
             [0.5625, -0.25, 1.0625])                      # no steps
    + replay(RLOOP, [rloop([0, 1], [lstep(1, B_MUL, 0, 1, 0)], [2, 1], 6,
                           lie=True)], [0.5625, -0.25, 1.0], k=0x10))
# a loop whose step makes its output a constant with a value that depends
# on the input (x < 0.5 + k/8 ? exp x : the constant 0.5 + k/8, 4 steps):
# 2.117 (exp 0.75) from -3 and from -1, 0.875 from 0.375: another program
RLOOPC = [rloop([0], [lstep(3, U["exp"], 0, 0, 0.5, kc=True)], [1], 4,
                seg=1, snaps=1), (1, B_ADD, 1, 0, 0, 0)]
SPECIAL["replay-loop-constant"] = (
    replay([(0, -3.0)], RLOOPC, [-1.0], pick=1)
    + replay([(0, -3.0)], RLOOPC, [0.375], pick=1))
# a guard that flips before a loop: the replay goes on along the recorded
# path (x + trunc 1.3125 = x + 1: -2.3125 at -3.3125, below the step's
# threshold 4) where the fresh recording's loop fails (x + trunc x =
# -6.3125): DR_ERETAPE, or the loop's status
SPECIAL["replay-flip-loop"] = replay(
    [(0, 1.3125)], [(6, 2, 0, 0, 0, 0),
                    rloop([1], [lstep(0, U["sin"], 0, 0, 0)], [1], 4,
                          seg=4, snaps=0, fail=2),
                    (1, B_MUL, 2, 0, 0, 0)], [-3.3125], pick=1)
# a term of 1e300 given its value + 1 (the same value: no lie, the sum
# replays), and the same program afresh at -2 (where + 1 would be one)
SPECIAL["replay-lie-absorbed"] = replay(
    [(0, "1e300"), (0, 0.5)], [sumn([0], lie=True), (1, B_MUL, 2, 1, 0, 0)],
    [-2.0, 0.5], pick=1, k=0x10)
# n-ary sums: constants, a term twice, an input without a value first used
# by one, the _id form (with and without the value), no terms, a term
# given a value other than its node's
RSUM = [(0, 0.75), (2, -1.5), (3, 0.5)]
RSUMOPS = [sumn([0, 1, CT(1), 0]), sumn([]), sumn([CT(2), CT(4)], True),
           sumn([3, 2, 1, CT(3), 0, 3], True, noval=True),
           (1, B_MUL, 6, 3, 0, 0), (5, 2, 7, 5, 0, 0),      # r7 > r5
           sumn([7, 3]), (6, 4, 8, 0, 0, 0),                # isnan r8
           (6, 1, 5, 0, 0, 0)]                              # ceil r5
# sums that round by their order (1e16 + 1 + 1), replayed at 1e16, 3
RSUMO = [(0, "1e16"), (1, 1.0)]
RSUMOOPS = [sumn([0, 1, 1]), sumn([1, 1, 0], True), sumn([0, CT(1), CT(1),
                                                            1]),
            (1, B["sub"], 2, 3, 0, 0), sumn([4, 5, CT(2)], True, noval=True)]
SPECIAL["replay-sumn-order"] = replay(RSUMO, RSUMOOPS, ["1e16", 3.0],
                                      pick=3)
SPECIAL["replay-sumn"] = (
    replay(RSUM, RSUMOPS, [0.8125, -1.5, 0.5], pick=1)
    + replay(RSUM, RSUMOPS, [0.75, -1.4375, 0.5625], pick=0)
    + replay(RSUM, RSUMOPS, [0.125, -1.5, 4.0], pick=1)     # flips
    + replay(RSUM, [sumn([0, 2, CT(1)], lie=True)] + RSUMOPS[1:4],
             [0.8125, -1.5, 0.5], pick=1, k=0x10))


# -- statements (op_statement): expressions by a stack machine (steps:
# leaf, const, add, sub, mul, div, neg, scale, fn), folded by adds, as one
# node; long sums of expressions and products
def ex_leaf(a):
    return bytes([0]) + opnd(a)


def ex_const(x):
    return bytes([1, val(x)])


EXOP = {"add": 2, "sub": 3, "mul": 4, "div": 5, "neg": 6}


def ex(name):
    return bytes([EXOP[name]])


def ex_scale(c):
    return bytes([7, val(c)])


def ex_fn(f):
    return bytes([8, U[f]])


def st_expr(steps, dst):
    return bytes([(len(steps) - 1) << 1]) + b"".join(steps) + bytes([dst])


def st_sum(terms, cap, dst):
    """terms: ('mul', a, b) or ('expr', [steps])"""
    out = bytes([1 | cap << 1, len(terms) - 1])
    for t in terms:
        if t[0] == "mul":
            out += bytes([1]) + opnd(t[1]) + opnd(t[2])
        else:
            out += bytes([(len(t[1]) - 1) << 1]) + b"".join(t[1])
    return out + bytes([dst])


def statements(*sts, bad=False):
    return bytes([STMT, len(sts) - 1 | (0x80 if bad else 0)]) + b"".join(sts)


# -- n-ary sums on the main tape (op_sumn)
def sumn_main(xs, dst, idform=False, noval=False, misuse=None):
    k = len(xs) | (8 if idform else 0) | (0x10 if noval else 0)
    if misuse is not None:
        k |= 0xc0
    # (a term: a flag byte, then the operand; BAD(...): an id not on the
    # tape, as bad_operand reads it)
    out = bytes([SUMN, k]) + b"".join(x[1] if isinstance(x, tuple)
                                      else bytes([0]) + opnd(x) for x in xs)
    return out + bytes([dst]) + (bytes([misuse]) if misuse is not None
                                 else b"")


BAD = ("bad", bytes([0x3f, val(1), 1, 5]))          # the id -7
LEAVES = [ex_leaf(i % 4) for i in range(9)]


def jac(ys, xs):
    """dr_jacobian of the slots ys w.r.t. the input slots xs"""
    return (bytes([GRADIENT, 1, len(ys) - 1, len(xs)])
            + b"".join(bytes([0, y]) for y in ys) + bytes(xs))

SPECIAL["statements"] = (
    PRE
    # v' = v + dt (-0.5 p - 0.2 v): one node over v and p (v merged)
    + statements(
        st_expr([ex_leaf(1), ex_scale(-0.5), ex_leaf(0), ex_scale(-0.1875),
                 ex("add"), ex_scale(0.125), ex_leaf(0), ex("add")], 9),
        # every operation: (s0 s1 - s2) / s3, sin, -, exp
        st_expr([ex_leaf(0), ex_leaf(1), ex("mul"), ex_leaf(2), ex("sub"),
                 ex_leaf(3), ex("div"), ex_fn("sin"), ex("neg"),
                 ex_fn("exp")], 10),
        # four arguments (an n-ary node), a constant dr_real, an input
        # twice
        st_expr([ex_leaf(4), ex_leaf(5), ex_leaf(C(0.5)), ex_leaf(6),
                 ex_leaf(7), ex_leaf(4), ex_const(2), ex("mul")], 11))
    + statements(
        st_expr([ex_const(0.5), ex_const(2), ex("mul")], 12),   # constants
        st_expr([ex_leaf(8), ex("neg"), ex_fn("tanh"), ex_scale(2),
                 ex_leaf(9), ex("div"), ex_fn("sqrt")], 13))
    + jac([11, 13], XS)
    + seeds(9, 10, 11)
    # too many terms: DR_ERANGE, a constant
    + statements(st_expr(LEAVES + [ex_leaf(C(1))], 14)))
SPECIAL["statements-sum"] = (
    PRE
    + statements(
        st_sum([("mul", 0, 1), ("mul", 2, 3),
                ("expr", [ex_leaf(4), ex_scale(2), ex_fn("cos")]),
                ("mul", 0, 0)], 8, 9),
        st_sum([("mul", 5, C(2)), ("expr", [ex_const(1)]),
                ("mul", 6, 7)], 4, 10))
    + jac([9, 10], XS)
    + seeds(9, 10)
    + statements(st_sum([("mul", 0, 1), ("mul", 2, 3)], 3, 11)))  # ERANGE
# through the recorder that is open, between its own operations
SPECIAL["statements-rec"] = (
    PRE + bytes([REC, 0])
    + bytes([REC, 5, 0, 1, 9])                          # rec_mul
    + statements(st_expr([ex_leaf(9), ex_leaf(2), ex("add"), ex_leaf(3),
                          ex("mul")], 10),
                 st_sum([("mul", 10, 9), ("expr", [ex_leaf(1)])], 4, 11))
    + bytes([REC, 3, 11, 10, 12])                       # rec_add
    + un(U_SIN, 12, 13)                                 # a tape call
    + statements(st_expr([ex_leaf(13), ex_leaf(12), ex("div")], 14))
    + bytes([REC, 1]) + seeds(14, 11))
# order 2: a recorder is refused, its statements are constants; sums of
# order 2 take part in Hessians
SPECIAL["statements-order2"] = (
    set_order(2, root=True) + PRE
    + statements(st_expr([ex_leaf(0), ex_leaf(1), ex("mul")], 9),
                 st_sum([("mul", 0, 1)], 2, 10))
    + sumn_main([0, 1, 4, 1], 11) + hess(11, XS)
    + jac([11, 1], XS))
SPECIAL["sumn"] = (
    PRE
    + sumn_main([0, 1, C(1), 0], 9)                     # a term twice
    + sumn_main([], 10)                                 # no terms
    + sumn_main([4, C(-0.5), 8], 11, idform=True)
    + sumn_main([5, 6, 7, 2, 3, 9], 12, idform=True, noval=True)
    + sumn_main([C(0.25), C(-0.5)], 13)                 # constants
    # sums that round by their order: 1e16 + 1 + 1, 0.1 + 0.2 + 0.3
    + bytes([INPUT, 188, 16, INPUT, val(1), 17])
    + sumn_main([16, 17, 17], 18) + sumn_main([17, 17, 16], 19, True)
    + sumn_main([C_(170), 17, 16, C_(170), 17], 20)
    + jac([9, 11, 12], XS)
    + seeds(9, 12)
    + sumn_main([0, 1], 14, misuse=0)                   # NULL terms
    + bytes([CLEAR, 0]) + PRE
    + sumn_main([0, 1], 14, idform=True, misuse=1)
    + bytes([CLEAR, 0]) + PRE
    + sumn_main([0, BAD, 2], 15))                       # a bad id


# -- statements with programs (op_prog; fuzz_statements.c): a program of
# the byte format of cbits/record/program.h.  Its registers: L(i) a leaf,
# K(j) a constant, R(i) the result of instruction i
def L(i):
    return ("L", i)


def K(j):
    return ("K", j)


def R(i):
    return ("R", i)


PO = {"add": 0, "sub": 1, "mul": 2, "div": 3, "neg": 4}


def preg(n, r):
    """a register's byte, as prog_reg reads it"""
    kind, i = r
    if kind == "L":
        assert i < n
        return 0x80 | i
    if kind == "R":
        return 0x80 | (n + i)
    assert n + i < 0x80
    return n + i


def own_pairs(n, insns):
    """how many pairs prog_decode writes as the program's own (a product
    of two factors over leaves; a quotient by a divisor over leaves)"""
    sets, q = [1 << i for i in range(n)], 0
    for op, a, b in insns:
        sa = sets[a[1]] if a[0] == "L" else sets[n + a[1]] if a[0] == "R" \
            else 0
        sb = 0 if op == "neg" else sets[b[1]] if b[0] == "L" else \
            sets[n + b[1]] if b[0] == "R" else 0
        q += (op == "mul" and sa and sb) or (op == "div" and sb != 0)
        sets.append(sa | sb)
    return int(q)


# the pairs a program gets (the top bits of its first byte): none; its
# own; its own, some dropped (drop: a mask); fuzzed masks; its own and
# fuzzed ones; none and programs off (dr_fe_programs(root, 0))
PAIRS = {None: 0, "own": 2, "drop": 3, "fuzz": 4, "own+fuzz": 5, "off": 7}


def prog(n, consts, insns, wide=False, pairs=None, drop=0, fuzz=()):
    """the program's bytes for prog_decode: consts (up to 3; a wide
    program's first three), insns (op, a, b) of PO (neg: b a raw byte);
    pairs one of PAIRS (drop: the own pairs' mask of those left out; fuzz:
    pairs (a, b) of leaf masks)"""
    m = len(insns)
    assert 1 <= m <= 8 and (wide or len(consts) <= 3)
    out = bytes([PAIRS[pairs] << 5 | (m - 1) << 2
                 | (0 if wide else len(consts))])
    out += bytes(val(c) if not isinstance(c, str) else vbyte(c)
                 for c in consts)
    for op, a, b in insns:
        out += bytes([PO[op], preg(n, a),
                      b if isinstance(b, int) else preg(n, b)])
    if pairs == "drop" and own_pairs(n, insns):
        out += bytes([drop])
    if pairs in ("fuzz", "own+fuzz"):
        assert 1 <= len(fuzz) <= 3
        out += bytes([len(fuzz) - 1]) + b"".join(bytes(f) for f in fuzz)
    return out


def prog_main(leaves, pg, dst, mode=0, bad=None, wide=False, other=0,
              byops=False, how=None, extra=b""):
    """op_prog: leaves are operands (slots, C(x)) or ("bad", bytes) with
    bad the bytes of bad_operand; mode 0 the program's value, 2 another
    one first (other: its byte; byops: then by operations), 3 a program
    that is not one (how: prog_break's case, extra its bytes)"""
    n = len(leaves)
    badm = sum(1 << i for i, x in enumerate(leaves)
               if isinstance(x, tuple))
    k = (n - 1) | (8 if badm else 0) | mode << 4 | (0x40 if wide else 0) \
        | (0x80 if byops else 0)
    out = bytes([PROG, k]) + (bytes([badm]) if badm else b"")
    for x in leaves:
        out += x[1] if isinstance(x, tuple) else opnd(x)
    out += pg + bytes([dst])
    if mode == 2:
        out += bytes([other])
    if mode == 3:
        out += bytes([how]) + extra
    return out


# x0 x1 + x2 / x3 - 0.5, the value and the partials of every operation
P4 = prog(4, [0.5], [("mul", L(0), L(1)), ("div", L(2), L(3)),
                     ("add", R(0), R(1)), ("sub", R(2), K(0))])
# x x - x (a leaf twice), leaf 2 never used (an argument of partial 0)
PREP = prog(3, [], [("mul", L(0), L(1)), ("sub", R(0), L(0))])
# -(x0 - x1 x5) / (x2 + x3 x4) over six leaves; neg's b past the
# registers (ignored)
P6 = prog(6, [2.0], [("mul", L(1), L(5)), ("sub", L(0), R(0)),
                     ("neg", R(1), 255), ("mul", L(3), L(4)),
                     ("add", L(2), R(3)), ("mul", R(4), K(0)),
                     ("div", R(2), R(5))])
# a linear one: 2 (x0 - x1) + x0 / 4 (its partials kept at replay)
PLIN = prog(2, [2.0, 0.25], [("sub", L(0), L(1)), ("mul", K(0), R(0)),
                             ("mul", L(0), K(1)), ("add", R(1), R(2))])
# one instruction: -x
PNEG = prog(1, [], [("neg", L(0), 0)])
# linear, with a neg whose b names register 255 (ignored; past the 255
# registers the format has)
PLNEG = prog(2, [3.0], [("sub", L(0), L(1)), ("neg", R(0), 255),
                        ("mul", R(1), K(0))])
SPECIAL["prog"] = (
    PRE
    + prog_main([0, 1, 2, 3], P4, 9)
    + prog_main([4, 4, 5], PREP, 10)                    # repeated, unused
    + prog_main([8, 1, 6, 0, 7, 2], P6, 11)
    + prog_main([C(0.5), C(2), 3], PREP, 12)            # constants first
    + prog_main([C(0.5), C(2), C(1)], PREP, 13)         # constants: none
    + prog_main([5, 6], PLIN, 14)
    + prog_main([9], PNEG, 15)
    + jac([9, 10, 11], XS) + jac([14, 15, 12], XS)
    + seeds(9, 11, 12)
    # another value: refused, then the program's (or the operations)
    + prog_main([0, 1, 2, 3], P4, 16, mode=2, other=0)
    + prog_main([0, 1, 2, 3], P4, 17, mode=2, other=1, byops=True)
    + prog_main([4, 4, 5], PREP, 18, mode=2, other=2)
    + prog_main([4, 4, 5], PREP, 18, mode=2, other=3)
    + jac([16, 17, 18], XS)
    + bytes([REC, 0]) + prog_main([0, 9, 1], PREP, 19)  # a recorder open
    + bytes([REC, 5, 19, 1, 20])                        # rec_mul
    + prog_main([20, 19, 2, 3], P4, 21) + bytes([REC, 1])
    + seeds(21, 19))
# values that are not finite: 0 / 0 (a NaN of the program's making),
# inf - inf, NaN leaves
PNAN = prog(2, [0.0], [("div", K(0), K(0)), ("add", L(0), R(0)),
                       ("mul", R(1), L(1))])
PINF = prog(2, ["1e300", "1e300"], [("mul", K(0), K(1)),
                                    ("mul", L(0), R(0)),
                                    ("sub", R(1), R(1)),
                                    ("add", R(2), L(1))])
SPECIAL["prog-nonfinite"] = (
    PRE + bytes([CONST, 183, 20])                       # s20 = NaN
    + prog_main([0, 1], PNAN, 9)
    + prog_main([20, 1], PNAN, 10)
    + prog_main([0, 1], PINF, 11)
    + prog_main([0, 1], PINF, 12, mode=2, other=0)
    + prog_main([0, 20], PLIN, 13)
    + prog_main([20, 20], prog(2, [], [("add", L(0), L(1))]), 14)
    + jac([9, 11, 13], XS) + seeds(10, 11, 13, 14))
# programs that are not one, each after a clear (DR_EINVAL sticks);
# ids not on the tape; no tape
BADP = ("bad", bytes([val(1), 1, 5]))                   # the id -7
SPECIAL["prog-misuse"] = (
    PRE + prog_main([0, 1, 2, 3], P4, 9, mode=3, how=0, extra=bytes([0]))
    + b"".join(bytes([CLEAR, 0]) + PRE
               + prog_main([0, 1, 2, 3], P4, 9, mode=3, how=how,
                           extra=extra)
               for how, extra in [
                   (1, bytes([0, 0])),                  # 7 leaves
                   (1, bytes([0, 2])),                  # 9 leaves
                   (2, bytes([0])),                     # no instruction
                   (3, bytes([1, 0])),                  # op 0
                   (3, bytes([2, 4])),                  # op 0xff
                   (4, bytes([3, 0, 1])),               # a ahead
                   (4, bytes([0, 0, 0])),               # b at itself
                   (4, bytes([2, 248, 1])),             # register 255
                   (5, bytes([0])),                     # NULL
                   (6, bytes([0])),                     # 256 registers
                   (7, b"")])                           # no tape
    + bytes([CLEAR, 0]) + PRE
    + prog_main([0, BADP, 2], PREP, 10)                 # an id not on it
    + bytes([CLEAR, 0]) + PRE
    + prog_main([0, BADP, 2], PREP, 10, mode=2, other=0)
    + bytes([CLEAR, 0]) + PRE
    + prog_main([0, ("bad", bytes([val(1), 5]) + bytes(8)), 2], PREP, 11)
    + jac([11], XS))
# as many registers as the format has: 248 constants
PWIDE = prog(2, [0.5, -1.5, 2.0], [("mul", L(0), K(0)), ("add", R(0), K(100)),
                                  ("mul", R(1), L(1)), ("div", R(2), K(3)),
                                  ("sub", R(3), K(120))], wide=True)
SPECIAL["prog-wide"] = (
    PRE + prog_main([0, 1], PWIDE, 9, wide=True)
    + prog_main([2, 2], PWIDE, 10, wide=True)
    + prog_main([0, 1], PWIDE, 11, wide=True, mode=2, other=1)
    + prog_main([0, 1], PWIDE, 12, wide=True, mode=3, how=6,
                extra=bytes([0]))
    + bytes([CLEAR, 0]) + PRE
    + prog_main([0, 1], PWIDE, 12, wide=True, mode=3, how=4,
                extra=bytes([4, 5, 1]))
    + bytes([CLEAR, 0]) + PRE + prog_main([3, 0], PWIDE, 13, wide=True)
    + jac([13], XS))
# at order 2: Hessians and recorded tangents through programs
SPECIAL["prog-order2"] = (
    set_order(2, root=True) + PRE
    + prog_main([0, 1, 2, 3], P4, 9)
    + prog_main([8, 1, 6, 0, 7, 2], P6, 10)
    + prog_main([4, 4, 5], PREP, 11)
    + prog_main([5, 6], PLIN, 12)
    + prog_main([0, 1, 2, 3], P4, 13, mode=2, other=1)
    + bi(B_MUL, 9, 10, 14) + bi(B_ADD, 14, 11, 14) + bi(B_MUL, 14, 12, 14)
    + hess(14, XS) + hess(10, XS, dense=False) + hess(13, [0, 1, 1, 3])
    + tangent_main(14, [(0, 1.0), (1, 0.5)], 15)
    + tangent_main(10, [(2, 2.0), (3, -1.0)], 16)
    + jac([14, 15, 16], XS)
    + set_order(1, root=True) + prog_main([14, 0], PREP, 17)
    + hess(17, XS))


def rprog(terms, pg, lie=False, wide=False):
    """a replayed statement with its program over registers and constants
    CT(i): a flag of the sums' operation"""
    e = (len(terms) - 1) | 0x40 | (0x10 if lie else 0) | (0x80 if wide
                                                          else 0)
    return (8, 0, 0, 0, 0, 0, e) + tuple(terms) + tuple(pg)


# r4 = P4(r0 .. r3), r5 = r4 r4 - r4, r6 = linear in (r5, r2), r7 = r6 r4,
# r8 = P6, a guard r8 < r3; inputs with a value and without (r2, r3)
RPIN = [(0, 0.75), (1, -1.5), (2, 0.5), (3, 2.0)]
RPOPS = [rprog([0, 1, 2, 3], P4), rprog([4, 4, 1], PREP),
         rprog([5, 2], PLIN), (1, B_MUL, 6, 4, 0, 0),
         rprog([0, 7, CT(1), 3, 5, 2], P6), (0, U_SIN, 8, 0, 0, 0),
         rprog([CT(3), 9], PNEG)]
RPGUARD = RPOPS + [(5, 0, 8, 3, 0, 0)]
SPECIAL["replay-prog"] = (
    replay(RPIN, RPOPS, [0.8125, -1.25, 0.5625, 2.25])
    + replay(RPIN, RPOPS, [0.75, -1.5, 4.0, 2.0], pick=0x05)
    + replay(RPIN, RPGUARD, [0.8125, -1.25, 0.5625, 2.25])
    + replay(RPIN, RPGUARD, [-4.0, 3.0, 0.5, -2.0])    # the guard flips
    + replay(RPIN, [rprog([0, 1], PLIN, lie=True)] + RPOPS[1:], [1, 2, 3, 4],
             k=0x10)                                    # a lie: no replay
    + replay(RPIN, RPOPS, [1, 2, 3, 4], k=0x0f)         # order 1
    + replay(RPIN, RPOPS, [1, 2, 3, 4], k=0xe0, misuse=3)  # r2 left out
    + replay(RPIN, [rprog([3, 0], PWIDE, wide=True), rprog([4, 2], PNAN),
                    rprog([0, CT(6)], PINF)], [0.25, "1e300", -0.5, 3.0])
    + replay(RPIN, [rprog([0, 1], PLNEG), rprog([4, 2], PLNEG),
                    (1, B_MUL, 5, 4, 0, 0)], [0.8125, -1.25, 0.5625, 2.25]))
# on the second tape of order 2: the Hessian through programs
P = Second()
P.input(0.75, 0)
P.input(-0.5, 1)
P.input(2.0, 2)
P.input(1.25, 3)
P.prog([0, 1, 2, 3], P4, 4)
P.prog([4, 4, 1], PREP, 5)
P.prog([5, 2], PLIN, 6)
P.binary("mul", 6, 4, 6)
P.prog([0, 6, C(1), 3, 5, 2], P6, 7)
P.unary("sin", 7, 7)
P.prog([C(2), 7], PNEG, 7)
P.prog([7, 3], PLNEG, 5)
P.binary("mul", 5, 7, 7)
SPECIAL["second-prog"] = P.bytes(7, [0, 1, 2, 3])
SPECIAL["second-prog-hvp"] = P.bytes(7, [3, 0, 1, 2], dense=False)
P = Second()                                  # wide; a leaf twice
P.input(0.75, 0)
P.input(-1.5, 1)
P.prog([0, 1], PWIDE, 2, wide=True)
P.prog([2, 2, 0], PREP, 3)
P.prog([3, 1], prog(2, [], [("div", L(0), L(1)), ("mul", R(0), R(0))]), 4)
SPECIAL["second-prog-wide"] = P.bytes(4, [0, 1, 0])

# -- linear programs (main since the programs' linearity): only a program
# whose partials are constants in its active leaves is recorded; one that
# multiplies two values that move, or divides by one, is refused
# (DR_FE_STMT_BY_OPS) and recorded by operations.  Pairs (the header's
# fourth byte) refuse without a look at the instructions: exact, too few
# (the engine looks), too many (a refusal); programs off (dr_fe_programs)
# refuse all.
# 2 x0 - x1 / 2 - x2, linear whatever moves
PAFF = prog(3, [2.0, -0.5], [("mul", K(0), L(0)), ("mul", L(1), K(1)),
                             ("add", R(0), R(1)), ("sub", R(2), L(2))])
PAFF_OFF = prog(3, [2.0, -0.5], [("mul", K(0), L(0)), ("mul", L(1), K(1)),
                                 ("add", R(0), R(1)), ("sub", R(2), L(2))],
                pairs="off")
P4I = [("mul", L(0), L(1)), ("div", L(2), L(3)), ("add", R(0), R(1)),
       ("sub", R(2), K(0))]
P4_OWN = prog(4, [0.5], P4I, pairs="own")
P4_DROP = prog(4, [0.5], P4I, pairs="drop", drop=0x03)    # both dropped
P4_DROP1 = prog(4, [0.5], P4I, pairs="drop", drop=0x02)   # the quotient's
P4_FEW = prog(4, [0.5], P4I, pairs="fuzz", fuzz=[(0x20, 0x10)])  # no leaf
P4_MANY = prog(4, [0.5], P4I, pairs="own+fuzz", fuzz=[(0, 0x04)])
PLIN_MANY = prog(2, [2.0, 0.25], [("sub", L(0), L(1)), ("mul", K(0), R(0)),
                                  ("mul", L(0), K(1)), ("add", R(1), R(2))],
                 pairs="fuzz", fuzz=[(0x01, 0x02), (0x30, 0x0c)])
# (x0 + x1) / x2 and x0 * (x1 - x1) (two that move, whatever their value)
PQUOT = prog(3, [], [("add", L(0), L(1)), ("div", R(0), L(2))], pairs="own")
PCANCEL = prog(2, [], [("sub", L(1), L(1)), ("mul", L(0), R(0))])
# a dead product of two leaves: still refused (the whole program is read)
PDEAD = prog(2, [3.0], [("mul", L(0), L(1)), ("mul", L(0), K(0))])
SPECIAL["prog-linear"] = (
    PRE
    + prog_main([0, 1, 2], PAFF, 9)                     # recorded
    + prog_main([0, C(2), 2, C(1.5)], P4_OWN, 10)       # linear: recorded
    + prog_main([0, 1, 2, 3], P4_OWN, 11)               # pairs refuse
    + prog_main([0, 1, 2, 3], P4_DROP, 12)              # too few: looked at
    + prog_main([0, 1, C(0.5), C(1.5)], P4_DROP1, 13)   # too few, nonlinear
    + prog_main([C(0.5), 1, 2, C(1.5)], P4_FEW, 14)     # too few, linear
    + prog_main([C(0.5), 1, 2, C(1.5)], P4_MANY, 15)    # too many: refused
    + prog_main([5, 6], PLIN_MANY, 16)                  # too many
    + prog_main([7, C(1), 8], PAFF_OFF, 17)             # programs off
    + prog_main([7, C(1), 8], PAFF, 18)                 # and on again
    + prog_main([0, 1, C(2)], PQUOT, 19)                # a linear quotient
    + prog_main([0, 1, 2], PQUOT, 20)                   # and not
    + prog_main([0, 1], PCANCEL, 21)
    + prog_main([0, C(1)], PCANCEL, 22)
    + prog_main([0, 1], PDEAD, 23)
    + prog_main([C(1), C(2)], PDEAD, 24)                # constants: none
    + jac([9, 10, 11], XS) + jac([12, 13, 14], XS) + jac([15, 16, 17], XS)
    + jac([18, 19, 20], XS) + jac([21, 22, 23], XS) + seeds(9, 10, 14) + seeds(19, 22, 16)
    # another value: refused whatever the pairs say; misuse
    + prog_main([0, C(2), 2, C(1.5)], P4_OWN, 25, mode=2, other=0)
    + prog_main([0, 1, 2], PAFF_OFF, 26, mode=2, other=1)
    + prog_main([0, 1, 2], PAFF, 27, mode=3, how=7)     # no tape; NULL
    + prog_main([0, 1, 2, 3], P4_OWN, 29, mode=3, how=3, extra=bytes([1, 0]))
    + prog_main([0, 1, 2], PAFF_OFF, 29, mode=3, how=4,
                extra=bytes([3, 0, 1]))
    + prog_main([0, 1, 2], PAFF, 29, mode=3, how=5, extra=bytes([0]))
    + jac([25, 26], XS)
    + prog_main([0, BADP, 2, 3], P4_OWN, 28)            # pairs: no error
    + prog_main([0, BADP, 2], PAFF_OFF, 28)             # off: no error
    + bytes([CLEAR, 0]) + PRE
    + prog_main([0, BADP, 2], PAFF, 10)                 # an id not on it
    + jac([8], XS))
# at order 2: linear programs are linear nodes (their second derivatives
# are those of their leaves, scaled)
SPECIAL["prog-linear-order2"] = (
    set_order(2, root=True) + PRE
    + prog_main([4, 5, 6], PAFF, 9)
    + prog_main([4, C(2), 7, C(1.5)], P4_OWN, 10)
    + prog_main([5, 8], prog(2, [2.0, 0.25], [("sub", L(0), L(1)),
                                               ("mul", K(0), R(0)),
                                               ("mul", L(0), K(1)),
                                               ("add", R(1), R(2))]), 11)
    + prog_main([4, 5, 6, 7], P4_OWN, 12)               # refused
    + prog_main([8], PNEG, 13)
    + bi(B_MUL, 9, 10, 14) + bi(B_ADD, 14, 11, 14) + bi(B_MUL, 14, 12, 14)
    + bi(B_ADD, 14, 13, 14)
    + hess(14, XS) + hess(9, XS, dense=False) + hess(10, [0, 1, 1, 3])
    + tangent_main(14, [(0, 1.0), (1, 0.5)], 15)
    + tangent_main(9, [(2, 2.0), (3, -1.0)], 16)
    + jac([14, 15, 16], XS)
    + prog_main([9, 10, 4], PAFF_OFF, 17) + hess(17, XS))
# replayed: linear programs replay their values (their partials kept)
RLIN = [rprog([0, 1, 2], PAFF), rprog([4, CT(2), 3, CT(5)], P4_OWN),
        (0, U_SIN, 5, 0, 0, 0), rprog([6, 1], PLIN_MANY),
        rprog([0, 1, 2, 3], P4_DROP), rprog([6, 4, 2], PAFF_OFF),
        (1, B_MUL, 9, 4, 0, 0), rprog([10, 1, 2], PQUOT),
        rprog([CT(3), 11, CT(1)], PQUOT)]
SPECIAL["replay-prog-linear"] = (
    replay(RPIN, RLIN, [0.8125, -1.25, 0.5625, 2.25])
    + replay(RPIN, RLIN, [0.75, -1.5, 4.0, 2.0], pick=0x05)
    + replay(RPIN, RLIN, [1, 2, 3, 4], k=0x0f)          # order 1
    + replay(RPIN, [rprog([0, 1], PLNEG), rprog([4, 2], PLNEG)]
             + RLIN[:3], [-0.5, 0.25, 1.5, 3.0]))
# on the second tape: the Hessian through linear programs
P = Second()
P.input(0.75, 0)
P.input(-0.5, 1)
P.input(2.0, 2)
P.input(1.25, 3)
P.unary("sin", 0, 4)
P.binary("mul", 1, 2, 5)
P.prog([4, 5, 3], PAFF, 6)
P.prog([6, C(2), 4, C(1.5)], P4_OWN, 7)
P.prog([6, 7], PLIN_MANY, 5)
P.prog([5, 7, 0], PAFF_OFF, 4)
P.binary("mul", 4, 6, 7)
P.prog([7, 1, 2, 3], P4_DROP, 6)
P.prog([6, 5, C(2)], PQUOT, 6)
SPECIAL["second-prog-linear"] = P.bytes(6, [0, 1, 2, 3])
SPECIAL["second-prog-linear-hvp"] = P.bytes(6, [3, 0, 1, 2], dense=False)


# -- statements of the caller's code that replay (dr_record_statement; op
# kind 8 with the programs' flag 0x40 and 0x28): one of fuzz_replay.c's
# fixed functions (SF_*: a product, sin of the sum times exp(c x0), the
# quotient (c + x0 + ... ) / x[n-1], c + a linear sum, a Gaussian) over 1 ..
# 6 leaves (registers or constants CT(i); a register again: an argument
# twice), c the operation's value byte
SF = {"prod": 0, "sinexp": 1, "quot": 2, "linear": 3, "gauss": 4}


def rstmt(terms, fn, c=0, lie=False):
    e = (len(terms) - 1) | 0x68 | (0x10 if lie else 0)
    return (8, SF[fn], 0, 0, 0, c, e) + tuple(terms)


# inputs with a value (r0, r1) and without (r2, r3: a statement is the
# first to use each); r4 a node of two arguments, r5 an n-ary one (r0
# twice, a constant), r11 of constants only (no node), r12 of one active
# leaf, r13 a leaf twice; the last value depends on statements
RSIN = [(0, 0.75), (1, -1.25), (2, 0.5), (3, 1.5)]
RSOPS = [rstmt([0, 1], "prod"), rstmt([4, 2, CT(3), 0, 0], "sinexp", 0.5),
         rstmt([5, 1, 3], "quot", 1.0), (1, B_MUL, 6, 4, 0, 0),
         rstmt([7, CT(1), 1, 1, 2, 6], "linear", 0.5),
         rstmt([8, 0], "gauss"), (0, U_SIN, 9, 0, 0, 0),
         rstmt([CT(3), CT(2)], "prod"), rstmt([10, 11], "sinexp", -0.25),
         rstmt([12, 12], "prod"), (1, B_ADD, 13, 8, 0, 0)]
RSGUARD = RSOPS + [(5, 0, 8, 3, 0, 0)]                  # r8 < r3
SPECIAL["replay-stmt"] = (
    replay(RSIN, RSOPS, [0.8125, -1.1875, 0.5625, 1.4375])
    + replay(RSIN, RSOPS, [0.75, -1.5, 4.0, 2.0], pick=0x05)
    + replay(RSIN, RSGUARD, [0.8125, -1.1875, 0.5625, 1.4375])
    + replay(RSIN, RSGUARD, [0.8125, -1.1875, 0.5625, -4.0])  # flips
    + replay(RSIN, RSOPS, [1, 2, 3, 4], k=0x0f)         # order 1
    + replay(RSIN, RSOPS, [1, 2, 3, 4], k=0xe0, misuse=3)  # r2 left out
    + replay(RSIN, RSOPS[:3] + [(0, U_SIN, 0, 0, 0, 0)],  # y without one
             [0.8125, -1.1875, 0.5625, 1.4375]))
# a leaf given another value than its node's (the first active one of
# the statement that lies): the tape does not replay
SPECIAL["replay-stmt-lie"] = (
    replay(RSIN, [rstmt([0, 1], "prod", lie=True)] + RSOPS[1:],
           [0.8125, -1.1875, 0.5625, 1.4375], k=0x10)
    + replay(RSIN, RSOPS[:4] + [rstmt([CT(1), 7, 1], "gauss", lie=True)]
             + RSOPS[5:], [0.8125, -1.1875, 0.5625, 1.4375], k=0x10)
    + replay(RSIN, RSOPS[:1] + [rstmt([CT(2), 2, 4], "linear", lie=True)],
             [0.8125, -1.1875, 0.5625, 1.4375], k=0x10))
# values that are not finite: a quotient by a leaf that is 0 at the new
# point, a product at 1e300, NaN leaves (log of a negative)
SPECIAL["replay-stmt-nonfinite"] = (
    replay(RSIN, [rstmt([0, 1], "quot", 0.5), rstmt([4, 0, 0], "prod"),
                  (0, U_LOG, 1, 0, 0, 0), rstmt([6, 5, 2], "sinexp", 1.0),
                  rstmt([7, 3, 1], "gauss")], [0.25, 0.0, 0.5, 1.5])
    + replay([(0, 0.75), (0, 2.0)], [rstmt([0, 1, 0], "prod"),
                                     rstmt([2, 2, 1], "linear", -1.5)],
             ["1e300", 2.0]))


# -- sums of products on the main tape (dr_fe_dot_rec, op_dot): the n-ary
# sums' byte with DOT (its bits 0x80 without 0x40, and 0x20: a pattern no
# earlier seed has), and 0x01 acc DR_NONE (s the operand's value), 0x02
# dr_replay_range, 0x04 replayed back, 0x10 programs set on the root to
# 0x08; then n's byte, acc, the pool (m - 1, then m operands), a byte a
# pair for the first 16 (the decoder repeats them, plus a step a round:
# its byte, where n > 16), dst, the replay's mask and the m + 1 value
# bytes of the second point
DOT = 0xa0
DOT_EDGE = [127, 128, 129, 255, 256, 257, 299, 300]


def dot_nbyte(n):
    if n <= 24:
        return n - 1
    if n in DOT_EDGE:
        return 0xc0 + DOT_EDGE.index(n)
    assert 25 <= n <= 300 and (n - 25) % 5 == 0
    return 0xc8 + (n - 25) // 5


def dot_main(acc, pool, pairs, dst, n=None, const_acc=False, by_range=False,
             back=False, progs=None, mask=0xff, new=None, step=0):
    """acc, pool entries: a slot, C(x) or C_(b); pairs (a, b) of pool
    entries; new: the value bytes of the second point (acc, the pool)"""
    n = len(pairs) if n is None else n
    assert len(pairs) == min(n, 16) and 1 <= len(pool) <= 8
    k = (DOT | (1 if const_acc else 0) | (2 if by_range else 0)
         | (4 if back else 0))
    if progs is not None:
        k |= 0x10 | (0x08 if progs else 0)
    if new is None:
        new = [val(0.25 * i - 1.125) for i in range(len(pool) + 1)]
    assert len(new) == len(pool) + 1
    return (bytes([SUMN, k, dot_nbyte(n)]) + opnd(acc)
            + bytes([len(pool) - 1]) + b"".join(opnd(x) for x in pool)
            + bytes(a | b << 3 for a, b in pairs)
            + (bytes([step]) if n > 16 else b"") + bytes([dst, mask])
            + bytes(new))


def inpb(b, slot):
    """an input of the table of special values, by its byte"""
    return bytes([INPUT, b, slot])


V1E16, V01, VPI2, V1E300, VNAN, VINF, VMAX, V9 = (188, 170, 184, 179, 183,
                                                  181, 192, 189)
# order 1: acc a slot, a factor twice in a pair and in several, constant
# factors, a product of constants; acc a constant; constant factors only
# (the sum so far itself); constants only (none); acc DR_NONE with a
# slot's value; then the Jacobian and a sweep through them
SPECIAL["dot"] = (
    PRE
    + dot_main(7, [0, 1, C(0.5), 4], [(0, 1), (1, 1), (2, 3), (3, 0),
                                      (2, 2)], 9)
    + dot_main(C(1.5), [2, 2, 5], [(0, 1), (2, 0), (1, 1)], 10)
    + dot_main(3, [C(2), C(-0.5)], [(0, 1), (1, 1)], 11)
    + dot_main(C(0.25), [C(1), C(-3)], [(0, 1)], 12)
    + dot_main(6, [8, 0], [(0, 1), (1, 1)], 13, const_acc=True, back=True)
    + dot_main(11, [9, 1, C(-2), 9], [(0, 1), (3, 2), (2, 0)], 14,
               by_range=True)
    + jac([9, 10, 11], XS) + jac([12, 13, 14], XS)
    + seeds(9, 10, 11) + seeds(13, 14))
# order 2 with programs on (statements, which replay: no second-order
# rule for the main tape's Hessians and recorded tangents) and off (the
# products and additions logged: second order works)
SPECIAL["dot-order2"] = (
    set_order(2, root=True) + PRE
    + dot_main(7, [0, 1, C(0.5), 4], [(0, 1), (1, 1), (2, 3), (3, 0),
                                      (2, 2)], 9, progs=False)
    + dot_main(3, [C(2), C(-0.5)], [(0, 1), (1, 1)], 10)
    + dot_main(C(1.5), [2, 2, 5], [(0, 1), (2, 0), (1, 1)], 11, back=True)
    + hess(9, XS) + hess(11, XS, dense=False)
    + tangent_main(10, [(0, 1.0), (2, -1.0)], 20)
    + jac([9, 10, 11], XS)
    + dot_main(8, [0, 1, C(0.5), 9], [(0, 1), (1, 1), (2, 3), (3, 0)], 12,
               progs=True)
    + dot_main(C(0.75), [2, 1], [(0, 0), (1, 0)], 13, const_acc=True,
               by_range=True)
    + dot_main(4, [C(2)], [(0, 0)], 14)                 # constant factors
    + hess(12, XS) + hess(13, XS, dense=False)
    # (refused: the slot byte is not read)
    + tangent_main(13, [(0, 1.0), (2, -1.0)], 21)[:-1]
    + jac([12, 13, 14], XS) + seeds(12, 13))
DOT_CPOOL = [C(0.5), C(-1), C(2), C(0.25), C(1.5), C(-0.5), C(3)]
# long sums: the batches' edges (127 to 300 pairs), at order 2 with
# programs on and off, at order 1; an input in most pairs, constants
SPECIAL["dot-long"] = (
    set_order(2, root=True) + PRE
    + dot_main(7, [0, 1, C(0.5), 4, 0, 2], [(i % 6, (5 * i + 1) % 6)
                                            for i in range(16)], 9, n=300,
               progs=True, back=True)
    + dot_main(C(-1), [C(0.25), 1, C(2)], [(0, 2), (1, 0), (2, 2), (0, 1)]
               + [(0, 2)] * 12, 10, n=129, by_range=True)
    + dot_main(C(1), [C(0.25), C(3), 3], [(0, 1)] * 15 + [(2, 2)], 11,
               n=128)
    + dot_main(9, [2, 3, 5], [(i % 3, i % 2) for i in range(16)], 12,
               n=257, const_acc=True)
    + dot_main(C(0.5), [0, 1, 2, 3, 4, 5, 6, 8], [(i % 8, (i + 3) % 8)
                                                 for i in range(16)], 13,
               n=256, back=True, by_range=True)
    + dot_main(1, [0, C(-0.5)], [(0, 1)] * 16, 14, n=127, progs=False)
    + dot_main(14, [3, 1], [(0, 1), (1, 0)] * 8, 15, n=299)
    + jac([9, 10, 12], XS) + jac([13, 15], XS) + seeds(9, 13, 15)
    # a batch of constants, then one that moves (the pool's last entry,
    # in the high bits from the ninth round: a step of 2), and the other
    # way round
    + dot_main(C(0.5), DOT_CPOOL + [3], [(0, 5)] * 16, 18, n=200, step=2)
    + dot_main(C(0.5), DOT_CPOOL + [2], [(0, 6)] * 16, 19, n=300, step=2,
               const_acc=True, back=True)
    + jac([18, 19], XS)
    + set_order(1, root=True)
    + dot_main(2, [0, 1, C(0.5), 4], [(i % 4, (i + 1) % 4)
                                      for i in range(16)], 16, n=300,
               step=37)
    + dot_main(C(2), [C(0.5), 3], [(0, 0)] * 16, 17, n=200)
    + dot_main(C(0.5), DOT_CPOOL + [3], [(0, 5)] * 16, 20, n=200, step=2)
    + dot_main(1, DOT_CPOOL + [2], [(0, 6)] * 16, 21, n=300, step=2)
    + dot_main(C(1), DOT_CPOOL + [0], [(0, 6)] * 16, 22, n=300, step=2)
    + jac([16, 17, 20], XS) + jac([21, 22], XS) + seeds(16, 17, 21))
# sums whose left fold rounds otherwise in another order (1e16, 0.1,
# pi / 2, 0.9999999, 1e300, DBL_MAX), and that are not finite (inf, NaN)
SPECIAL["dot-rounding"] = (
    set_order(2, root=True)
    + inpb(V1E16, 0) + inpb(V01, 1) + inpb(VPI2, 2) + inp(1, 3)
    + inpb(V9, 4) + inp(-1, 5)
    + dot_main(0, [0, 3, 1, 2, 5, 4], [(0, 3), (2, 3), (1, 4), (3, 5),
                                       (5, 0), (4, 4), (2, 2), (0, 5)],
               9, progs=True, new=[V1E16, VPI2, V01, 188, V9, val(3),
                                   V01])
    + dot_main(C_(V1E16), [1, 2, 4, 3], ([(0, 1), (1, 2), (2, 3), (3, 3),
                                          (0, 0), (1, 1)] * 3)[:16], 10,
               n=140, back=True)
    + dot_main(C_(V1E300), [C_(VMAX), 3, 5, C_(V1E300)],
               [(0, 1), (0, 2), (3, 3), (1, 2)], 11, by_range=True)
    + dot_main(3, [C_(VINF), 0, C_(VNAN), 1], [(0, 1), (1, 2), (2, 3),
                                                (3, 3)], 12)
    + jac([9, 10, 11], [0, 1, 2, 3]) + seeds(9, 10)
    + dot_main(C(0), [0, 1, 2, 4], [(0, 1), (2, 3), (1, 2), (3, 0)], 13,
               progs=False, new=[V01, VPI2, V1E16, V9, V01])
    + dot_main(1, [0, 1, 2, 4], [(0, 1), (2, 3), (1, 2), (3, 0)] * 4, 14,
               n=260, progs=True))


# --------------------------------------------- random programs of the
# other files' operations, made with the encoders above
def rand_second(rng):
    P = Second(k=rng.choice([0, 0, 0x10, 0x20, 2, 4, 0x41, 0x88]),
               pre=bytes([rng.randrange(40, 130), rng.randrange(256),
                          rng.randrange(40, 130)]))
    slots = []
    for i in range(rng.randrange(2, 5)):
        P.input(rng.randrange(-40, 40) / 16, i, rng.random() < 0.3)
        slots.append(i)
    for _ in range(rng.randrange(3, 12)):
        a, b, dst = rng.choice(slots), rng.choice(slots), rng.randrange(8)
        r = rng.random()
        if r < 0.35:
            P.unary(rng.choice(list(U)), a, dst)
        elif r < 0.65:
            P.binary(rng.choice(list(B)), a, b, dst)
        elif r < 0.72:
            P.powi(a, rng.randrange(14), dst)
        elif r < 0.8:
            P.record([(a, rng.randrange(-8, 8) / 4), (b, 0.5)],
                     rng.randrange(-8, 8) / 4, dst, rng.random() < 0.5)
        elif r < 0.85:
            P.mark(rng.randrange(2))
        elif r < 0.92:
            ins = [s for s in slots if s < 4]
            P.tangent(a, [(rng.choice(ins), rng.choice(list(W)))], dst,
                      frm=rng.randrange(4))
        elif r < 0.96:
            P.array(a, b, dst)
        elif r < 0.98:
            P.sumn([rng.choice(slots) for _ in range(rng.randrange(7))],
                   dst, rng.random() < 0.5)
        else:
            P.order1(rng.choice(list(U)), a, dst)
        if dst not in slots:
            slots.append(dst)
    y = rng.choice(slots)
    xs = [rng.choice([0, 1, 2, None]) for _ in range(rng.randrange(1, 5))]
    return P.bytes(y, [x if x is None or x < 2 else 0 for x in xs],
                   dense=rng.random() < 0.5, tangent=rng.random() < 0.7)


def rand_replay(rng):
    """a replayed program of every kind of operation (arrays often)"""
    sm = lambda: rng.randrange(-40, 40) / 16
    reg = lambda: rng.randrange(16) if rng.random() < 0.85 \
        else CT(rng.randrange(8))
    n = rng.randrange(1, 5)
    ins = [(rng.randrange(4), sm()) for _ in range(n)]
    arrays = []
    for _ in range(rng.choice([0, 0, 1, 2, 2])):
        shape = rng.choice(list(SHAPE))
        arrays.append((rng.randrange(4), shape,
                       [sm() for _ in range(SHAPE_N[SHAPE[shape]])]))
    ops = []
    for _ in range(rng.randrange(1, 13)):
        kind = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 11,
                           11, 11])
        if kind < 8:
            ops.append((kind, rng.randrange(256), rng.randrange(16),
                        rng.randrange(16), rng.randrange(16),
                        rng.randrange(-32, 32) / 8))
        elif kind == 8:
            ops.append(sumn([reg() for _ in range(rng.randrange(7))],
                            rng.random() < 0.5, rng.random() < 0.1,
                            rng.random() < 0.3))
        elif kind == 9:
            ops.append(ext(rng.randrange(4),
                           [reg() for _ in range(rng.randrange(5))],
                           rng.randrange(1, 4), rng.randrange(256),
                           rng.random() < 0.9, rng.random() < 0.8,
                           rng.random() < 0.1, rng.random() < 0.8))
        elif kind == 10:
            nx, ns = rng.randrange(1, 4), rng.randrange(1, 4)
            steps = [lstep(rng.randrange(4), rng.randrange(21),
                           rng.randrange(6), rng.randrange(6),
                           rng.randrange(-16, 16) / 8, rng.random() < 0.3)
                     for _ in range(ns)]
            ops.append(rloop([reg() for _ in range(nx)], steps,
                             rng.sample(range(nx + ns), nx),
                             rng.randrange(25), rng.randrange(7),
                             rng.randrange(5),
                             rng.choice([None, None, 0, 1, 2, 3]),
                             rng.random() < 0.1, rng.random() < 0.8))
        else:
            name = rng.choice(list(AO))
            p = rng.randrange(0x80)
            ops.append(aop(name, rng.randrange(16), rng.randrange(16),
                           reg(), rng.randrange(-32, 32) / 8, p,
                           rng.randrange(256),
                           [reg() for _ in range((p & 7) % 5)]
                           if name == "from_reals" else (),
                           rng.random() < 0.4))
    new = [x + rng.choice([0, 0, 1 / 16, -1 / 8, 1]) for _, x in ins]
    anew = []
    for _, shape, vals in arrays:
        mode = rng.randrange(3)
        anew.append((mode, [x + rng.choice([0, 0, 1 / 16, -1 / 8, 1])
                            for x in vals] if mode else []))
    k = rng.choice([0, 0, 0, 0x10, 0xe0, 0xf0, 0x0f])
    return replay(ins, ops, new, rng.randrange(256), k=k,
                  misuse=rng.randrange(10) if k & 0xe0 == 0xe0 else None,
                  arrays=arrays, anew=anew, aflags=rng.randrange(4))


def rand_prog(rng, n, wide=False, lin=False):
    """a program over n leaves: constants, instructions over registers
    written before; lin: products and quotients mostly by constants (a
    program linear in its leaves, recorded), and pairs of every kind"""
    consts = [rng.randrange(-40, 40) / 16 for _ in range(rng.randrange(4))]
    insns = []
    for i in range(rng.randrange(1, 9)):
        regs = [L(j) for j in range(n)] + [R(j) for j in range(i)] \
            + [K(j) for j in range(3 if wide else len(consts))]
        ks = [r for r in regs if r[0] == "K"]
        op = rng.choice(list(PO))
        a, b = rng.choice(regs), rng.randrange(256) if op == "neg" \
            else rng.choice(regs)
        if lin and ks and op in ("mul", "div") and rng.random() < 0.8:
            b = rng.choice(ks)
            if op == "mul" and rng.random() < 0.5:
                a, b = b, a
        insns.append((op, a, b))
    if not lin:
        return prog(n, consts, insns, wide)
    pairs = rng.choice(list(PAIRS))
    fuzz = [(rng.choice([0, 1 << rng.randrange(n), rng.randrange(256)]),
             rng.choice([1 << rng.randrange(n), rng.randrange(256)]))
            for _ in range(rng.randrange(1, 4))]
    return prog(n, consts, insns, wide, pairs=pairs,
                drop=rng.randrange(256), fuzz=fuzz)


def rand_prog_main(rng, lin=False):
    n = rng.randrange(1, 7)
    leaves = [rng.randrange(9) if rng.random() < 0.8
              else C(rng.randrange(-40, 40) / 16) for _ in range(n)]
    if rng.random() < 0.1:
        leaves[rng.randrange(n)] = ("bad", bytes([val(1), 1,
                                                  rng.randrange(256)]))
    wide = rng.random() < 0.1
    mode = rng.choice([0, 0, 0, 0, 2, 2, 3])
    return prog_main(leaves, rand_prog(rng, n, wide, lin),
                     rng.randrange(9, 32),
                     mode=mode, wide=wide, other=rng.randrange(4),
                     byops=rng.random() < 0.5, how=rng.randrange(8),
                     extra=bytes(rng.randrange(256) for _ in range(3))
                     if mode == 3 else b"")


def rand_prog_second(rng, lin=False):
    P = Second(k=rng.choice([0, 0, 0x10, 0x88]),
               pre=bytes([rng.randrange(40, 130)]))
    slots = []
    for i in range(rng.randrange(2, 5)):
        P.input(rng.randrange(-40, 40) / 16, i)
        slots.append(i)
    for _ in range(rng.randrange(2, 8)):
        dst = rng.randrange(8)
        if rng.random() < 0.6:
            n = rng.randrange(1, 7)
            P.prog([rng.choice(slots) for _ in range(n)],
                   rand_prog(rng, n, lin=lin), dst)
        else:
            P.binary(rng.choice(list(B)), rng.choice(slots),
                     rng.choice(slots), dst)
        if dst not in slots:
            slots.append(dst)
    xs = [rng.choice([0, 1, None]) for _ in range(rng.randrange(1, 5))]
    return P.bytes(rng.choice(slots), xs, dense=rng.random() < 0.5,
                   tangent=rng.random() < 0.7)


def rand_prog_replay(rng, lin=False):
    sm = lambda: rng.randrange(-40, 40) / 16
    ins = [(rng.randrange(4), sm()) for _ in range(rng.randrange(1, 5))]
    ops = []
    for _ in range(rng.randrange(1, 9)):
        if rng.random() < 0.6:
            n = rng.randrange(1, 7)
            ops.append(rprog([rng.randrange(16) if rng.random() < 0.85
                              else CT(rng.randrange(8)) for _ in range(n)],
                             rand_prog(rng, n, lin=lin), rng.random() < 0.05))
        else:
            ops.append((rng.choice([0, 1, 2, 5]), rng.randrange(256),
                        rng.randrange(16), rng.randrange(16),
                        rng.randrange(16), rng.randrange(-32, 32) / 8))
    new = [x + rng.choice([0, 0, 1 / 16, -1 / 8, 1]) for _, x in ins]
    k = rng.choice([0, 0, 0, 0x10, 0x0f])
    return replay(ins, ops, new, rng.randrange(256), k=k)


def rand_stmt_replay(rng):
    """a replayed program of statements (dr_record_statement) among the
    other kinds of operation"""
    sm = lambda: rng.randrange(-40, 40) / 16
    reg = lambda: rng.randrange(16) if rng.random() < 0.85 \
        else CT(rng.randrange(8))
    ins = [(rng.randrange(4), sm()) for _ in range(rng.randrange(1, 5))]
    ops = []
    for _ in range(rng.randrange(1, 13)):
        kind = rng.choice(["stmt"] * 5 + [0, 1, 2, 3, 4, 5, 6, 8, "prog",
                                          9, 10, 11])
        if kind == "stmt":
            ops.append(rstmt([reg() for _ in range(rng.randrange(1, 7))],
                             rng.choice(list(SF)),
                             rng.randrange(-32, 32) / 8,
                             rng.random() < 0.15))
        elif kind == "prog":
            n = rng.randrange(1, 7)
            ops.append(rprog([reg() for _ in range(n)],
                             rand_prog(rng, n, lin=True),
                             rng.random() < 0.05))
        elif kind == 8:
            ops.append(sumn([reg() for _ in range(rng.randrange(7))],
                            rng.random() < 0.5, rng.random() < 0.1))
        elif kind == 9:
            ops.append(ext(rng.randrange(4),
                           [reg() for _ in range(rng.randrange(5))],
                           rng.randrange(1, 4), rng.randrange(256)))
        elif kind == 10:
            nx = rng.randrange(1, 3)
            ops.append(rloop([reg() for _ in range(nx)],
                             [lstep(rng.randrange(3), rng.randrange(21),
                                    rng.randrange(4), rng.randrange(4),
                                    rng.randrange(-16, 16) / 8)],
                             rng.sample(range(nx + 1), nx),
                             rng.randrange(12)))
        elif kind == 11:
            name = rng.choice(["from_reals", "scale", "dot", "sum", "map"])
            p = rng.randrange(0x80)
            ops.append(aop(name, rng.randrange(16), rng.randrange(16),
                           reg(), rng.randrange(-32, 32) / 8, p,
                           rng.randrange(256),
                           [reg() for _ in range((p & 7) % 5)]
                           if name == "from_reals" else ()))
        else:
            ops.append((kind, rng.randrange(256), rng.randrange(16),
                        rng.randrange(16), rng.randrange(16),
                        rng.randrange(-32, 32) / 8))
    new = [x + rng.choice([0, 0, 1 / 16, -1 / 8, 1]) for _, x in ins]
    k = rng.choice([0, 0, 0, 0x10, 0x0f, 0xe0])
    return replay(ins, ops, new, rng.randrange(256), k=k,
                  misuse=rng.randrange(10) if k == 0xe0 else None)


def rand_dot_main(rng):
    m = rng.randrange(1, 9)
    opd = lambda: (rng.randrange(9) if rng.random() < 0.75
                   else C(rng.randrange(-40, 40) / 16) if rng.random() < 0.8
                   else C_(rng.randrange(160, 198)))
    n = rng.choice([rng.randrange(1, 25)] * 3 + [rng.choice(DOT_EDGE),
                                                  25 + 5 * rng.randrange(56)])
    pairs = [(rng.randrange(m), rng.randrange(m))
             for _ in range(min(n, 16))]
    new = [val(rng.randrange(-40, 40) / 16) if rng.random() < 0.8
           else rng.randrange(160, 198) for _ in range(m + 1)]
    return dot_main(opd(), [opd() for _ in range(m)], pairs,
                    rng.randrange(9, 32), n=n,
                    const_acc=rng.random() < 0.25,
                    by_range=rng.random() < 0.3, back=rng.random() < 0.3,
                    progs=rng.choice([None, None, True, False]),
                    mask=rng.randrange(256), new=new,
                    step=rng.choice([0, 1, 2, 8, 37, 64, rng.randrange(256)]))


def rand_new_op(rng, op):
    """one of the other files' operations with meaningful arguments"""
    sl = lambda: rng.randrange(9)
    ws = lambda n: [rng.choice(list(W)) for _ in range(n)]
    if op == "prog-main":
        return rand_prog_main(rng)
    if op == "prog-second":
        return rand_prog_second(rng)
    if op == "prog-replay":
        return rand_prog_replay(rng)
    if op == "lprog-main":
        return rand_prog_main(rng, True)
    if op == "lprog-second":
        return rand_prog_second(rng, True)
    if op == "lprog-replay":
        return rand_prog_replay(rng, True)
    if op == "stmt-replay":
        return rand_stmt_replay(rng)
    if op == "dot-main":
        return rand_dot_main(rng)
    if op == "dot-jac":
        return jac([sl() for _ in range(rng.randrange(1, 4))],
                   [rng.randrange(4) for _ in range(rng.randrange(1, 7))])
    if op == "dot-seeds":
        return seeds(*[sl() for _ in range(rng.randrange(1, 4))])
    if op == MODES:
        kind = rng.randrange(5)
        ys = [sl() for _ in range(rng.randrange(4))]
        xs = [rng.randrange(4) for _ in range(rng.randrange(7))]
        if kind == 0:
            return jvp(ys, xs, ws(len(xs)), rng.random() < 0.5)
        if kind == 1:
            return vjp(ys, xs, ws(len(ys)))
        if kind == 2:
            return jvp_vec(ys, xs, rng.randrange(5), ws(24))
        if kind == 3:
            return vjp_vec(ys, xs, rng.randrange(5), ws(12))
        return forward([("x", rng.randrange(4), rng.choice(list(W)))
                        for _ in range(rng.randrange(4))])
    if op == ORDER:
        r = rng.random()
        if r < 0.3:
            return set_order(rng.choice([1, 2, 2]), rng.random() < 0.5)
        if r < 0.7:
            return hess(sl(), [rng.randrange(4) for _ in range(
                rng.randrange(5))], ws(4), rng.random() < 0.5)
        return tangent_main(sl(), [(rng.randrange(4), rng.choice(list(W)))
                                   for _ in range(rng.randrange(4))],
                            rng.randrange(9, 32))
    if op == SECOND:
        return rand_second(rng)
    if op == LOOP:
        n = rng.randrange(1, 4)
        ops = [(rng.randrange(4), rng.randrange(21), rng.randrange(8),
                rng.randrange(8), rng.randrange(-16, 16) / 8,
                rng.random() < 0.3) for _ in range(rng.randrange(1, 5))]
        prog = loop_prog(n, ops, [rng.randrange(16) for _ in range(n)])
        return loop(prog, [rng.randrange(4) for _ in range(n)],
                    rng.randrange(24), rng.randrange(256),
                    rng.randrange(10), ws(n), k=rng.choice([0, 0x10, 3]))
    if op == REPLAY:
        return rand_replay(rng)
    if op == EXTERNAL:
        n = rng.randrange(5)
        return external(rng.randrange(4), [sl() for _ in range(n)],
                        rng.randrange(1, 4), MX, CA,
                        k=rng.choice([0x90, 0x91, 0xa2, 0xb3]))
    case = rng.randrange(8)
    out = bytes([OTHER, case, rng.randrange(3), 0, val(0.5)])
    if case in (0, 1, 3, 4, 5):
        out += bytes([sl()]) if case != 0 else b""
        out += bytes([rng.randrange(256), rng.randrange(9, 32)])
    elif case == 6:
        out += bytes([rng.randrange(3), 4])
    elif case == 7:
        out += bytes([sl()])
    return out


NEW_OPS = (MODES, ORDER, SECOND, LOOP, EXTERNAL, OTHER, REPLAY,
           "prog-main", "prog-second", "prog-replay", "lprog-main",
           "lprog-second", "lprog-replay", "stmt-replay", "dot-main",
           "dot-jac", "dot-seeds")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(outdir, exist_ok=True)
    for name, data in SPECIAL.items():
        with open(os.path.join(outdir, "special-" + name), "wb") as f:
            f.write(data)
    rng = random.Random(20241124)
    for family in FAMILIES:
        for k in range(3):
            data = program(rng, family, rng.randrange(80, 400))
            with open(os.path.join(outdir, "%s-%d" % (family, k)), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
