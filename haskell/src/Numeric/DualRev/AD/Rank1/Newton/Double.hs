-- | The names of @ad@'s "Numeric.AD.Rank1.Newton.Double": Newton's method at Double,
-- taking functions of ordinary (rank-1) types over one fixed
-- differentiable scalar (see "Numeric.DualRev.AD.Rank1.Forward").
module Numeric.DualRev.AD.Rank1.Newton.Double
  ( findZero, inverse, fixedPoint, extremum
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
