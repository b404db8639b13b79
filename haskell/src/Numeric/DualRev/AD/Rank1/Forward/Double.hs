-- | The names of @ad@'s "Numeric.AD.Rank1.Forward.Double": those of
-- "Numeric.DualRev.AD.Rank1.Forward", with its scalar at Double.
module Numeric.DualRev.AD.Rank1.Forward.Double
  ( ForwardDouble
  , module Numeric.DualRev.AD.Rank1.Forward
  ) where

import Numeric.DualRev.AD.Rank1.Forward hiding (Forward)
import Numeric.DualRev.Internal.Overloaded.Rank1 (Rank1)

-- | The differentiable scalar at Double.
type ForwardDouble = Rank1 Double
