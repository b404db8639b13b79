-- | The names of @ad@'s "Numeric.AD.Double": "Numeric.DualRev.AD", whose
-- functions at 'Double' are these (every dualrev tape holds Doubles; the
-- element types default to Double, and other 'Element' types are accepted
-- too).
module Numeric.DualRev.AD.Double
  ( module Numeric.DualRev.AD
  , ReverseDouble
  ) where

import Numeric.DualRev.AD
import Numeric.DualRev.AD.Mode.Reverse.Double (ReverseDouble)
