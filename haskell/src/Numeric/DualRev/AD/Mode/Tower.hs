-- | The names of @ad@'s "Numeric.AD.Mode.Tower": every derivative of a
-- function of one variable at once, in a mode of its own (pure Haskell,
-- derivatives of all orders in one forward pass; see
-- "Numeric.DualRev.AD" for the rest of the API on the C engine).  As in
-- @ad@, 'diff' and 'du' here take functions of this mode's numbers
-- (@AD s (Tower a)@, "Numeric.DualRev.AD"'s are on the engine's).
module Numeric.DualRev.AD.Mode.Tower
  ( AD, Tower, auto
    -- * Taylor and Maclaurin series
  , taylor, taylor0, maclaurin, maclaurin0
    -- * Derivatives
  , diff, diff', diffs, diffs0, diffsF, diffs0F
    -- * Directional derivatives
  , du, du', duF, duF'
  , dus, dus0, dusF, dus0F
  ) where

import Numeric.DualRev.Internal.Overloaded.ModeNames (AD, Tower)
import Numeric.DualRev.Internal.Overloaded.Tower
import Numeric.DualRev.Internal.Overloaded.Value (auto)
