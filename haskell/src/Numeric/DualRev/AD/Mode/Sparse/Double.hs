-- | The names of @ad@'s "Numeric.AD.Mode.Sparse.Double": those of
-- "Numeric.DualRev.AD.Mode.Sparse", which at 'Double' are these (element
-- types default to Double).
module Numeric.DualRev.AD.Mode.Sparse.Double
  ( module Numeric.DualRev.AD.Mode.Sparse
  ) where

import Numeric.DualRev.AD.Mode.Sparse
