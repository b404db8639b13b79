-- | The names of @ad@'s "Numeric.AD.Rank1.Halley": Halley's method
-- ("Numeric.DualRev.AD.Halley") taking functions of ordinary (rank-1)
-- types over the rank-1 tower number ("Numeric.DualRev.AD.Rank1.Tower").
module Numeric.DualRev.AD.Rank1.Halley
  ( findZero, findZeroNoEq, inverse, inverseNoEq, fixedPoint, fixedPointNoEq
  , extremum, extremumNoEq
  ) where

import qualified Numeric.DualRev.Internal.Overloaded.Halley as H
import Numeric.DualRev.Internal.Overloaded.Rank1Tower (Rank1Tower)
import Numeric.DualRev.Internal.Overloaded.Tower (Derivatives, retag)

-- a function at the rank-1 number, seen at any differentiation's
at1 :: (Rank1Tower a -> Rank1Tower a) -> Derivatives s a -> Derivatives s a
at1 f = retag . f . retag

findZero, findZeroNoEq, fixedPoint, fixedPointNoEq, extremum, extremumNoEq
  :: (Fractional a, Eq a) => (Rank1Tower a -> Rank1Tower a) -> a -> [a]
findZero f = H.findZero (at1 f)
findZeroNoEq f = H.findZeroNoEq (at1 f)
fixedPoint f = H.fixedPoint (at1 f)
fixedPointNoEq f = H.fixedPointNoEq (at1 f)
extremum f = H.extremum (at1 f)
extremumNoEq f = H.extremumNoEq (at1 f)

inverse, inverseNoEq :: (Fractional a, Eq a) => (Rank1Tower a -> Rank1Tower a) -> a -> a -> [a]
inverse f = H.inverse (at1 f)
inverseNoEq f = H.inverseNoEq (at1 f)
