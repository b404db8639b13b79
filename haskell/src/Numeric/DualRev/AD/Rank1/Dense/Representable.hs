{-# LANGUAGE FlexibleContexts #-}
-- | The names of @ad@'s "Numeric.AD.Rank1.Dense.Representable": gradients
-- and Jacobians of functions over a 'Representable' container, taking
-- functions of ordinary (rank-1) types over the scalar @'Repr' f a@.
--
-- The container need not be 'Traversable' (a record with a
-- 'Representable' instance derived through 'GHC.Generics.Generic1' will
-- do), so its positions cannot be handed to the engine's tape one by one:
-- these functions run dense forward mode in Haskell, every position's
-- derivative carried along in a container of the same shape, as @ad@'s
-- do.  For a 'Traversable' container the engine's reverse sweeps
-- ("Numeric.DualRev.AD.Rank1.Dense") cost one pass instead of work
-- proportional to the number of positions.
--
-- >>> :set -XDeriveGeneric -XDeriveFunctor
-- >>> import GHC.Generics (Generic1)
-- >>> import Data.Distributive (Distributive (..))
-- >>> import Data.Functor.Rep (Representable, distributeRep)
-- >>> data V3 a = V3 a a a deriving (Generic1, Functor, Show)
-- >>> instance Representable V3; instance Distributive V3 where distribute = distributeRep
-- >>> grad (\(V3 x y z) -> x * y + sin z) (V3 1 2 0)
-- V3 2.0 1.0 1.0
module Numeric.DualRev.AD.Rank1.Dense.Representable
  ( Repr, auto
    -- * Gradients
  , grad, grad', gradWith, gradWith'
    -- * Jacobians
  , jacobian, jacobian', jacobianWith, jacobianWith'
  ) where

import Data.Functor.Rep (Rep, Representable, liftR2)

import Numeric.DualRev.Internal.Overloaded.Representable
import Numeric.DualRev.Internal.Overloaded.Value (auto)

-- | The gradient of a scalar function of a container.
grad :: (Representable f, Eq (Rep f), Num a) => (f (Repr f a) -> Repr f a) -> f a -> f a
grad f = tangentRepr . f . seedRepr

-- | The value and the gradient.
grad' :: (Representable f, Eq (Rep f), Num a) => (f (Repr f a) -> Repr f a) -> f a -> (a, f a)
grad' f as = let r = f (seedRepr as) in (primalRepr r, tangentRepr r)

-- | The gradient, each entry combined with its input by @g@.
gradWith :: (Representable f, Eq (Rep f), Num a)
         => (a -> a -> b) -> (f (Repr f a) -> Repr f a) -> f a -> f b
gradWith g f as = liftR2 g as (grad f as)

-- | The value, and the gradient combined with the inputs by @g@.
gradWith' :: (Representable f, Eq (Rep f), Num a)
          => (a -> a -> b) -> (f (Repr f a) -> Repr f a) -> f a -> (a, f b)
gradWith' g f as = let (v, d) = grad' f as in (v, liftR2 g as d)

-- | The Jacobian: one gradient a result.
jacobian :: (Representable f, Eq (Rep f), Functor g, Num a)
         => (f (Repr f a) -> g (Repr f a)) -> f a -> g (f a)
jacobian f = fmap tangentRepr . f . seedRepr

-- | The Jacobian with each result's value.
jacobian' :: (Representable f, Eq (Rep f), Functor g, Num a)
          => (f (Repr f a) -> g (Repr f a)) -> f a -> g (a, f a)
jacobian' f = fmap (\r -> (primalRepr r, tangentRepr r)) . f . seedRepr

-- | The Jacobian, each entry combined with its input by @g@.
jacobianWith :: (Representable f, Eq (Rep f), Functor g, Num a)
             => (a -> a -> b) -> (f (Repr f a) -> g (Repr f a)) -> f a -> g (f b)
jacobianWith g f as = liftR2 g as <$> jacobian f as

-- | 'jacobianWith' with each result's value.
jacobianWith' :: (Representable f, Eq (Rep f), Functor g, Num a)
              => (a -> a -> b) -> (f (Repr f a) -> g (Repr f a)) -> f a -> g (a, f b)
jacobianWith' g f as = (\(v, d) -> (v, liftR2 g as d)) <$> jacobian' f as
