{-# LANGUAGE RankNTypes #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- Halley's method, @ad@'s "Numeric.AD.Halley": Newton's method with the
-- second derivative too, x - 2 f f' / (2 f'^2 - f f''), cubically
-- convergent near a simple zero.  The derivatives come from the tower mode
-- (one pass gives f, f' and f''), so the functions are of its numbers, and
-- the iterates are @ad@'s step for step.
module Numeric.DualRev.Internal.Overloaded.Halley
  ( findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq
  ) where

import Numeric.DualRev.Internal.Overloaded.Optimize (untilRepeated)
import Numeric.DualRev.Internal.Overloaded.Tower (Derivatives, diffs0)
import Numeric.DualRev.Internal.Overloaded.Value (Mode (..))

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.AD.Halley

-- | Halley's iterates for a zero of a function of one scalar, ending where
-- two consecutive ones are equal.
--
-- >>> take 10 (findZero (\x -> x ^ 2 - 4) 1)
-- [1.0,1.8571428571428572,1.9997967892704736,1.9999999999994755,2.0]
findZero :: (Fractional a, Eq a) => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
findZero f = untilRepeated . findZeroNoEq f
{-# INLINE findZero #-}

-- | 'findZero' without the stopping rule.
findZeroNoEq :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
findZeroNoEq f = halley (take 3 . diffs0 f)
{-# INLINE findZeroNoEq #-}

-- | The x with f x = y, from x0.
inverse :: (Fractional a, Eq a) => (forall s. Derivatives s a -> Derivatives s a) -> a -> a -> [a]
inverse f x0 = untilRepeated . inverseNoEq f x0
{-# INLINE inverse #-}

-- | 'inverse' without the stopping rule.
inverseNoEq :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> a -> [a]
inverseNoEq f x0 y = findZeroNoEq (\x -> f x - auto y) x0
{-# INLINE inverseNoEq #-}

-- | A fixed point of f: a zero of f x - x.
fixedPoint :: (Fractional a, Eq a) => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
fixedPoint f = untilRepeated . fixedPointNoEq f
{-# INLINE fixedPoint #-}

-- | 'fixedPoint' without the stopping rule.
fixedPointNoEq :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
fixedPointNoEq f = findZeroNoEq (\x -> f x - x)
{-# INLINE fixedPointNoEq #-}

-- | An extremum of f: Halley's method on its derivative (whose tower is
-- f's, one down).
extremum :: (Fractional a, Eq a) => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
extremum f = untilRepeated . extremumNoEq f
{-# INLINE extremum #-}

-- | 'extremum' without the stopping rule.
extremumNoEq :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
extremumNoEq f = halley (take 3 . drop 1 . diffs0 f)
{-# INLINE extremumNoEq #-}

-- | The iterates from the first three derivatives of the function whose
-- zero is sought (its value first).
halley :: Fractional a => (a -> [a]) -> a -> [a]
halley derivatives = iterate step
  where
    step x = case derivatives x of
      [y, y', y''] -> x - 2 * y * y' / (2 * y' * y' - y * y'')
      _ -> error "Numeric.DualRev.AD.Halley: a zero-padded tower ended"
