{-# LANGUAGE CPP #-}
{-# LANGUAGE BangPatterns #-}
-- | The numeric primitives of transformed code.  Each class has an instance
-- for the dual scalar 'D', which records on the tape, and instances for the
-- discrete numeric types, which just compute.
module Numeric.DualRev.Internal.Ops
  ( DNum (..)
  , DFractional (..)
  , DFloating (..)
  , DRealFloat (..)
  , DRealToFrac (..)
  , DEnum (..)
  ) where

import Data.Int (Int64)

import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (Ptr, castPtr, plusPtr)
import Foreign.Storable (pokeElemOff)

import Numeric.DualRev.Internal.AD
import Numeric.DualRev.Internal.FFI (c_recordn)

class DNum a where
  plusD, minusD, timesD, subtractD :: a -> a -> AD a
  negateD, absD, signumD :: a -> AD a
  sumD, productD :: [a] -> AD a
  -- | (^)
  powIntD :: Integral b => a -> b -> AD a

class DNum a => DFractional a where
  divD :: a -> a -> AD a
  recipD :: a -> AD a
  -- | (^^)
  powIntFracD :: Integral b => a -> b -> AD a

class DFractional a => DFloating a where
  expD, logD, sqrtD, sinD, cosD, tanD, asinD, acosD, atanD :: a -> AD a
  sinhD, coshD, tanhD, asinhD, acoshD, atanhD :: a -> AD a
  powD, logBaseD :: a -> a -> AD a

class DFloating a => DRealFloat a where
  atan2D :: a -> a -> AD a

-- | 'realToFrac' in differentiable code produces a @Double@.
class DRealToFrac a where
  realToFracD :: a -> D

-- | Arithmetic sequences.
class DEnum a where
  enumFromToD :: a -> a -> AD [a]
  enumFromThenToD :: a -> a -> a -> AD [a]

------------------------------------------------------------------------------
-- The dual scalar

instance DNum D where
  plusD a@(D x _) b@(D y _) = rec2 (x + y) a 1 b 1
  minusD a@(D x _) b@(D y _) = rec2 (x - y) a 1 b (-1)
  timesD a@(D x _) b@(D y _) = rec2 (x * y) a y b x
  subtractD a b = minusD b a
  negateD a@(D x _) = rec1 (negate x) a (-1)
  absD a@(D x _) = rec1 (abs x) a (if x > 0 then 1 else if x < 0 then -1 else 0)
  signumD (D x _) = pure (constD (signum x))
  sumD = sumDs
  productD = go (constD 1)
    where go !acc [] = pure acc
          go !acc (x : rest) = timesD acc x >>= \acc' -> go acc' rest
  powIntD a@(D x _) n
    | n < 0 = error "Negative exponent"
    | n == 0 = pure (constD 1)
    | otherwise = rec1 (x ^ n) a (fromIntegral n * x ^ (n - 1))
  {-# INLINE plusD #-}
  {-# INLINE minusD #-}
  {-# INLINE timesD #-}
  {-# INLINE subtractD #-}
  {-# INLINE negateD #-}
  {-# INLINE absD #-}
  {-# INLINE signumD #-}
  {-# INLINE powIntD #-}

instance DFractional D where
  divD a@(D x _) b@(D y _) = let q = x / y in rec2 q a (1 / y) b (negate q / y)
  recipD a@(D x _) = let r = 1 / x in rec1 r a (negate r * r)
  powIntFracD a@(D x _) n
    | n == 0 = pure (constD 1)
    | otherwise = rec1 (x ^^ n) a (fromIntegral n * x ^^ (n - 1))
  {-# INLINE divD #-}
  {-# INLINE recipD #-}

instance DFloating D where
  expD a@(D x _) = let e = exp x in rec1 e a e
  logD a@(D x _) = rec1 (log x) a (1 / x)
  sqrtD a@(D x _) = let r = sqrt x in rec1 r a (0.5 / r)
  sinD a@(D x _) = rec1 (sin x) a (cos x)
  cosD a@(D x _) = rec1 (cos x) a (negate (sin x))
  tanD a@(D x _) = let r = tan x in rec1 r a (1 + r * r)
  asinD a@(D x _) = rec1 (asin x) a (1 / sqrt (1 - x * x))
  acosD a@(D x _) = rec1 (acos x) a (-1 / sqrt (1 - x * x))
  atanD a@(D x _) = rec1 (atan x) a (1 / (1 + x * x))
  sinhD a@(D x _) = rec1 (sinh x) a (cosh x)
  coshD a@(D x _) = rec1 (cosh x) a (sinh x)
  tanhD a@(D x _) = let r = tanh x in rec1 r a (1 - r * r)
  asinhD a@(D x _) = rec1 (asinh x) a (1 / sqrt (x * x + 1))
  acoshD a@(D x _) = rec1 (acosh x) a (1 / sqrt (x * x - 1))
  atanhD a@(D x _) = rec1 (atanh x) a (1 / (1 - x * x))
  powD a@(D x _) b@(D y _) =
    let r = x ** y
        da = if y == 0 then 0 else y * x ** (y - 1)
        db = if r == 0 then 0 else r * log x
    in rec2 r a da b db
  logBaseD a@(D x _) b@(D y _) =
    -- log y / log x
    let lx = log x
        r = log y / lx
    in rec2 r a (negate r / (x * lx)) b (1 / (y * lx))
  {-# INLINE expD #-}
  {-# INLINE logD #-}
  {-# INLINE sqrtD #-}
  {-# INLINE sinD #-}
  {-# INLINE cosD #-}
  {-# INLINE tanhD #-}
  {-# INLINE powD #-}

instance DRealFloat D where
  atan2D y@(D yv _) x@(D xv _) =
    let h = xv * xv + yv * yv
    in rec2 (atan2 yv xv) y (xv / h) x (negate yv / h)

instance DRealToFrac D where
  realToFracD = id
instance DRealToFrac Int where
  realToFracD = constD . fromIntegral
instance DRealToFrac Integer where
  realToFracD = constD . fromInteger
instance DRealToFrac Int64 where
  realToFracD = constD . fromIntegral

instance DEnum D where
  enumFromToD a@(D x _) (D y _) =
    mapM (\k -> rec1 (x + fromIntegral k) a 1) [0 .. floor (y + 0.5 - x) :: Int]
  -- element k is x + k * (x2 - x): its partials are 1 - k and k
  enumFromThenToD a@(D x _) b@(D x2 _) (D y _) =
    mapM (\(k, v) -> rec2 v a (1 - k) b k) (zip [0 :: Double ..] (takeWhile ok [x, x2 ..]))
    where ok v = if x2 >= x then v <= y + (x2 - x) / 2 else v >= y + (x2 - x) / 2
instance DEnum Int where
  enumFromToD a b = pure [a .. b]
  enumFromThenToD a b c = pure [a, b .. c]
instance DEnum Integer where
  enumFromToD a b = pure [a .. b]
  enumFromThenToD a b c = pure [a, b .. c]
instance DEnum Char where
  enumFromToD a b = pure [a .. b]
  enumFromThenToD a b c = pure [a, b .. c]

-- | A sum of many duals as ONE n-ary tape node (16 bytes per active term
-- instead of a 32-byte node per addition), built without intermediate lists.
sumDs :: [D] -> AD D
sumDs xs = AD $ \t -> do
  let count !n !s [] = (n, s)
      count !n !s (D x i : rest) = count (if i == -1 then n else n + 1) (s + x) rest
      (active, total) = count (0 :: Int) 0 xs
  if active == 0
    then pure (D total (-1))
    else allocaBytes (16 * active) $ \buf -> do
      let ps = buf `plusPtr` (8 * active) :: Ptr Double
          fill !_ [] = pure ()
          fill !k (D _ i : rest)
            | i == -1 = fill k rest
            | otherwise = do
                pokeElemOff (castPtr buf) k i
                pokeElemOff ps k 1
                fill (k + 1) rest
      fill 0 xs
      D total <$> c_recordn t (fromIntegral active) (castPtr buf) ps

------------------------------------------------------------------------------
-- Discrete numbers: no tape

#define DISCRETE_NUM(T) \
instance DNum T where { \
  plusD a b = pure (a + b); minusD a b = pure (a - b); timesD a b = pure (a * b); \
  subtractD a b = pure (b - a); negateD a = pure (negate a); absD a = pure (abs a); \
  signumD a = pure (signum a); sumD xs = pure (sum xs); productD xs = pure (product xs); \
  powIntD a n = pure (a ^ n); \
  {-# INLINE plusD #-}; {-# INLINE minusD #-}; {-# INLINE timesD #-} }

DISCRETE_NUM(Int)
DISCRETE_NUM(Integer)
DISCRETE_NUM(Int64)
