-- | The names of @ad@'s "Numeric.AD.Mode.Reverse.Double", on the dualrev
-- engine (see "Numeric.DualRev.AD"): every dualrev tape holds Doubles, so
-- 'ReverseDouble' is 'Reverse' at 'Double'.
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

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.Value

-- | The differentiable Double.
type ReverseDouble s = Reverse s Double
