{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- @ad@'s rank-1 tower mode: the tower functions with functions of
-- ordinary (rank-1) types over one fixed tower-mode number, each the
-- rank-2 function of "Numeric.DualRev.Internal.Overloaded.Tower" at it.
module Numeric.DualRev.Internal.Overloaded.Rank1Tower
  ( Rank1Tower
  , diff, diff', du, du', duF, duF'
  , diffs, diffs0, diffsF, diffs0F, dus, dus0, dusF, dus0F
  , taylor, taylor0, maclaurin, maclaurin0
  ) where

import qualified Numeric.DualRev.Internal.Overloaded.Tower as T

-- | The tower-mode number of the rank-1 functions.
type Rank1Tower a = T.Derivatives () a

-- a function at the fixed number, seen at any differentiation's
at1 :: (Rank1Tower a -> Rank1Tower a) -> T.Derivatives s a -> T.Derivatives s a
at1 f = T.retag . f . T.retag

atF :: Functor f => (f (Rank1Tower a) -> Rank1Tower a) -> f (T.Derivatives s a) -> T.Derivatives s a
atF f = T.retag . f . fmap T.retag

at1G :: Functor g => (Rank1Tower a -> g (Rank1Tower a)) -> T.Derivatives s a -> g (T.Derivatives s a)
at1G f = fmap T.retag . f . T.retag

atFG :: (Functor f, Functor g) => (f (Rank1Tower a) -> g (Rank1Tower a)) -> f (T.Derivatives s a) -> g (T.Derivatives s a)
atFG f = fmap T.retag . f . fmap T.retag

-- | The derivative.
diff :: Num a => (Rank1Tower a -> Rank1Tower a) -> a -> a
diff f = T.diff (at1 f)

-- | The value and the derivative.
diff' :: Num a => (Rank1Tower a -> Rank1Tower a) -> a -> (a, a)
diff' f = T.diff' (at1 f)

-- | The derivative in a direction: each input paired with its direction.
du :: (Functor f, Num a) => (f (Rank1Tower a) -> Rank1Tower a) -> f (a, a) -> a
du f = T.du (atF f)

-- | The value and the derivative in a direction.
du' :: (Functor f, Num a) => (f (Rank1Tower a) -> Rank1Tower a) -> f (a, a) -> (a, a)
du' f = T.du' (atF f)

-- | 'du' of each output.
duF :: (Functor f, Functor g, Num a) => (f (Rank1Tower a) -> g (Rank1Tower a)) -> f (a, a) -> g a
duF f = T.duF (atFG f)

-- | 'du'' of each output.
duF' :: (Functor f, Functor g, Num a) => (f (Rank1Tower a) -> g (Rank1Tower a)) -> f (a, a) -> g (a, a)
duF' f = T.duF' (atFG f)

-- | Every derivative (0-padded: 'diffs0').
diffs, diffs0 :: Num a => (Rank1Tower a -> Rank1Tower a) -> a -> [a]
diffs f = T.diffs (at1 f)
diffs0 f = T.diffs0 (at1 f)

-- | Every derivative of each output.
diffsF, diffs0F :: (Functor g, Num a) => (Rank1Tower a -> g (Rank1Tower a)) -> a -> g [a]
diffsF f = T.diffsF (at1G f)
diffs0F f = T.diffs0F (at1G f)

-- | Every derivative along a direction.
dus, dus0 :: (Functor f, Num a) => (f (Rank1Tower a) -> Rank1Tower a) -> f [a] -> [a]
dus f = T.dus (atF f)
dus0 f = T.dus0 (atF f)

-- | Every derivative of each output along a direction.
dusF, dus0F :: (Functor f, Functor g, Num a) => (f (Rank1Tower a) -> g (Rank1Tower a)) -> f [a] -> g [a]
dusF f = T.dusF (atFG f)
dus0F f = T.dus0F (atFG f)

-- | The Taylor series' terms.
taylor, taylor0 :: Fractional a => (Rank1Tower a -> Rank1Tower a) -> a -> a -> [a]
taylor f = T.taylor (at1 f)
taylor0 f = T.taylor0 (at1 f)

-- | The Maclaurin series' terms.
maclaurin, maclaurin0 :: Fractional a => (Rank1Tower a -> Rank1Tower a) -> a -> [a]
maclaurin f = T.maclaurin (at1 f)
maclaurin0 f = T.maclaurin0 (at1 f)
