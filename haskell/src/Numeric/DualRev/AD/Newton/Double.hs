-- | The names of @ad@'s "Numeric.AD.Newton.Double": those of
-- "Numeric.DualRev.AD.Newton", which at 'Double' are these.
module Numeric.DualRev.AD.Newton.Double
  ( module Numeric.DualRev.AD.Newton
  ) where

import Numeric.DualRev.AD.Newton
