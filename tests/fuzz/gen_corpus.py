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
}


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
        out.append(op)
        # argument bytes: mostly small values and slot numbers
        for _ in range(rng.randrange(3, 9)):
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
