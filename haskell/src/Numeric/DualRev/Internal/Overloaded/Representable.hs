{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE TypeFamilies #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- Dense forward mode over a 'Representable' container: a value with its
-- derivative along every position of the container, kept in a container of
-- the same shape.  This is what @ad@'s @Dense.Representable@ modules
-- compute, for containers that are 'Representable' but not 'Traversable'
-- (a record of fields with a 'Generic1' 'Representable' instance): such a
-- container cannot be walked to hand its positions to the engine's tape,
-- but every position's derivative can be carried along at once.  Pure
-- Haskell, no tape; constants carry no derivatives at all.
module Numeric.DualRev.Internal.Overloaded.Representable
  ( Repr (..)
  , seedRepr, primalRepr, tangentRepr
  ) where

import Data.Functor.Rep (Representable (..), liftR2, pureRep)

import Numeric.DualRev.Internal.Overloaded.Value (Mode (..))

-- | A differentiable scalar of dense forward mode over positions of @f@:
-- a constant, or a value and its derivative along each position.
data Repr f a
  = Konst !a
  | Repr !a (f a)

-- | The inputs: the value at each position, with derivative 1 along that
-- position and 0 along the others.
seedRepr :: (Representable f, Eq (Rep f), Num a) => f a -> f (Repr f a)
seedRepr as =
  tabulate (\i -> Repr (index as i) (tabulate (\j -> if i == j then 1 else 0)))

primalRepr :: Repr f a -> a
primalRepr (Konst a) = a
primalRepr (Repr a _) = a

-- | The derivatives along every position (zeros for a constant).
tangentRepr :: (Representable f, Num a) => Repr f a -> f a
tangentRepr (Konst _) = pureRep 0
tangentRepr (Repr _ d) = d

-- the value f a and, along each position, the derivative scaled by f' a
lift1 :: (Representable f, Num a) => (a -> a) -> (a -> a) -> Repr f a -> Repr f a
lift1 f _ (Konst a) = Konst (f a)
lift1 f f' (Repr a d) = Repr (f a) (fmap (* f' a) d)

-- f a b with partials (fa, fb) at (a, b); only the active sides' tangents
lift2 :: (Representable f, Num a)
      => (a -> a -> a) -> (a -> a -> (a, a)) -> Repr f a -> Repr f a -> Repr f a
lift2 f _ (Konst a) (Konst b) = Konst (f a b)
lift2 f df (Konst a) (Repr b db) = let (_, pb) = df a b in Repr (f a b) (fmap (* pb) db)
lift2 f df (Repr a da) (Konst b) = let (pa, _) = df a b in Repr (f a b) (fmap (* pa) da)
lift2 f df (Repr a da) (Repr b db) =
  let (pa, pb) = df a b in Repr (f a b) (liftR2 (\x y -> pa * x + pb * y) da db)

instance (Representable f, Num a) => Num (Repr f a) where
  Konst a + Konst b = Konst (a + b)
  Konst a + Repr b db = Repr (a + b) db
  Repr a da + Konst b = Repr (a + b) da
  Repr a da + Repr b db = Repr (a + b) (liftR2 (+) da db)
  x - y = x + negate y
  (*) = lift2 (*) (\a b -> (b, a))
  negate = lift1 negate (const (-1))
  abs = lift1 abs signum
  signum = Konst . signum . primalRepr
  fromInteger = Konst . fromInteger

instance (Representable f, Fractional a) => Fractional (Repr f a) where
  (/) = lift2 (/) (\a b -> (recip b, negate a / (b * b)))
  recip = lift1 recip (\a -> negate (recip (a * a)))
  fromRational = Konst . fromRational

instance (Representable f, Floating a) => Floating (Repr f a) where
  pi = Konst pi
  exp = lift1 exp exp
  log = lift1 log recip
  sqrt = lift1 sqrt (\a -> recip (2 * sqrt a))
  x ** Konst n = lift1 (** n) (\a -> n * a ** (n - 1)) x
  x ** y = lift2 (**) (\a b -> (b * a ** (b - 1), a ** b * log a)) x y
  logBase b x = log x / log b
  sin = lift1 sin cos
  cos = lift1 cos (negate . sin)
  tan = lift1 tan (\a -> recip (cos a * cos a))
  asin = lift1 asin (\a -> recip (sqrt (1 - a * a)))
  acos = lift1 acos (\a -> negate (recip (sqrt (1 - a * a))))
  atan = lift1 atan (\a -> recip (1 + a * a))
  sinh = lift1 sinh cosh
  cosh = lift1 cosh sinh
  tanh = lift1 tanh (\a -> recip (cosh a * cosh a))
  asinh = lift1 asinh (\a -> recip (sqrt (a * a + 1)))
  acosh = lift1 acosh (\a -> recip (sqrt (a * a - 1)))
  atanh = lift1 atanh (\a -> recip (1 - a * a))

-- | Compared by value, as @ad@'s scalars are.
instance Eq a => Eq (Repr f a) where
  x == y = primalRepr x == primalRepr y

instance Ord a => Ord (Repr f a) where
  compare x y = compare (primalRepr x) (primalRepr y)

-- | Shown by value.
instance Show a => Show (Repr f a) where
  showsPrec d = showsPrec d . primalRepr

instance (Representable f, Num a) => Mode (Repr f a) where
  type Scalar (Repr f a) = a
  auto = Konst
  isKnownConstant (Konst _) = True
  isKnownConstant _ = False
  asKnownConstant (Konst a) = Just a
  asKnownConstant _ = Nothing
