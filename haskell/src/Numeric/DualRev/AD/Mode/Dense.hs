-- | The names of @ad@'s "Numeric.AD.Mode.Dense", on the dualrev engine
-- (see "Numeric.DualRev.AD"): the same results by reverse sweeps.
module Numeric.DualRev.AD.Mode.Dense
  ( AD, Dense, auto
    -- * Gradient
  , grad, grad', gradWith, gradWith'
    -- * Jacobian
  , jacobian, jacobian', jacobianWith, jacobianWith'
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.ModeNames (AD, Dense)
import Numeric.DualRev.Internal.Overloaded.Value
