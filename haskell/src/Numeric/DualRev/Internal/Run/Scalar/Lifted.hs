{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- The standard numeric classes of a scalar whose operations are the
-- tape-recording functions of "Numeric.DualRev.Internal.Run.Scalar.Ops", written
-- once.  Two scalars have them: the splices' 'D' seen from code outside any
-- block (recording on the calling thread's tape) and the overloaded mode's
-- @Reverse@ (recording on its own values' tape).  Each says how it runs a
-- recording ('Lifted') and takes its instances from 'Lifting' with
-- @deriving via@, so a method maps to its rule in one place.
module Numeric.DualRev.Internal.Run.Scalar.Lifted
  ( Lifted (..)
  , Lifting (..)
  ) where

import Foreign.C.Types (CInt)
import Numeric (expm1, log1mexp, log1p, log1pexp)

import Numeric.DualRev.Internal.Run.Scalar.AD (AD, D)
import Numeric.DualRev.Internal.Run.Driver.Guard
import Numeric.DualRev.Internal.Run.Scalar.FunctionDuals (softplusD)
import Numeric.DualRev.Internal.Run.Scalar.Ops

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
  -- | A comparison's outcome (a 'guardRaw' kind), recorded as a guard
  -- where the scalar's recording keeps them (the splices' taped
  -- functions); by default nothing is recorded.
  guardOn :: CInt -> r -> r -> Bool -> Bool
  guardOn _ _ _ out = out
  -- | A rounding's result, with the guard that the value rounds to the
  -- same ('guardRound'); by default nothing is recorded.
  roundOn :: CInt -> r -> b -> b
  roundOn _ _ r = r
  -- | 'signum' of the value, with the guards that fix it ('guardSignum').
  signumOn :: r -> Double
  signumOn = signum . primal
  -- | 'floatRadix', which must not look at its argument: Double's, or a
  -- mark of the type's own (the overloaded mode's scalar marks itself by
  -- a negative radix, "Numeric.DualRev.Internal.Overloaded.Value").
  radixOf :: r -> Integer
  radixOf _ = floatRadix (0 :: Double)

-- | The numeric instances of a 'Lifted' scalar, for @deriving via@.
newtype Lifting r = Lifting r

instance Lifted r => Num (Lifting r) where
  fromInteger n = Lifting (constant (fromInteger n))
  Lifting a + Lifting b = Lifting (lift2 plusD a b)
  Lifting a - Lifting b = Lifting (lift2 minusD a b)
  Lifting a * Lifting b = Lifting (lift2 timesD a b)
  negate (Lifting a) = Lifting (lift1 negateD a)
  abs (Lifting a) = Lifting (lift1 absD a)
  signum (Lifting a) = Lifting (constant (signumOn a))
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
  -- log (1 + e^x) is the engine's softplus (no overflow for large x); log
  -- (1 - e^x), x <= 0, by the form that keeps its digits on each side of
  -- -log 2 (Maechler's): the defaults lose them
  log1pexp = un softplusD
  log1mexp a
    | cmp gGt (>) a (Lifting (constant (negate (log 2)))) = log (negate (expm1 a))
    | otherwise = log1p (negate (exp a))
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

-- | A comparison of two values, as a guard where the scalar keeps them.
cmp :: Lifted r => CInt -> (Double -> Double -> Bool) -> Lifting r -> Lifting r -> Bool
cmp op f (Lifting a) (Lifting b) = guardOn op a b (f (primal a) (primal b))
{-# INLINE cmp #-}

-- | The value exactly, as a guard that it stays the same (what a function
-- that reads its bits, such as 'toRational' or 'decodeFloat', needs).
exactly :: Lifted r => Lifting r -> Double
exactly a@(Lifting r) = cmp gEq (==) a (Lifting (constant v)) `seq` v
  where v = primal r

instance Lifted r => Eq (Lifting r) where
  (==) = cmp gEq (==)
  (/=) = cmp gNe (/=)
  {-# INLINE (==) #-}
  {-# INLINE (/=) #-}

-- | Comparisons look at values only ('compare' asks what Double's asks,
-- in its order: less, then equal).
instance Lifted r => Ord (Lifting r) where
  compare a b
    | a < b = LT
    | a == b = EQ
    | otherwise = GT
  (<) = cmp gLt (<)
  (<=) = cmp gLe (<=)
  (>) = cmp gGt (>)
  (>=) = cmp gGe (>=)
  {-# INLINE (<) #-}
  {-# INLINE (<=) #-}
  {-# INLINE (>) #-}
  {-# INLINE (>=) #-}

instance Lifted r => Real (Lifting r) where
  toRational = toRational . exactly

-- | Rounding gives discrete results, which have no derivative; the
-- fractional part keeps the derivative of the argument.
instance Lifted r => RealFrac (Lifting r) where
  properFraction a =
    let n = truncate a :: Integer
    in (fromInteger n, a - fromInteger n)
  truncate (Lifting a) = roundOn gTrunc a (truncate (primal a))
  round (Lifting a) = roundOn gRint a (round (primal a))
  floor (Lifting a) = roundOn gFloor a (floor (primal a))
  ceiling (Lifting a) = roundOn gCeil a (ceiling (primal a))

instance Lifted r => RealFloat (Lifting r) where
  floatRadix (Lifting r) = radixOf r
  floatDigits _ = floatDigits (0 :: Double)
  floatRange _ = floatRange (0 :: Double)
  decodeFloat = decodeFloat . exactly
  encodeFloat m e = Lifting (constant (encodeFloat m e))
  isNaN a@(Lifting r) = guardOn gIsNaN r (constant 0) (isNaN (value a))
  isInfinite a@(Lifting r) = guardOn gIsInf r (constant 0) (isInfinite (value a))
  isDenormalized = isDenormalized . exactly
  isNegativeZero a@(Lifting r) =
    cmp gEq (==) a (Lifting (constant 0)) && guardOn gSignBit r (constant 0) (isNegativeZero (value a))
  isIEEE _ = True
  significand a = a * Lifting (constant (2 ^^ negate (exponent (exactly a))))
  scaleFloat k a = a * Lifting (constant (2 ^^ k))
  atan2 = bin atan2D
