{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Lists whose elements are computed, and recorded on the tape, when first
-- demanded, so that they may be infinite: iterate, unfoldr and the
-- enumerations @[x ..]@ and @[x, y ..]@.  All other differentiable code is
-- evaluated strictly.
module Numeric.DualRev.Internal.Run.Library.Lazy
  ( unfoldOnDemand
  , iterateD, unfoldrD
  , DEnumFrom (..)
  ) where

import System.IO.Unsafe (unsafeInterleaveIO)

import Numeric.DualRev.Internal.Engine.FFI (c_lazy_note)
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Control.Parallel (recordingHandle, rootHandle)

-- | The list that step unfolds from a seed, each element computed when its
-- cons cell is first demanded, so @take n@ of an infinite one works; the
-- recording order still follows the data dependencies, which is all the
-- reverse pass needs.  An element records on the handle of the code that
-- demands it, not of the code that made the list: with (|*|) the list may
-- be made on one side and consumed after the join, or made before a fork
-- and consumed on a side.  It records even where first demanded inside the
-- operand of a comparison ('unrecordedD'): the list is shared with the
-- code that made it.
unfoldOnDemand :: (s -> AD (Maybe (a, s))) -> s -> AD [a]
unfoldOnDemand step s0 = AD $ \t -> do
  root <- rootHandle t
  let go s = unsafeInterleaveIO $ do
        c_lazy_note
        h <- recordingHandle root
        r <- recordingResumed h (unAD (step s) h)
        case r of
          Nothing -> pure []
          Just (y, s') -> y `seq` ((y :) <$> go s')
  go s0

iterateD :: (a -> AD a) -> a -> AD [a]
iterateD f x0 = (x0 :) <$> unfoldOnDemand (\x -> (\y -> Just (y, y)) <$> f x) x0

unfoldrD :: (s -> AD (Maybe (a, s))) -> s -> AD [a]
unfoldrD = unfoldOnDemand

-- | Infinite arithmetic sequences.  Their elements have the values of
-- Haskell's own enumeration (for Double, element k of @[x, y ..]@ is
-- @x + k * (y - x)@), so the primal results are exactly those of the
-- original code.
class DEnumFrom a where
  enumFromD :: a -> AD [a]
  enumFromThenD :: a -> a -> AD [a]

-- | Each element is its own tape node, with partial 1 to the start (and
-- 1 - k, k to the two given elements): one step, not a chain through the
-- elements before it.  From constants, no tape at all.
instance DEnumFrom D where
  enumFromD a@(D x i)
    | i == -1 = pure (map constD [x ..])
    | otherwise = unfoldOnDemand step [x ..]
    where step (v : vs) = (\y -> Just (y, vs)) <$> rec1 v a 1
          step [] = pure Nothing
  enumFromThenD a@(D x i) b@(D x2 j)
    | i == -1 && j == -1 = pure (map constD [x, x2 ..])
    | otherwise = unfoldOnDemand step (zip [0 :: Double ..] [x, x2 ..])
    where step ((k, v) : rest) = (\y -> Just (y, rest)) <$> rec2 v a (1 - k) b k
          step [] = pure Nothing

instance DEnumFrom Int where
  enumFromD a = pure [a ..]
  enumFromThenD a b = pure [a, b ..]
instance DEnumFrom Integer where
  enumFromD a = pure [a ..]
  enumFromThenD a b = pure [a, b ..]
instance DEnumFrom Char where
  enumFromD a = pure [a ..]
  enumFromThenD a b = pure [a, b ..]
