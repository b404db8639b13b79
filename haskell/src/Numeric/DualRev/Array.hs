-- | Vectors and matrices of doubles whose operations are single tape nodes.
--
-- In ordinary code 'Vec' and 'Mat' are immutable arrays and these functions
-- compute with the engine's C kernels (OpenBLAS for the products).  Inside
-- @differentiable [d| ... |]@ each of them is recognised as a primitive:
-- it records ONE node on the tape (whatever the size of the arrays), and
-- its reverse rule is the transpose of its derivative, run in C.  Converting
-- with 'toList' / 'toRows' inside differentiable code records one index node
-- per element; 'fromList' / 'fromRows' one node in all.
--
-- Shape errors (adding vectors of different lengths, a product with
-- mismatched dimensions, an index out of range) raise an exception naming the
-- problem.
module Numeric.DualRev.Array
  ( -- * Vectors
    Vec, fromList, toList, vlength, index
  , vadd, vsub, vmul, vdiv, vscale
  , vneg, vabs, vsqrt, vexp, vlog, vsin, vcos, vtanh, vsigmoid, vrelu, vsquare
  , dot, vsum, vmaximum, logSumExp, softmax, logSoftmax
  , vslice, vconcat, gather, scatter
    -- * Matrices
  , Mat, fromRows, toRows, rows, cols, index2
  , madd, msub, mmul, mdiv, mscale
  , mneg, mabs, msqrt, mexp, mlog, msin, mcos, mtanh, msigmoid, mrelu, msquare
  , matVec, vecMat, matMul, matMulT, outer, transpose
  , msum, mmaximum, sumRows, sumCols, softmaxRows, logSoftmaxRows, logSumExpRows
  , addRowVec, addColVec, replicateRows, replicateCols
  , reshape, flatten, mslice, block, vstack, hstack, gatherRows, scatterRows
  ) where

import Numeric.DualRev.Internal.Run.Array
