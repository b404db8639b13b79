-- | The names of @ad@'s "Numeric.AD.Mode.Reverse", on the dualrev engine
-- (see "Numeric.DualRev.AD").
module Numeric.DualRev.AD.Mode.Reverse
  ( Reverse, auto
    -- * Gradient
  , grad, grad', gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith'
    -- * Hessian
  , hessian, hessianF
    -- * Derivatives
  , diff, diff', diffF, diffF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.Value
