-- | The names of @ad@'s "Numeric.AD.Rank1.Newton": Newton's method and gradient descent,
-- taking functions of ordinary (rank-1) types over one fixed
-- differentiable scalar (see "Numeric.DualRev.AD.Rank1.Forward").
module Numeric.DualRev.AD.Rank1.Newton
  ( findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq, gradientDescent, gradientAscent
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
