{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE DeriveTraversable #-}
{-# LANGUAGE GADTs #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# LANGUAGE RankNTypes #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- Newton's method and gradient descent on the overloaded mode, with @ad@'s
-- names, types and iterations (the same step sizes and stopping rules), so
-- that a program switched from @ad@ gets the same sequence of points.
module Numeric.DualRev.Internal.Overloaded.Optimize
  ( -- * Newton's method
    findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq, untilRepeated
    -- * Gradient descent
  , gradientDescent, gradientAscent
  , conjugateGradientDescent, conjugateGradientAscent
  , stochasticGradientDescent
    -- * Descent under convex constraints
  , constrainedDescent, CC (..), eval
  ) where

import Data.Foldable (toList)

import System.IO.Unsafe (unsafePerformIO)

import Numeric.DualRev.Internal.Overloaded.Drivers (diff, diff', grad', gradWith, tapedGradWith')
import Numeric.DualRev.Internal.Overloaded.Traversals (fill)
import Numeric.DualRev.Internal.Overloaded.Value

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.AD
-- >>> import Numeric.DualRev.AD.Newton

------------------------------------------------------------------------------
-- Newton's method

-- | Newton's method for a zero of a function of one scalar: the iterates,
-- ending where two consecutive ones are equal.
--
-- >>> take 10 (findZero (\x -> x ^ 2 - 4) 1)
-- [1.0,2.5,2.05,2.000609756097561,2.0000000929222947,2.000000000000002,2.0]
findZero :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> [a]
findZero f = untilRepeated . findZeroNoEq f
{-# INLINE findZero #-}

-- | 'findZero' without the stopping rule.
findZeroNoEq :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> [a]
findZeroNoEq f = iterate step
  where step x = let (y, y') = diff' f x in x - y / y'
{-# INLINE findZeroNoEq #-}

-- | The point where the function takes a value, by Newton's method.
--
-- >>> last (take 10 (inverse sqrt 1 (sqrt 10)))
-- 10.0
inverse :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> a -> [a]
inverse f x0 = untilRepeated . inverseNoEq f x0
{-# INLINE inverse #-}

-- | 'inverse' without the stopping rule.
inverseNoEq :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> a -> [a]
inverseNoEq f x0 y = findZeroNoEq (\x -> f x - auto y) x0
{-# INLINE inverseNoEq #-}

-- | A fixed point of the function, by Newton's method.
--
-- >>> last (take 10 (fixedPoint cos 1))
-- 0.7390851332151607
fixedPoint :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> [a]
fixedPoint f = untilRepeated . fixedPointNoEq f
{-# INLINE fixedPoint #-}

-- | 'fixedPoint' without the stopping rule.
fixedPointNoEq :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> [a]
fixedPointNoEq f = findZeroNoEq (\x -> f x - x)
{-# INLINE fixedPointNoEq #-}

-- | A point where the derivative vanishes: Newton's method on the
-- derivative (a nested derivative).
--
-- >>> last (take 10 (extremum cos 1))
-- 0.0
extremum :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> [a]
extremum f = untilRepeated . extremumNoEq f
{-# INLINE extremum #-}

-- | 'extremum' without the stopping rule.
extremumNoEq :: (Element a, Fractional a) => (forall s. Reverse s a -> Reverse s a) -> a -> [a]
extremumNoEq f = findZeroNoEq (diff (recast . f . recast))
{-# INLINE extremumNoEq #-}

-- | The list up to the first element equal to the one before it.
untilRepeated :: Eq a => [a] -> [a]
untilRepeated (x : rest@(y : _))
  | x == y = [x]
  | otherwise = x : untilRepeated rest
untilRepeated xs = xs


------------------------------------------------------------------------------
-- Gradient descent

-- | Gradient descent from a starting point: the points it steps to.  The
-- step starts at 0.1, halves when a step would increase the function, and
-- doubles after 10 steps in a row that did not; the list ends when the
-- gradient is zero or the step size underflows to zero.
gradientDescent :: (Traversable f, Element a, Fractional a)
                => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> [f a]
gradientDescent f x0 = go x0 fx0 xgx0 0.1 (0 :: Int)
  where
    -- one function at many points: recorded once, replayed after
    gw = unsafePerformIO (tapedGradWith' (,) f)
    (fx0, xgx0) = gw x0
    go x fx xgx !eta !i
      | eta == 0 = []
      | fx1 > fx = go x fx xgx (eta / 2) 0
      | all ((== 0) . snd) xgx = []
      | otherwise = x1 : if i == 10 then go x1 fx1 xgx1 (eta * 2) 0
                                    else go x1 fx1 xgx1 eta (i + 1)
      where
        x1 = fmap (\(xi, gi) -> xi - eta * gi) xgx
        (fx1, xgx1) = gw x1

-- | 'gradientDescent' on the negated function.
gradientAscent :: (Traversable f, Element a, Fractional a)
               => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> [f a]
gradientAscent f = gradientDescent (negate . f)
{-# INLINE gradientAscent #-}

-- | Conjugate gradient descent (Fletcher-Reeves), each line search 20
-- Newton steps on the derivative along the direction.
--
-- >>> let sq x = x * x; rosenbrock [x, y] = sq (1 - x) + 100 * sq (y - sq x)
-- >>> rosenbrock (conjugateGradientDescent rosenbrock [0, 0] !! 5) < 0.1
-- True
conjugateGradientDescent :: (Traversable f, Element a, Fractional a)
                         => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> [f a]
conjugateGradientDescent f = conjugateGradientAscent (negate . f)
{-# INLINE conjugateGradientDescent #-}

-- | Conjugate gradient ascent: 'conjugateGradientDescent' uphill.  The
-- list ends at the first point with a NaN.
conjugateGradientAscent :: (Traversable f, Element a, Fractional a)
                        => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> [f a]
conjugateGradientAscent f x0 = takeWhile (all (\a -> a == a)) (go x0 d0 d0)
  where
    -- one function at many points: recorded once, replayed after
    gw = unsafePerformIO (tapedGradWith' (\_ d -> d) f)
    d0 = snd (gw x0)
    go x r d = x : go x1 r1 d1
      where
        -- the step along d that makes the derivative of f zero
        alpha = last (take 20 (extremum
          (\a -> f (zipT (\xi di -> auto xi + a * auto di) x d)) 0))
        x1 = zipT (\xi di -> xi + alpha * di) x d
        r1 = snd (gw x1)
        beta = dot r1 r1 / dot r r
        d1 = zipT (\ri di -> ri + beta * di) r1 d
    dot u v = sum (zipT (*) u v)

-- | Stochastic gradient descent: one step of size 0.001 per example, going
-- round the examples for ever.
stochasticGradientDescent :: (Traversable f, Element a, Fractional a)
                          => (forall s. e -> f (Reverse s a) -> Reverse s a) -> [e] -> f a -> [f a]
stochasticGradientDescent loss examples x0 = go xgx0 (tail (cycle examples))
  where
    eta = 0.001
    xgx0 = gradWith (,) (loss (head examples)) x0
    go xgx es = x1 : go xgx1 (tail es)
      where
        x1 = fmap (\(xi, gi) -> xi - eta * gi) xgx
        xgx1 = gradWith (,) (loss (head es)) x1

-- | Entry by entry, in the second argument's shape.
zipT :: (Traversable f, Foldable g) => (a -> b -> c) -> g a -> f b -> f c
zipT h as bs = fill bs (zipWith h (toList as) (toList bs))
{-# INLINE zipT #-}


------------------------------------------------------------------------------
-- Descent under convex constraints

-- | A constraint @c x <= 0@ (or an objective) of 'constrainedDescent': a
-- differentiable function to a scalar, kept in a constructor so that a
-- list can hold several.
data CC f a where
  CC :: (forall s. f (Reverse s a) -> Reverse s a) -> CC f a

-- | The value of a function at a point.
eval :: (Traversable f, Element a) => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> a
eval f x = fst (grad' f x)
{-# INLINE eval #-}

-- | @constrainedDescent objective constraints x0@ minimises a convex
-- objective subject to convex constraints @c x <= 0@, by @ad@'s barrier
-- method (Boyd and Vandenberghe, 11.3), step for step: the pairs are the
-- value of the stage's barrier function and the point, from the first
-- point that satisfies every constraint.  x0 need not be feasible: a first
-- phase minimises a slack s with @c x - s <= 0@ from s = 1 + the largest
-- constraint at x0 until s <= 0 (the list is empty if that does not
-- happen within 2^20 steps).  Each phase adds to its objective the
-- barrier @-(1/t) log (-c x)@ of every constraint (infinity where @c x >= 0@
-- or is NaN), for t = 2, 4, ..., 2^64, and runs 'gradientDescent' on each
-- from where the last stopped, 20 steps per t but the last, which goes on.
-- Without constraints: 'gradientDescent' with the objective's values.
constrainedDescent :: forall f a. (Traversable f, Element a)
                   => (forall s. f (Reverse s a) -> Reverse s a) -> [CC f a] -> f a -> [(a, f a)]
constrainedDescent objective [] x0 = [(eval objective x, x) | x <- gradientDescent objective x0]
constrainedDescent objective cs x0 =
  case dropWhile ((> 0) . fst) (take (2 ^ (20 :: Int)) feasibility) of
    [] -> []
    (_, Slack _ x) : _ -> barrierStages (CC objective) cs x (const True)
  where
    s0 = 1 + maximum [eval c x0 | CC c <- cs]
    slackened = [CC (\(Slack s x) -> c x - s) | CC c <- cs]
    feasibility = barrierStages (CC slack) slackened (Slack s0 x0) ((<= 0) . slack)
    slack (Slack s _) = s

-- | A point with a slack variable, for the first phase.
data Slack f a = Slack a (f a)
  deriving (Functor, Foldable, Traversable)

-- | The barrier method from a feasible point: the stages' descents, each
-- from the last point of the one before, from the first point that
-- satisfies done.
barrierStages :: forall g a. (Traversable g, Element a)
              => CC g a -> [CC g a] -> g a -> (g a -> Bool) -> [(a, g a)]
barrierStages objective cs x0 done = dropWhile (not . done . snd) (concat (go x0 barrierWeights))
  where
    stage t = descend (withBarrier objective cs t)
    -- the last stage goes on; it is not kept for a stage after it (which
    -- would hold every point it steps to)
    go _ [] = []
    go x [t] = [stage t x]
    go x (t : ts) = let kept = take 20 (stage t x) in kept : go (snd (last kept)) ts

-- | The weights of the barrier, one stage each.
barrierWeights :: Fractional a => [a]
barrierWeights = map realToFrac (take 64 (iterate (* 2) (2 :: Double)))

-- | The point and its value, then gradient descent's points with theirs.
descend :: (Traversable g, Element a) => CC g a -> g a -> [(a, g a)]
descend (CC f) x = (eval f x, x) : [(eval f y, y) | y <- gradientDescent f x]

-- | The objective plus the log barrier of each constraint at weight t.
withBarrier :: forall g a. (Traversable g, Element a) => CC g a -> [CC g a] -> a -> CC g a
withBarrier (CC o) cs t = CC (\x -> o x + sum [barrier c x | CC c <- cs])
  where
    barrier :: forall s'. (forall s. g (Reverse s a) -> Reverse s a) -> g (Reverse s' a) -> Reverse s' a
    barrier c x =
      let r = c x
      in if r >= 0 || isNaN r then 1 / 0 else negate (log (negate r)) / auto t
