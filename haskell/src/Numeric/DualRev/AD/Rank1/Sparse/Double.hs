-- | The names of @ad@'s "Numeric.AD.Rank1.Sparse.Double": those of
-- "Numeric.DualRev.AD.Rank1.Sparse", with its scalar at Double.
module Numeric.DualRev.AD.Rank1.Sparse.Double
  ( SparseDouble
  , module Numeric.DualRev.AD.Rank1.Sparse
  ) where

import Numeric.DualRev.AD.Rank1.Sparse hiding (Sparse)
import Numeric.DualRev.Internal.Overloaded.Rank1 (Rank1)

-- | The differentiable scalar at Double.
type SparseDouble = Rank1 Double
