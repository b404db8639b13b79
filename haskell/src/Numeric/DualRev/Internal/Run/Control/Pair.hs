{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The fork-join pair, as ordinary Haskell.
module Numeric.DualRev.Internal.Run.Control.Pair ((|*|)) where

infixr 0 |*|

-- | A strict pair whose two sides may be computed in parallel.  Outside
-- differentiable code it evaluates both sides (to weak head normal form) and
-- pairs them; inside, the two sides record as parallel jobs of the tape and
-- the reverse pass runs them in parallel.  With one capability (+RTS -N1)
-- they simply record one after the other, as a plain pair would; a side
-- goes only to an idle capability, so in nested pairs beyond the number of
-- capabilities both sides run in turn (still as two jobs of the tape).
--
-- > differentiable [d|
-- >   halves :: [Double] -> Double
-- >   halves xs =
-- >     let (l, r) = splitAt (length xs `div` 2) xs
-- >         (a, b) = sum (map sin l) |*| sum (map sin r)
-- >     in a + b
-- >   |]
-- >
-- > $(grad 'halves) [0, 0, 0]  ==  [1.0, 1.0, 1.0]
--
-- An 'iterate' list may be made on one side and consumed after the pair,
-- or made before the pair and consumed on one side: its elements are
-- recorded by the code that first demands them.  A list made before a pair
-- must not be consumed on both of its sides beyond the elements computed
-- before the pair (one side would use elements recorded by the other,
-- which the reverse pass may sweep first); demand them before the pair.
--
-- A gradient whose evaluation an asynchronous exception interrupts
-- ('System.Timeout.timeout', 'Control.Concurrent.killThread') waits for
-- the other side of the pairs it is in to stop, and can be evaluated again.
(|*|) :: a -> b -> (a, b)
a |*| b = a `seq` b `seq` (a, b)
