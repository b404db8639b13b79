{-# LANGUAGE RankNTypes #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- Derivatives of every order of a function of several variables, as
-- @ad@'s sparse mode gives them: a 'Cofree' stream whose node at depth k
-- holds a k-th partial derivative, one branch per input ('grads',
-- 'jacobians'), and the value, gradient and Hessian of each output
-- ('hessianF'').
--
-- Depth k+1 is the Jacobian of depth k, taken by nesting one more
-- differentiation on the engine (each level a tape of its own, as
-- 'hessianF' nests two): the function of depth k returns its partials as a
-- container of containers ('Compose'), and the Jacobian of that function
-- is the function of depth k+1.  Each level is computed when it is first
-- demanded and kept, so reading the stream to depth k costs the nested
-- differentiations of depths 1 .. k once; @ad@ shares symmetric partials
-- (d2f/dxdy = d2f/dydx) that this computes twice.
module Numeric.DualRev.Internal.Overloaded.Higher
  ( grads, jacobians, hessianF'
  ) where

import Control.Comonad.Cofree (Cofree (..))
import Data.Array (Array, listArray, (!))
import Data.Foldable (toList)
import Data.Functor.Compose (Compose (..))
import Data.Functor.Identity (Identity (..))

import Numeric.DualRev.Internal.Overloaded.Drivers (jacobian, jacobian')
import Numeric.DualRev.Internal.Overloaded.Traversals (mapIndexed)
import Numeric.DualRev.Internal.Overloaded.Value

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.AD

-- | The value and every derivative of a function to a scalar: the value
-- at the root, and under it, per input, the stream of that partial
-- derivative.
--
-- >>> import Control.Comonad.Cofree (Cofree (..))
-- >>> let c = grads (\[x, y] -> x * x * y) [3, 2]
-- >>> case c of v :< [_ :< [dxx :< _, _], _] -> (v, dxx)
-- (18.0,4.0)
grads :: (Traversable f, Element a)
      => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> Cofree f a
grads f xs = runIdentity (jacobians (Identity . f) xs)
{-# INLINE grads #-}

-- | 'grads' of each output of a function between containers.
jacobians :: (Traversable f, Traversable g, Element a)
          => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> g (Cofree f a)
jacobians f xs = level (jacobian' f xs) f xs

-- | The streams of the outputs of the function h of depth k, given each
-- output's value and row of first partials: the value, over the streams of
-- the partials, which are the outputs of depth k+1 (their values are this
-- row; their rows, the Jacobian of the partials, are taken only when a
-- stream is read that deep).  Polymorphic recursion: the outputs'
-- container grows by one 'Compose' per level.
level :: forall f t a. (Traversable f, Traversable t, Element a)
      => t (a, f a) -> (forall s. f (Reverse s a) -> t (Reverse s a)) -> f a
      -> t (Cofree f a)
level here h xs = mapIndexed here (\i (v, _) -> v :< below ! i)
  where
    partials :: forall s. f (Reverse s a) -> Compose t f (Reverse s a)
    partials = partialsOf h
    known = Compose (fmap snd here)
    next = indexed (getCompose (jacobian partials xs))
    nextHere = mapIndexed known (\i d -> (d, next ! i))
    below = byPosition (getCompose (level nextHere partials xs))

-- | The first partials of h as a function: the outputs' rows, taken by a
-- differentiation nested in the caller's.
partialsOf :: (Traversable f, Traversable t, Element a)
           => (forall s. f (Reverse s a) -> t (Reverse s a))
           -> f (Reverse s' a) -> Compose t f (Reverse s' a)
partialsOf h ys = Compose (jacobian (fmap recast . h . fmap recast) ys)

-- | The elements of a container, by position.
byPosition :: Foldable t => t b -> Array Int b
byPosition c = let l = toList c in listArray (0, length l - 1) l

-- | The elements of a container of containers, by position (outer first).
indexed :: (Foldable t, Foldable f) => t (f b) -> Array Int b
indexed = byPosition . Compose

-- | The value, gradient and Hessian of each output: per output its value,
-- and per input the gradient's entry with the Hessian's row.
hessianF' :: (Traversable f, Traversable g, Element a)
          => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> g (a, f (a, f a))
hessianF' f xs = mapIndexed first (\i (v, row) -> (v, mapIndexed row (\j d -> (d, second ! (i * n + j)))))
  where
    first = jacobian' f xs
    n = length xs
    second = indexed (getCompose (jacobian (partialsOf f) xs))
