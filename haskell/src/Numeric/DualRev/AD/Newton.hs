-- | The names of @ad@'s "Numeric.AD.Newton", on the dualrev engine (see
-- "Numeric.DualRev.AD"): Newton's method ('findZero', 'inverse',
-- 'fixedPoint', 'extremum' and their @NoEq@ forms) and gradient descent,
-- with the same iterations as @ad@'s.
module Numeric.DualRev.AD.Newton
  ( module Numeric.DualRev.Internal.Overloaded.Optimize
  ) where

import Numeric.DualRev.Internal.Overloaded.Optimize
