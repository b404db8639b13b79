-- | The names of @ad@'s "Numeric.AD.Mode.Forward.Double": those of
-- "Numeric.DualRev.AD.Mode.Forward", which at 'Double' are these (element
-- types default to Double).
module Numeric.DualRev.AD.Mode.Forward.Double
  ( module Numeric.DualRev.AD.Mode.Forward
  ) where

import Numeric.DualRev.AD.Mode.Forward
