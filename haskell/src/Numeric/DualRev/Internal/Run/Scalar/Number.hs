{-# LANGUAGE DerivingVia #-}
{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE StandaloneDeriving #-}
{-# LANGUAGE UndecidableInstances #-}
{-# OPTIONS_GHC -Wno-orphans -Wno-simplifiable-class-constraints #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The dual scalar as an ordinary number: 'Num', 'Fractional', 'Floating',
-- 'RealFrac' and 'RealFloat' instances (those of
-- "Numeric.DualRev.Internal.Run.Scalar.Lifted") that record on the calling thread's
-- tape ("Numeric.DualRev.Internal.Run.Driver.Current"), so that polymorphic code
-- defined outside any block differentiates when a block calls it at 'D'.
-- Code inside blocks does not use them: it calls the tape-recording classes
-- of "Numeric.DualRev.Internal.Run.Scalar.Ops" directly, with the tape at hand.
--
-- The second half goes the other way: any type with the standard numeric
-- instances (a user vector type whose 'Num' instance a block declared, or
-- 'Data.Complex.Complex' of the dual scalar) has the tape-recording classes,
-- through those instances.
--
-- (Orphans: the classes and 'D' live in modules that cannot import these
-- instances' dependencies.)
module Numeric.DualRev.Internal.Run.Scalar.Number () where

import Numeric (expm1, log1p)

import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Driver.Current
import Numeric.DualRev.Internal.Run.Driver.Guard
import Numeric.DualRev.Internal.Run.Scalar.Lifted
import Numeric.DualRev.Internal.Run.Scalar.Ops

instance Lifted D where
  lift1 op a = onTape (op a)
  lift2 op a b = onTape (op a b)
  constant x = D x (-1)
  primal = primalD
  guardOn op (D x i) (D y j) = guardRaw op x i y j
  roundOn op (D x i) = guardRound op x i
  signumOn (D x i) = guardSignum x i
  {-# INLINE guardOn #-}
  {-# INLINE roundOn #-}

deriving via Lifting D instance Num D
deriving via Lifting D instance Fractional D
deriving via Lifting D instance Floating D
deriving via Lifting D instance Real D
deriving via Lifting D instance RealFrac D
deriving via Lifting D instance RealFloat D

------------------------------------------------------------------------------
-- Any standard number is a tape-recording one

instance {-# OVERLAPPABLE #-} (Num a, Force a) => DNum a where
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

instance {-# OVERLAPPABLE #-} (Fractional a, Force a) => DFractional a where
  divD a b = outsideD (a / b)
  recipD a = outsideD (recip a)
  powIntFracD a n = outsideD (a ^^ n)

instance {-# OVERLAPPABLE #-} (Floating a, Force a) => DFloating a where
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

instance {-# OVERLAPPABLE #-} (RealFloat a, Force a) => DRealFloat a where
  atan2D a b = outsideD (atan2 a b)
