-- | The names of @ad@'s "Numeric.AD.Rank1.Kahn.Float": those of
-- "Numeric.DualRev.AD.Rank1.Kahn", with its scalar at Float (computed in
-- Double, rounded back, as every Float differentiation here).
module Numeric.DualRev.AD.Rank1.Kahn.Float
  ( KahnFloat
  , module Numeric.DualRev.AD.Rank1.Kahn
  ) where

import Numeric.DualRev.AD.Rank1.Kahn hiding (Kahn)
import Numeric.DualRev.Internal.Overloaded.Rank1 (Rank1)

-- | The differentiable scalar at Float.
type KahnFloat = Rank1 Float
