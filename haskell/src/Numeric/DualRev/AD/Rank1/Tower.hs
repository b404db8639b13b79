-- | The names of @ad@'s "Numeric.AD.Rank1.Tower": every derivative of
-- a function of one variable, taking functions of ordinary (rank-1) types
-- over one fixed tower-mode number, @Tower a@.
module Numeric.DualRev.AD.Rank1.Tower
  ( Tower, auto
  , taylor, taylor0, maclaurin, maclaurin0
  , diff, diff', diffs, diffs0, diffsF, diffs0F
  , du, du', dus, dus0, duF, duF', dusF, dus0F
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
  ( Rank1Tower, taylor, taylor0, maclaurin, maclaurin0, diffs, diffs0, diffsF, diffs0F
  , dus, dus0, dusF, dus0F, towerDiff, towerDiff', towerDu, towerDu', towerDuF, towerDuF' )
import Numeric.DualRev.Internal.Overloaded.Value (auto)

-- | The tower-mode number.
type Tower a = Rank1Tower a

-- | The derivative.
diff :: Num a => (Rank1Tower a -> Rank1Tower a) -> a -> a
diff = towerDiff

-- | The value and the derivative.
diff' :: Num a => (Rank1Tower a -> Rank1Tower a) -> a -> (a, a)
diff' = towerDiff'

-- | The derivative in a direction.
du :: (Functor f, Num a) => (f (Rank1Tower a) -> Rank1Tower a) -> f (a, a) -> a
du = towerDu

-- | The value and the derivative in a direction.
du' :: (Functor f, Num a) => (f (Rank1Tower a) -> Rank1Tower a) -> f (a, a) -> (a, a)
du' = towerDu'

-- | 'du' of each output.
duF :: (Functor f, Functor g, Num a) => (f (Rank1Tower a) -> g (Rank1Tower a)) -> f (a, a) -> g a
duF = towerDuF

-- | 'du'' of each output.
duF' :: (Functor f, Functor g, Num a) => (f (Rank1Tower a) -> g (Rank1Tower a)) -> f (a, a) -> g (a, a)
duF' = towerDuF'
