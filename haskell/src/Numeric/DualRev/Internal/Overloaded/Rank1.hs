{-# LANGUAGE RankNTypes #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- @ad@'s @Rank1@ API: the same functions with functions of ordinary
-- (rank-1) types, at one fixed differentiable scalar ('Rank1', the scalar
-- of the variadic gradients too) instead of one quantified per call.  As
-- in @ad@, nothing in the types keeps the values of two nested
-- differentiations apart (the perturbation confusion the rank-2 API rules
-- out): keep 'auto' for constants of an enclosing differentiation.  Each
-- function is the rank-2 one applied to the function seen at that scalar.
module Numeric.DualRev.Internal.Overloaded.Rank1
  ( Rank1
    -- * Gradients and Jacobians
  , grad, grad', gradWith, gradWith'
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobianT, jacobianWithT
  , grads, jacobians
    -- * Hessians
  , hessian, hessian', hessianF, hessianF', hessianProduct, hessianProduct'
    -- * Derivatives
  , diff, diff', diffF, diffF', du, du', duF, duF'
    -- * Newton's method and gradient descent
  , findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq, gradientDescent, gradientAscent
  ) where

import Control.Comonad.Cofree (Cofree)

import qualified Numeric.DualRev.Internal.Overloaded.Drivers as D
import qualified Numeric.DualRev.Internal.Overloaded.Higher as H
import qualified Numeric.DualRev.Internal.Overloaded.Optimize as O
import Numeric.DualRev.Internal.Overloaded.Value
import Numeric.DualRev.Internal.Overloaded.Variadic (Variadic)

-- | The differentiable scalar of the rank-1 functions (that of 'vgrad').
type Rank1 a = Variadic a

-- a function at the fixed scalar, seen at any differentiation's
at1 :: (Rank1 a -> Rank1 a) -> Reverse s a -> Reverse s a
at1 f = recast . f . recast

atF :: Functor f => (f (Rank1 a) -> Rank1 a) -> f (Reverse s a) -> Reverse s a
atF f = recast . f . fmap recast

at1G :: Functor g => (Rank1 a -> g (Rank1 a)) -> Reverse s a -> g (Reverse s a)
at1G f = fmap recast . f . recast

atFG :: (Functor f, Functor g) => (f (Rank1 a) -> g (Rank1 a)) -> f (Reverse s a) -> g (Reverse s a)
atFG f = fmap recast . f . fmap recast

grad :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f a -> f a
grad f = D.grad (atF f)

grad' :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f a -> (a, f a)
grad' f = D.grad' (atF f)

gradWith :: (Traversable f, Element a) => (a -> a -> b) -> (f (Rank1 a) -> Rank1 a) -> f a -> f b
gradWith g f = D.gradWith g (atF f)

gradWith' :: (Traversable f, Element a) => (a -> a -> b) -> (f (Rank1 a) -> Rank1 a) -> f a -> (a, f b)
gradWith' g f = D.gradWith' g (atF f)

jacobian :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (f a)
jacobian f = D.jacobian (atFG f)

jacobian' :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (a, f a)
jacobian' f = D.jacobian' (atFG f)

jacobianWith :: (Traversable f, Traversable g, Element a) => (a -> a -> b) -> (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (f b)
jacobianWith g f = D.jacobianWith g (atFG f)

jacobianWith' :: (Traversable f, Traversable g, Element a) => (a -> a -> b) -> (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (a, f b)
jacobianWith' g f = D.jacobianWith' g (atFG f)

jacobianT :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f a -> f (g a)
jacobianT f = D.jacobianT (atFG f)

jacobianWithT :: (Traversable f, Traversable g, Element a) => (a -> a -> b) -> (f (Rank1 a) -> g (Rank1 a)) -> f a -> f (g b)
jacobianWithT g f = D.jacobianWithT g (atFG f)

grads :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f a -> Cofree f a
grads f = H.grads (atF f)

jacobians :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (Cofree f a)
jacobians f = H.jacobians (atFG f)

hessian :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f a -> f (f a)
hessian f = D.hessian (atF f)

hessian' :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f a -> (a, f (a, f a))
hessian' f = D.hessian' (atF f)

hessianF :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (f (f a))
hessianF f = D.hessianF (atFG f)

hessianF' :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f a -> g (a, f (a, f a))
hessianF' f = H.hessianF' (atFG f)

hessianProduct :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f (a, a) -> f a
hessianProduct f = D.hessianProduct (atF f)

hessianProduct' :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f (a, a) -> f (a, a)
hessianProduct' f = D.hessianProduct' (atF f)

diff :: Element a => (Rank1 a -> Rank1 a) -> a -> a
diff f = D.diff (at1 f)

diff' :: Element a => (Rank1 a -> Rank1 a) -> a -> (a, a)
diff' f = D.diff' (at1 f)

diffF :: (Traversable g, Element a) => (Rank1 a -> g (Rank1 a)) -> a -> g a
diffF f = D.diffF (at1G f)

diffF' :: (Traversable g, Element a) => (Rank1 a -> g (Rank1 a)) -> a -> g (a, a)
diffF' f = D.diffF' (at1G f)

du :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f (a, a) -> a
du f = D.du (atF f)

du' :: (Traversable f, Element a) => (f (Rank1 a) -> Rank1 a) -> f (a, a) -> (a, a)
du' f = D.du' (atF f)

duF :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f (a, a) -> g a
duF f = D.duF (atFG f)

duF' :: (Traversable f, Traversable g, Element a) => (f (Rank1 a) -> g (Rank1 a)) -> f (a, a) -> g (a, a)
duF' f = D.duF' (atFG f)

findZero, findZeroNoEq, fixedPoint, fixedPointNoEq, extremum, extremumNoEq
  :: (Element a, Fractional a) => (Rank1 a -> Rank1 a) -> a -> [a]
findZero f = O.findZero (at1 f)
findZeroNoEq f = O.findZeroNoEq (at1 f)
fixedPoint f = O.fixedPoint (at1 f)
fixedPointNoEq f = O.fixedPointNoEq (at1 f)
extremum f = O.extremum (at1 f)
extremumNoEq f = O.extremumNoEq (at1 f)

inverse, inverseNoEq :: (Element a, Fractional a) => (Rank1 a -> Rank1 a) -> a -> a -> [a]
inverse f = O.inverse (at1 f)
inverseNoEq f = O.inverseNoEq (at1 f)

gradientDescent, gradientAscent :: (Traversable f, Element a, Fractional a) => (f (Rank1 a) -> Rank1 a) -> f a -> [f a]
gradientDescent f = O.gradientDescent (atF f)
gradientAscent f = O.gradientAscent (atF f)
