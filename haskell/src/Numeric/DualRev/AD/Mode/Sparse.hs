-- | The names of @ad@'s "Numeric.AD.Mode.Sparse", on the dualrev engine:
-- gradients, Jacobians and Hessians by its reverse sweeps (one
-- differentiable scalar serves every mode, see "Numeric.DualRev.AD"), and
-- derivatives of every order ('grads', 'jacobians') by nested
-- differentiations.
module Numeric.DualRev.AD.Mode.Sparse
  ( AD, Sparse, auto
    -- * Gradient
  , grad, grad', grads, gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobians
    -- * Hessian
  , hessian, hessian', hessianF, hessianF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.Higher
import Numeric.DualRev.Internal.Overloaded.ModeNames (AD, Sparse)
import Numeric.DualRev.Internal.Overloaded.Value
