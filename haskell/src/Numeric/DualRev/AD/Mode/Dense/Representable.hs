{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE RankNTypes #-}
-- | The names of @ad@'s "Numeric.AD.Mode.Dense.Representable": the
-- functions of "Numeric.DualRev.AD.Rank1.Dense.Representable" with @ad@'s
-- rank-2 types, @AD s ('Repr' f a)@ (dense forward mode in Haskell over a
-- 'Representable' container; see there).
--
-- >>> :set -XDeriveGeneric -XDeriveFunctor
-- >>> import GHC.Generics (Generic1)
-- >>> import Data.Distributive (Distributive (..))
-- >>> import Data.Functor.Rep (Representable, distributeRep)
-- >>> data V2 a = V2 a a deriving (Generic1, Functor, Show)
-- >>> instance Representable V2; instance Distributive V2 where distribute = distributeRep
-- >>> grad (\(V2 x y) -> x ** y) (V2 2 3)
-- V2 12.0 5.545177444479562
module Numeric.DualRev.AD.Mode.Dense.Representable
  ( AD, Repr, auto
    -- * Gradients
  , grad, grad', gradWith, gradWith'
    -- * Jacobians
  , jacobian, jacobian', jacobianWith, jacobianWith'
  ) where

import Data.Functor.Rep (Rep, Representable)

import Numeric.DualRev.Internal.Overloaded.ModeNames (AD)
import Numeric.DualRev.Internal.Overloaded.Representable (Repr)
import Numeric.DualRev.Internal.Overloaded.Value (auto)
import qualified Numeric.DualRev.AD.Rank1.Dense.Representable as R

-- | The gradient of a scalar function of a container.
grad :: (Representable f, Eq (Rep f), Num a)
     => (forall s. f (AD s (Repr f a)) -> AD s (Repr f a)) -> f a -> f a
grad f = R.grad f

-- | The value and the gradient.
grad' :: (Representable f, Eq (Rep f), Num a)
      => (forall s. f (AD s (Repr f a)) -> AD s (Repr f a)) -> f a -> (a, f a)
grad' f = R.grad' f

-- | The gradient, each entry combined with its input by @g@.
gradWith :: (Representable f, Eq (Rep f), Num a)
         => (a -> a -> b) -> (forall s. f (AD s (Repr f a)) -> AD s (Repr f a)) -> f a -> f b
gradWith g f = R.gradWith g f

-- | The value, and the gradient combined with the inputs by @g@.
gradWith' :: (Representable f, Eq (Rep f), Num a)
          => (a -> a -> b) -> (forall s. f (AD s (Repr f a)) -> AD s (Repr f a)) -> f a -> (a, f b)
gradWith' g f = R.gradWith' g f

-- | The Jacobian: one gradient a result.
jacobian :: (Representable f, Eq (Rep f), Functor g, Num a)
         => (forall s. f (AD s (Repr f a)) -> g (AD s (Repr f a))) -> f a -> g (f a)
jacobian f = R.jacobian f

-- | The Jacobian with each result's value.
jacobian' :: (Representable f, Eq (Rep f), Functor g, Num a)
          => (forall s. f (AD s (Repr f a)) -> g (AD s (Repr f a))) -> f a -> g (a, f a)
jacobian' f = R.jacobian' f

-- | The Jacobian, each entry combined with its input by @g@.
jacobianWith :: (Representable f, Eq (Rep f), Functor g, Num a)
             => (a -> a -> b) -> (forall s. f (AD s (Repr f a)) -> g (AD s (Repr f a))) -> f a -> g (f b)
jacobianWith g f = R.jacobianWith g f

-- | 'jacobianWith' with each result's value.
jacobianWith' :: (Representable f, Eq (Rep f), Functor g, Num a)
              => (a -> a -> b) -> (forall s. f (AD s (Repr f a)) -> g (AD s (Repr f a))) -> f a -> g (a, f b)
jacobianWith' g f = R.jacobianWith' g f
