{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE UndecidableInstances #-}
{-# OPTIONS_GHC -Wno-orphans #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The dual scalar as an ordinary number: 'Num', 'Fractional', 'Floating',
-- 'RealFrac' and 'RealFloat' instances that record on the calling thread's
-- tape ("Numeric.DualRev.Internal.Run.Current"), so that polymorphic code
-- defined outside any block differentiates when a block calls it at 'D'.
-- Code inside blocks does not use them: it calls the tape-recording classes
-- of "Numeric.DualRev.Internal.Run.Ops" directly, with the tape at hand.
--
-- The second half goes the other way: any type with the standard numeric
-- instances (a user vector type whose 'Num' instance a block declared, or
-- 'Data.Complex.Complex' of the dual scalar) has the tape-recording classes,
-- through those instances.
--
-- (Orphans: the classes and 'D' live in modules that cannot import these
-- instances' dependencies.)
module Numeric.DualRev.Internal.Run.Scalar () where

import Numeric (expm1, log1p)

import Numeric.DualRev.Internal.Run.AD
import Numeric.DualRev.Internal.Run.Current
import Numeric.DualRev.Internal.Run.Ops

instance Num D where
  fromInteger n = D (fromInteger n) (-1)
  a + b = onTape (plusD a b)
  a - b = onTape (minusD a b)
  a * b = onTape (timesD a b)
  negate a = onTape (negateD a)
  abs a = onTape (absD a)
  signum a = onTape (signumD a)

instance Fractional D where
  fromRational r = D (fromRational r) (-1)
  a / b = onTape (divD a b)
  recip a = onTape (recipD a)

instance Floating D where
  pi = D pi (-1)
  exp a = onTape (expD a)
  log a = onTape (logD a)
  sqrt a = onTape (sqrtD a)
  sin a = onTape (sinD a)
  cos a = onTape (cosD a)
  tan a = onTape (tanD a)
  asin a = onTape (asinD a)
  acos a = onTape (acosD a)
  atan a = onTape (atanD a)
  sinh a = onTape (sinhD a)
  cosh a = onTape (coshD a)
  tanh a = onTape (tanhD a)
  asinh a = onTape (asinhD a)
  acosh a = onTape (acoshD a)
  atanh a = onTape (atanhD a)
  a ** b = onTape (powD a b)
  logBase a b = onTape (logBaseD a b)
  log1p a = onTape (log1pD a)
  expm1 a = onTape (expm1D a)

instance Real D where
  toRational (D x _) = toRational x

-- | Rounding gives discrete results, which have no derivative; the
-- fractional part keeps the derivative of the argument.
instance RealFrac D where
  properFraction d =
    let n = truncate (primalD d) :: Integer
    in (fromInteger n, d - fromInteger n)
  truncate (D x _) = truncate x
  round (D x _) = round x
  floor (D x _) = floor x
  ceiling (D x _) = ceiling x

instance RealFloat D where
  floatRadix _ = floatRadix (0 :: Double)
  floatDigits _ = floatDigits (0 :: Double)
  floatRange _ = floatRange (0 :: Double)
  decodeFloat (D x _) = decodeFloat x
  encodeFloat m e = D (encodeFloat m e) (-1)
  isNaN (D x _) = isNaN x
  isInfinite (D x _) = isInfinite x
  isDenormalized (D x _) = isDenormalized x
  isNegativeZero (D x _) = isNegativeZero x
  isIEEE _ = True
  significand d = d * D (2 ^^ negate (exponent (primalD d))) (-1)
  scaleFloat k d = d * D (2 ^^ k) (-1)
  atan2 a b = onTape (atan2D a b)

------------------------------------------------------------------------------
-- Any standard number is a tape-recording one

instance {-# OVERLAPPABLE #-} Num a => DNum a where
  plusD a b = outsideD (a + b)
  minusD a b = outsideD (a - b)
  timesD a b = outsideD (a * b)
  subtractD a b = outsideD (b - a)
  negateD a = outsideD (negate a)
  absD a = outsideD (abs a)
  signumD a = outsideD (signum a)
  sumD xs = outsideD (sum xs)
  productD xs = outsideD (product xs)
  powIntD a n = outsideD (a ^ n)

instance {-# OVERLAPPABLE #-} Fractional a => DFractional a where
  divD a b = outsideD (a / b)
  recipD a = outsideD (recip a)
  powIntFracD a n = outsideD (a ^^ n)

instance {-# OVERLAPPABLE #-} Floating a => DFloating a where
  expD a = outsideD (exp a)
  logD a = outsideD (log a)
  sqrtD a = outsideD (sqrt a)
  sinD a = outsideD (sin a)
  cosD a = outsideD (cos a)
  tanD a = outsideD (tan a)
  asinD a = outsideD (asin a)
  acosD a = outsideD (acos a)
  atanD a = outsideD (atan a)
  sinhD a = outsideD (sinh a)
  coshD a = outsideD (cosh a)
  tanhD a = outsideD (tanh a)
  asinhD a = outsideD (asinh a)
  acoshD a = outsideD (acosh a)
  atanhD a = outsideD (atanh a)
  powD a b = outsideD (a ** b)
  logBaseD a b = outsideD (logBase a b)
  log1pD a = outsideD (log1p a)
  expm1D a = outsideD (expm1 a)

instance {-# OVERLAPPABLE #-} RealFloat a => DRealFloat a where
  atan2D a b = outsideD (atan2 a b)
