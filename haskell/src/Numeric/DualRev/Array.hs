-- | Vectors and matrices of doubles whose operations are single tape nodes.
--
-- 'Vec' and 'Mat' are immutable arrays.  In ordinary code the functions
-- below compute with the engine's C kernels (OpenBLAS for the products).
-- Inside @differentiable [d| ... |]@ (see "Numeric.DualRev") each of them
-- is a primitive: one call records ONE node on the tape, whatever the size
-- of the arrays, and its reverse rule (the transpose of its derivative) runs
-- in C.  So a layer of a network is a handful of nodes, not one per weight:
--
-- > {-# LANGUAGE TemplateHaskell #-}
-- > import Numeric.DualRev
-- > import Numeric.DualRev.Array
-- >
-- > differentiable [d|
-- >   -- squared error of one dense layer with a tanh
-- >   loss :: ((Mat, Vec), (Vec, Vec)) -> Double
-- >   loss ((w, b), (x, y)) =
-- >     let out = vtanh (vadd (matVec w x) b)
-- >     in vsum (vsquare (vsub out y))
-- >   |]
-- >
-- > main :: IO ()
-- > main = do
-- >   let w = fromRows [[0.1, 0.2], [0.3, 0.4]]
-- >       b = vfromList [0, 0]
-- >       ((gw, gb), _) = $(grad 'loss) ((w, b), (vfromList [1, 2], vfromList [0, 1]))
-- >   print (toRows gw, vtoList gb)
--
-- 'Vec' and 'Mat' may appear anywhere in the input and output of a
-- differentiated function (in tuples, lists, records): the gradient has the
-- input's shape, arrays included.  Converting with 'vtoList' / 'toRows'
-- inside differentiable code records one index node per element;
-- 'vfromList' / 'fromRows' one node in all.
--
-- Naming: functions on vectors start with @v@, those on matrices with @m@
-- (or name the shape: 'fromRows', 'matVec', 'sumRows', ...), so that the
-- module can be imported unqualified next to the Prelude, "Data.List",
-- "Data.Foldable", "Control.Monad" and "Data.Vector".
--
-- Shape errors (adding vectors of different lengths, a product with
-- mismatched dimensions, an index out of range) raise an exception naming
-- the problem ('Numeric.DualRev.DualRevError' for those the engine finds).
--
-- "Data.Vector.Storable" vectors convert to and from 'Vec' and 'Mat'
-- without copying (see the last section), for data loaded by other
-- libraries.
module Numeric.DualRev.Array
  ( -- * Vectors
    Vec
    -- ** Building and reading
  , vfromList, vtoList, vlength, vindex
    -- ** Elementwise
  , vadd, vsub, vmul, vdiv, vscale
  , vneg, vabs, vsqrt, vexp, vlog, vsin, vcos, vtanh, vsigmoid, vrelu, vsquare
    -- ** Reductions
  , vdot, vsum, vmaximum, logSumExp, softmax, logSoftmax
    -- ** Structure
  , vslice, vconcat, gather, scatter
    -- * Matrices
    -- | Row-major.
  , Mat
    -- ** Building and reading
  , fromRows, toRows, mrows, mcols, mindex
    -- ** Elementwise
  , madd, msub, mmul, mdiv, mscale
  , mneg, mabs, msqrt, mexp, mlog, msin, mcos, mtanh, msigmoid, mrelu, msquare
    -- ** Products
  , matVec, vecMat, matMul, matMulT, outer, mtranspose
    -- ** Reductions
  , msumAll, mmaximum, sumRows, sumCols, softmaxRows, logSoftmaxRows, logSumExpRows
    -- ** Broadcasting
  , addRowVec, addColVec, replicateRows, replicateCols
    -- ** Structure
  , reshape, mflatten, mslice, block, vstack, hstack, gatherRows, scatterRows
    -- * Data.Vector.Storable
    -- | Conversions in ordinary code, sharing the storage (see each function
    -- for the one case that copies).  They are not primitives of
    -- differentiable code: convert outside the block and pass 'Vec' or
    -- 'Mat' in.
  , vecFromStorable, vecToStorable, matFromStorable, matToStorable
  ) where

import Numeric.DualRev.Internal.Run.Array
import Numeric.DualRev.Internal.Run.ArrayData (Mat, Vec)
import Numeric.DualRev.Internal.Run.ArrayStorable
