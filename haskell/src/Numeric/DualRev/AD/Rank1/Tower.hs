-- | The names of @ad@'s "Numeric.AD.Rank1.Tower": every derivative of a
-- function of one variable, taking functions of ordinary (rank-1) types
-- over one fixed tower-mode number, @Tower a@.
module Numeric.DualRev.AD.Rank1.Tower
  ( Tower, auto
  , module Numeric.DualRev.Internal.Overloaded.Rank1Tower
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1Tower hiding (Rank1Tower)
import qualified Numeric.DualRev.Internal.Overloaded.Rank1Tower as R
import Numeric.DualRev.Internal.Overloaded.Value (auto)

-- | The tower-mode number.
type Tower a = R.Rank1Tower a
