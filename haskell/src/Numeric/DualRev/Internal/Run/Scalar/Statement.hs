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
  , progRec
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

-- | Record a statement of value v over n leaves, given each leaf's id and
-- partial (the pairs past n are ignored), and give its result; or, on a
-- tape where a node of given partials would be wrong (second order), run
-- @byOps@, the expression's operations one by one, instead.
stmtRec :: AD a -> (D -> a) -> Double -> Int
        -> Int64 -> Double -> Int64 -> Double -> Int64 -> Double
        -> Int64 -> Double -> Int64 -> Double -> Int64 -> Double -> AD a
stmtRec byOps fromD !v n i0 d0 i1 d1 i2 d2 i3 d3 i4 d4 i5 d5 = AD $ \t ->
  c_fe_stmt t (fromIntegral n) i0 d0 i1 d1 i2 d2 i3 d3 i4 d4 i5 d5
    >>= stmtDone byOps fromD v t
{-# INLINE stmtRec #-}

-- | 'stmtRec' of at most two leaves (the second's id -1 for one).
stmtRec2 :: AD a -> (D -> a) -> Double -> Int64 -> Double -> Int64 -> Double -> AD a
stmtRec2 byOps fromD !v i0 d0 i1 d1 = AD $ \t ->
  c_fe_stmt2 t i0 d0 i1 d1 >>= stmtDone byOps fromD v t
{-# INLINE stmtRec2 #-}

-- | 'stmtRec' of three leaves.
stmtRec3 :: AD a -> (D -> a) -> Double
         -> Int64 -> Double -> Int64 -> Double -> Int64 -> Double -> AD a
stmtRec3 byOps fromD !v i0 d0 i1 d1 i2 d2 = AD $ \t ->
  c_fe_stmt3 t i0 d0 i1 d1 i2 d2 >>= stmtDone byOps fromD v t
{-# INLINE stmtRec3 #-}

-- | The statement on a tape of order 2, where 'stmtRec' records nothing:
-- with its program (code, static bytes the transform wrote), its value v
-- and each leaf's value and id (six pairs, the unused ones ignored), so
-- that it replays and has second derivatives; byOps where the engine
-- refuses it (the program computes another value).
progRec :: AD a -> (D -> a) -> Ptr Word8 -> Double
        -> Double -> Int64 -> Double -> Int64 -> Double -> Int64
        -> Double -> Int64 -> Double -> Int64 -> Double -> Int64 -> AD a
progRec byOps fromD code !v x0 i0 x1 i1 x2 i2 x3 i3 x4 i4 x5 i5 = AD $ \t ->
  c_fe_prog t code v i0 x0 i1 x1 i2 x2 i3 x3 i4 x4 i5 x5 >>= stmtDone byOps fromD v t
{-# INLINE progRec #-}

-- | The statement's result from the id its call gave, or byOps where the
-- call recorded nothing.
stmtDone :: AD a -> (D -> a) -> Double -> Ptr CTape -> Int64 -> IO a
stmtDone byOps fromD v t j
  | j == stmtByOps = unAD byOps t
  | otherwise = pure (fromD (D v j))
{-# INLINE stmtDone #-}
