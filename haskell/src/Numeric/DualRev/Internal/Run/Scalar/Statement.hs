{-# LANGUAGE BangPatterns #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Arithmetic expressions recorded as statements, one tape node each: the
-- transform derives an expression's partials at compile time
-- ("Numeric.DualRev.Internal.Compile.Statement"), and its code records
-- them here.
module Numeric.DualRev.Internal.Run.Scalar.Statement
  ( stmtRec
  , stmtRec2
  , stmtRec3
  , stmtMaxLeaves
  ) where

import Data.Int (Int64)
import Data.Word (Word8)
import Foreign.Ptr (Ptr)

import Numeric.DualRev.Internal.Engine.FFI (CTape)
import Numeric.DualRev.Internal.Engine.ScalarFFI (c_fe_prog, c_fe_stmt, c_fe_stmt2, c_fe_stmt3, stmtByOps)
import Numeric.DualRev.Internal.Run.Scalar.AD

-- | The most distinct leaves a statement has: the six (id, partial) pairs
-- of 'stmtRec' and of its C call (a test checks C's DR_FE_STMT_MAX).  A
-- larger expression is split at its root.
stmtMaxLeaves :: Int
stmtMaxLeaves = 6

-- | Record a statement of value v over n leaves, given each leaf's id,
-- the expression's partial with respect to it and its value (the triples
-- past n are ignored), and give its result.  On a tape of order 2, where a
-- node of given partials would be wrong, the engine records it with its
-- program instead (code, static bytes the transform wrote; null for none)
-- where the tape is for replay and its partials are constants, so that it
-- replays as one node; where neither call records anything, this runs
-- @byOps@, the expression's operations one by one.
stmtRec :: AD a -> (D -> a) -> Double -> Ptr Word8 -> Int
        -> Int64 -> Double -> Double -> Int64 -> Double -> Double
        -> Int64 -> Double -> Double -> Int64 -> Double -> Double
        -> Int64 -> Double -> Double -> Int64 -> Double -> Double -> AD a
stmtRec byOps fromD !v code n i0 d0 x0 i1 d1 x1 i2 d2 x2 i3 d3 x3 i4 d4 x4 i5 d5 x5 =
  AD $ \t -> do
    j <- c_fe_stmt t (fromIntegral n) i0 d0 i1 d1 i2 d2 i3 d3 i4 d4 i5 d5
    k <- if j /= stmtByOps then pure j
         else c_fe_prog t code v i0 x0 i1 x1 i2 x2 i3 x3 i4 x4 i5 x5
    stmtDone byOps fromD v t k
{-# INLINE stmtRec #-}

-- | 'stmtRec' of at most two leaves (the second's id -1 for one).
stmtRec2 :: AD a -> (D -> a) -> Double -> Ptr Word8
         -> Int64 -> Double -> Double -> Int64 -> Double -> Double -> AD a
stmtRec2 byOps fromD !v code i0 d0 x0 i1 d1 x1 = AD $ \t -> do
  j <- c_fe_stmt2 t i0 d0 i1 d1
  k <- if j /= stmtByOps then pure j
       else c_fe_prog t code v i0 x0 i1 x1 (-1) 0 (-1) 0 (-1) 0 (-1) 0
  stmtDone byOps fromD v t k
{-# INLINE stmtRec2 #-}

-- | 'stmtRec' of three leaves.
stmtRec3 :: AD a -> (D -> a) -> Double -> Ptr Word8
         -> Int64 -> Double -> Double -> Int64 -> Double -> Double
         -> Int64 -> Double -> Double -> AD a
stmtRec3 byOps fromD !v code i0 d0 x0 i1 d1 x1 i2 d2 x2 = AD $ \t -> do
  j <- c_fe_stmt3 t i0 d0 i1 d1 i2 d2
  k <- if j /= stmtByOps then pure j
       else c_fe_prog t code v i0 x0 i1 x1 i2 x2 (-1) 0 (-1) 0 (-1) 0
  stmtDone byOps fromD v t k
{-# INLINE stmtRec3 #-}

-- | The statement's result from the id a call gave, or byOps where
-- neither recorded anything.
stmtDone :: AD a -> (D -> a) -> Double -> Ptr CTape -> Int64 -> IO a
stmtDone byOps fromD v t j
  | j == stmtByOps = unAD byOps t
  | otherwise = pure (fromD (D v j))
{-# INLINE stmtDone #-}
