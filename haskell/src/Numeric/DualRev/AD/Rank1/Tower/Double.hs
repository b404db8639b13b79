-- | The names of @ad@'s "Numeric.AD.Rank1.Tower.Double": those of
-- "Numeric.DualRev.AD.Rank1.Tower", with its number at Double.
module Numeric.DualRev.AD.Rank1.Tower.Double
  ( TowerDouble
  , module Numeric.DualRev.AD.Rank1.Tower
  ) where

import Numeric.DualRev.AD.Rank1.Tower hiding (Tower)
import Numeric.DualRev.Internal.Overloaded.Rank1Tower (Rank1Tower)

-- | The tower-mode number at Double.
type TowerDouble = Rank1Tower Double
