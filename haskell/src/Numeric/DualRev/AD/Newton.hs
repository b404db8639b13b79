-- | The names of @ad@'s "Numeric.AD.Newton", on the dualrev engine (see
-- "Numeric.DualRev.AD"): Newton's method and gradient descent, with the
-- same iterations as @ad@'s.
module Numeric.DualRev.AD.Newton
  ( -- * Newton's method
    findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq
    -- * Gradient descent
  , gradientDescent, gradientAscent
  , conjugateGradientDescent, conjugateGradientAscent
  , stochasticGradientDescent
  ) where

import Numeric.DualRev.Internal.Overloaded.Optimize
