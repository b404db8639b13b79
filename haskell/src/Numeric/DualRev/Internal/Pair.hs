-- | The fork-join pair, as ordinary Haskell.
module Numeric.DualRev.Internal.Pair ((|*|)) where

infixr 0 |*|

-- | A strict pair whose two sides may be computed in parallel.  Outside
-- differentiable code it evaluates both sides (to weak head normal form) and
-- pairs them; inside, the two sides record as parallel jobs of the tape and
-- the reverse pass runs them in parallel.  With one capability (+RTS -N1)
-- they simply record one after the other, as a plain pair would; a side
-- goes only to an idle capability, so in nested pairs beyond the number of
-- capabilities both sides run in turn (still as two jobs of the tape).
(|*|) :: a -> b -> (a, b)
a |*| b = a `seq` b `seq` (a, b)
