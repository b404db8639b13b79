-- | The names of @ad@'s "Numeric.AD.Mode.Kahn.Double": those of
-- "Numeric.DualRev.AD.Mode.Kahn", which at 'Double' are these (element
-- types default to Double).
module Numeric.DualRev.AD.Mode.Kahn.Double
  ( module Numeric.DualRev.AD.Mode.Kahn
  ) where

import Numeric.DualRev.AD.Mode.Kahn
