-- | The names of @ad@'s "Numeric.AD.Mode.Forward", on the dualrev engine:
-- the same results, computed by the engine's reverse mode and its tangent
-- sweep (one differentiable scalar serves every mode, see
-- "Numeric.DualRev.AD"), so a program importing this module compiles and
-- gives the forward-mode results.
module Numeric.DualRev.AD.Mode.Forward
  ( AD, Forward, auto
    -- * Gradient
  , grad, grad', gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith'
    -- * Transposed Jacobian
  , jacobianT, jacobianWithT
    -- * Hessian product
  , hessianProduct, hessianProduct'
    -- * Derivatives
  , diff, diff', diffF, diffF'
    -- * Directional derivatives
  , du, du', duF, duF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.ModeNames (AD, Forward)
import Numeric.DualRev.Internal.Overloaded.Value
