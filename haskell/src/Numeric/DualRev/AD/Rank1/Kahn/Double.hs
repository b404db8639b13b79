-- | The names of @ad@'s "Numeric.AD.Rank1.Kahn.Double": those of
-- "Numeric.DualRev.AD.Rank1.Kahn", with its scalar at Double.
module Numeric.DualRev.AD.Rank1.Kahn.Double
  ( KahnDouble
  , module Numeric.DualRev.AD.Rank1.Kahn
  ) where

import Numeric.DualRev.AD.Rank1.Kahn hiding (Kahn)
import Numeric.DualRev.Internal.Overloaded.Rank1 (Rank1)

-- | The differentiable scalar at Double.
type KahnDouble = Rank1 Double
