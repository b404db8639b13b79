{-# LANGUAGE BangPatterns #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Arithmetic expressions recorded as statements, one tape node each: the
-- transform derives an expression's partials at compile time
-- ("Numeric.DualRev.Internal.Compile.Statement"), and its code records
-- them here.
module Numeric.DualRev.Internal.Run.Statement
  ( stmtRec
  , stmtMaxLeaves
  ) where

import Data.Int (Int64)

import Numeric.DualRev.Internal.Engine.ScalarFFI (c_fe_stmt, stmtByOps)
import Numeric.DualRev.Internal.Run.AD

-- | The most distinct leaves a statement has: the six (id, partial) pairs
-- of 'stmtRec' and of its C call (a test checks C's DR_FE_STMT_MAX).  A
-- larger expression is split at its root.
stmtMaxLeaves :: Int
stmtMaxLeaves = 6

-- | Record a statement of value v over n leaves, given each leaf's id and
-- partial (the pairs past n are ignored), and give its result; or, on a
-- tape where a node of given partials would be wrong (second order), run
-- @byOps@, the expression's operations one by one, instead.
stmtRec :: AD a -> (D -> a) -> Double -> Int
        -> Int64 -> Double -> Int64 -> Double -> Int64 -> Double
        -> Int64 -> Double -> Int64 -> Double -> Int64 -> Double -> AD a
stmtRec byOps fromD !v n i0 d0 i1 d1 i2 d2 i3 d3 i4 d4 i5 d5 = AD $ \t -> do
  j <- c_fe_stmt t (fromIntegral n) i0 d0 i1 d1 i2 d2 i3 d3 i4 d4 i5 d5
  if j == stmtByOps then unAD byOps t else pure (fromD (D v j))
{-# INLINE stmtRec #-}
