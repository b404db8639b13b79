-- | The names of @ad@'s "Numeric.AD.Halley": Halley's method (Newton's
-- with the second derivative), on the tower mode's numbers (see
-- "Numeric.DualRev.AD.Mode.Tower"); the iterates are @ad@'s.
module Numeric.DualRev.AD.Halley
  ( findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq
  ) where

import Numeric.DualRev.Internal.Overloaded.Halley
