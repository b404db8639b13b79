-- | The names of @ad@'s "Numeric.AD.Halley.Double": those of
-- "Numeric.DualRev.AD.Halley", which at 'Double' are these (element types
-- default to Double).
module Numeric.DualRev.AD.Halley.Double
  ( findZero, inverse, fixedPoint, extremum
  ) where

import Numeric.DualRev.Internal.Overloaded.Halley (extremum, findZero, fixedPoint, inverse)
