-- | The names of @ad@'s "Numeric.AD.Rank1.Halley.Double": those of
-- "Numeric.DualRev.AD.Rank1.Halley", which at 'Double' are these.
module Numeric.DualRev.AD.Rank1.Halley.Double
  ( findZero, inverse, fixedPoint, extremum
  ) where

import Numeric.DualRev.AD.Rank1.Halley (extremum, findZero, fixedPoint, inverse)
