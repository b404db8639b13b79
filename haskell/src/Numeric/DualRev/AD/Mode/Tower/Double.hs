-- | The names of @ad@'s "Numeric.AD.Mode.Tower.Double": those of
-- "Numeric.DualRev.AD.Mode.Tower", which at 'Double' are these (element
-- types default to Double).
module Numeric.DualRev.AD.Mode.Tower.Double
  ( module Numeric.DualRev.AD.Mode.Tower
  ) where

import Numeric.DualRev.AD.Mode.Tower
