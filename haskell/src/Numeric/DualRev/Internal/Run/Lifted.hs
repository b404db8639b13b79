{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- The standard numeric classes of a scalar whose operations are the
-- tape-recording functions of "Numeric.DualRev.Internal.Run.Ops", written
-- once.  Two scalars have them: the splices' 'D' seen from code outside any
-- block (recording on the calling thread's tape) and the overloaded mode's
-- @Reverse@ (recording on its own values' tape).  Each says how it runs a
-- recording ('Lifted') and takes its instances from 'Lifting' with
-- @deriving via@, so a method maps to its rule in one place.
module Numeric.DualRev.Internal.Run.Lifted
  ( Lifted (..)
  , Lifting (..)
  ) where

import Numeric (expm1, log1p)

import Numeric.DualRev.Internal.Run.AD (AD, D)
import Numeric.DualRev.Internal.Run.Ops

-- | How a scalar runs the recording functions.
class Lifted r where
  -- | A recording of one argument, as a pure operation.
  lift1 :: (D -> AD D) -> r -> r
  -- | A recording of two arguments, as a pure operation.
  lift2 :: (D -> D -> AD D) -> r -> r -> r
  -- | A constant.
  constant :: Double -> r
  -- | The value.
  primal :: r -> Double

-- | The numeric instances of a 'Lifted' scalar, for @deriving via@.
newtype Lifting r = Lifting r

instance Lifted r => Num (Lifting r) where
  fromInteger n = Lifting (constant (fromInteger n))
  Lifting a + Lifting b = Lifting (lift2 plusD a b)
  Lifting a - Lifting b = Lifting (lift2 minusD a b)
  Lifting a * Lifting b = Lifting (lift2 timesD a b)
  negate (Lifting a) = Lifting (lift1 negateD a)
  abs (Lifting a) = Lifting (lift1 absD a)
  signum (Lifting a) = Lifting (constant (signum (primal a)))
  {-# INLINE fromInteger #-}
  {-# INLINE (+) #-}
  {-# INLINE (-) #-}
  {-# INLINE (*) #-}
  {-# INLINE negate #-}
  {-# INLINE abs #-}
  {-# INLINE signum #-}

instance Lifted r => Fractional (Lifting r) where
  fromRational q = Lifting (constant (fromRational q))
  Lifting a / Lifting b = Lifting (lift2 divD a b)
  recip (Lifting a) = Lifting (lift1 recipD a)
  {-# INLINE fromRational #-}
  {-# INLINE (/) #-}
  {-# INLINE recip #-}

instance Lifted r => Floating (Lifting r) where
  pi = Lifting (constant pi)
  exp = un expD
  log = un logD
  sqrt = un sqrtD
  sin = un sinD
  cos = un cosD
  tan = un tanD
  asin = un asinD
  acos = un acosD
  atan = un atanD
  sinh = un sinhD
  cosh = un coshD
  tanh = un tanhD
  asinh = un asinhD
  acosh = un acoshD
  atanh = un atanhD
  (**) = bin powD
  logBase = bin logBaseD
  log1p = un log1pD
  expm1 = un expm1D
  {-# INLINE exp #-}
  {-# INLINE log #-}
  {-# INLINE sqrt #-}
  {-# INLINE sin #-}
  {-# INLINE cos #-}
  {-# INLINE tan #-}
  {-# INLINE tanh #-}
  {-# INLINE (**) #-}

un :: Lifted r => (D -> AD D) -> Lifting r -> Lifting r
un op (Lifting a) = Lifting (lift1 op a)
{-# INLINE un #-}

bin :: Lifted r => (D -> D -> AD D) -> Lifting r -> Lifting r -> Lifting r
bin op (Lifting a) (Lifting b) = Lifting (lift2 op a b)
{-# INLINE bin #-}

value :: Lifted r => Lifting r -> Double
value (Lifting a) = primal a
{-# INLINE value #-}

instance Lifted r => Eq (Lifting r) where
  a == b = value a == value b
  {-# INLINE (==) #-}

-- | Comparisons look at values only.
instance Lifted r => Ord (Lifting r) where
  compare a b = compare (value a) (value b)
  a < b = value a < value b
  a <= b = value a <= value b
  a > b = value a > value b
  a >= b = value a >= value b
  {-# INLINE (<) #-}
  {-# INLINE (<=) #-}
  {-# INLINE (>) #-}
  {-# INLINE (>=) #-}

instance Lifted r => Real (Lifting r) where
  toRational = toRational . value

-- | Rounding gives discrete results, which have no derivative; the
-- fractional part keeps the derivative of the argument.
instance Lifted r => RealFrac (Lifting r) where
  properFraction a =
    let n = truncate (value a) :: Integer
    in (fromInteger n, a - fromInteger n)
  truncate = truncate . value
  round = round . value
  floor = floor . value
  ceiling = ceiling . value

instance Lifted r => RealFloat (Lifting r) where
  floatRadix _ = floatRadix (0 :: Double)
  floatDigits _ = floatDigits (0 :: Double)
  floatRange _ = floatRange (0 :: Double)
  decodeFloat = decodeFloat . value
  encodeFloat m e = Lifting (constant (encodeFloat m e))
  isNaN = isNaN . value
  isInfinite = isInfinite . value
  isDenormalized = isDenormalized . value
  isNegativeZero = isNegativeZero . value
  isIEEE _ = True
  significand a = a * Lifting (constant (2 ^^ negate (exponent (value a))))
  scaleFloat k a = a * Lifting (constant (2 ^^ k))
  atan2 = bin atan2D
