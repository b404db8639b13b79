{-# LANGUAGE RankNTypes #-}
-- | The names of @ad@'s "Numeric.AD.Mode.Reverse.Double", on the dualrev
-- engine (see "Numeric.DualRev.AD"): every dualrev tape holds Doubles, so
-- 'ReverseDouble' is 'Reverse' at 'Double'.  As in @ad@, the functions
-- here take and give Doubles (those of "Numeric.DualRev.AD" take any
-- 'Element' type).
module Numeric.DualRev.AD.Mode.Reverse.Double
  ( ReverseDouble, auto
    -- * Gradient
  , grad, grad', gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith'
    -- * Hessian
  , hessian, hessianF
    -- * Derivatives
  , diff, diff', diffF, diffF'
  ) where

import qualified Numeric.DualRev.Internal.Overloaded.Drivers as D
import Numeric.DualRev.Internal.Overloaded.Value

-- | The differentiable Double.
type ReverseDouble s = Reverse s Double

-- | The gradient.
grad :: Traversable f => (forall s. f (ReverseDouble s) -> ReverseDouble s) -> f Double -> f Double
grad = D.grad
{-# INLINE grad #-}

-- | The value and the gradient.
grad' :: Traversable f => (forall s. f (ReverseDouble s) -> ReverseDouble s) -> f Double -> (Double, f Double)
grad' = D.grad'
{-# INLINE grad' #-}

-- | The gradient, each entry combined with its input.
gradWith :: Traversable f => (Double -> Double -> b) -> (forall s. f (ReverseDouble s) -> ReverseDouble s)
         -> f Double -> f b
gradWith = D.gradWith
{-# INLINE gradWith #-}

-- | The value and 'gradWith'.
gradWith' :: Traversable f => (Double -> Double -> b) -> (forall s. f (ReverseDouble s) -> ReverseDouble s)
          -> f Double -> (Double, f b)
gradWith' = D.gradWith'
{-# INLINE gradWith' #-}

-- | The Jacobian, a row per output.
jacobian :: (Traversable f, Traversable g) => (forall s. f (ReverseDouble s) -> g (ReverseDouble s))
         -> f Double -> g (f Double)
jacobian = D.jacobian
{-# INLINE jacobian #-}

-- | The Jacobian, each row with its output's value.
jacobian' :: (Traversable f, Traversable g) => (forall s. f (ReverseDouble s) -> g (ReverseDouble s))
          -> f Double -> g (Double, f Double)
jacobian' = D.jacobian'
{-# INLINE jacobian' #-}

-- | The Jacobian, each entry combined with its input.
jacobianWith :: (Traversable f, Traversable g) => (Double -> Double -> b)
             -> (forall s. f (ReverseDouble s) -> g (ReverseDouble s)) -> f Double -> g (f b)
jacobianWith = D.jacobianWith
{-# INLINE jacobianWith #-}

-- | 'jacobianWith', each row with its output's value.
jacobianWith' :: (Traversable f, Traversable g) => (Double -> Double -> b)
              -> (forall s. f (ReverseDouble s) -> g (ReverseDouble s)) -> f Double -> g (Double, f b)
jacobianWith' = D.jacobianWith'
{-# INLINE jacobianWith' #-}

-- | The Hessian.
hessian :: Traversable f => (forall s. f (ReverseDouble s) -> ReverseDouble s) -> f Double -> f (f Double)
hessian f = D.hessian f
{-# INLINE hessian #-}

-- | The Hessian of each output.
hessianF :: (Traversable f, Traversable g) => (forall s. f (ReverseDouble s) -> g (ReverseDouble s))
         -> f Double -> g (f (f Double))
hessianF f = D.hessianF f
{-# INLINE hessianF #-}

-- | The derivative.
diff :: (forall s. ReverseDouble s -> ReverseDouble s) -> Double -> Double
diff = D.diff
{-# INLINE diff #-}

-- | The value and the derivative.
diff' :: (forall s. ReverseDouble s -> ReverseDouble s) -> Double -> (Double, Double)
diff' = D.diff'
{-# INLINE diff' #-}

-- | The derivative of each output.
diffF :: Traversable g => (forall s. ReverseDouble s -> g (ReverseDouble s)) -> Double -> g Double
diffF = D.diffF
{-# INLINE diffF #-}

-- | The value and the derivative of each output.
diffF' :: Traversable g => (forall s. ReverseDouble s -> g (ReverseDouble s)) -> Double -> g (Double, Double)
diffF' = D.diffF'
{-# INLINE diffF' #-}
