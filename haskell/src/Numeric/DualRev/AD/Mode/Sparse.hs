-- | The names of @ad@'s "Numeric.AD.Mode.Sparse", on the dualrev engine:
-- gradients, Jacobians and Hessians by its reverse sweeps (one
-- differentiable scalar serves every mode, see "Numeric.DualRev.AD").
-- Left out: @grads@, @jacobians@ and @hessianF'@, whose results are
-- @Cofree@ streams of every order.
module Numeric.DualRev.AD.Mode.Sparse
  ( Sparse, auto
    -- * Gradient
  , grad, grad', gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith'
    -- * Hessian
  , hessian, hessian', hessianF
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.Value

-- | The differentiable scalar ('Reverse').
type Sparse s a = Reverse s a
