-- | Scalar functions beyond the Prelude's: 'sigmoid', 'softplus', 'relu',
-- 'erf', 'cbrt', 'hypot'.  Their values are the C engine's; inside a
-- @differentiable [d| ... |]@ block each records one node with the engine's
-- derivative (the same as the C API's @dr_sigmoid@, ...).
--
-- > import Numeric.DualRev
-- > import Numeric.DualRev.Functions (softplus)
-- >
-- > differentiable [d|
-- >   loss :: [Double] -> Double
-- >   loss ws = sum (map softplus ws)
-- >   |]
-- >
-- > main = print ($(grad 'loss) [-1, 0, 1])   -- the sigmoids of the weights
--
-- Names such as 'sigmoid' are common in user code: import this module
-- qualified, or import the functions you use by name.
module Numeric.DualRev.Functions
  ( module Numeric.DualRev.Internal.Run.Scalar.Functions
  ) where

import Numeric.DualRev.Internal.Run.Scalar.Functions
