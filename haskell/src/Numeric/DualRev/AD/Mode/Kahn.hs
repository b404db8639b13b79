-- | The names of @ad@'s "Numeric.AD.Mode.Kahn" (its reverse mode over a
-- graph), on the dualrev engine: the same functions as
-- "Numeric.DualRev.AD.Mode.Reverse", the tape being the C engine's.
module Numeric.DualRev.AD.Mode.Kahn
  ( AD, Kahn, auto
    -- * Gradient
  , grad, grad', gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith'
    -- * Hessian
  , hessian, hessianF
    -- * Derivatives
  , diff, diff', diffF, diffF'
    -- * Directional derivatives
  , du, du', duF, duF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.ModeNames (AD, Kahn)
import Numeric.DualRev.Internal.Overloaded.Value
