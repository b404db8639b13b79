{-# LANGUAGE CPP #-}
{-# LANGUAGE BangPatterns #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The numeric primitives of transformed code.  Each class has an instance
-- for the dual scalar 'D', which records on the tape, and instances for the
-- discrete numeric types, which just compute.
module Numeric.DualRev.Internal.Run.Scalar.Ops
  ( DNum (..)
  , DFractional (..)
  , DFloating (..)
  , DRealFloat (..)
  , DRealToFrac (..)
  , DEnum (..)
  , node1
  , node2
  ) where

import Data.Int (Int64)

import Control.Exception (onException)
import Foreign.Marshal.Alloc (allocaBytes, free, mallocBytes)
import Foreign.Ptr (Ptr, castPtr, plusPtr)
import Foreign.Storable (pokeElemOff)

import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Driver.Guard (guardSignum)
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_order)
import Numeric.DualRev.Internal.Run.Library.Lists (mapD, zipWithD)
import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.ScalarFFI

class DNum a where
  plusD, minusD, timesD, subtractD :: a -> a -> AD a
  negateD, absD, signumD :: a -> AD a
  sumD, productD :: [a] -> AD a
  -- | @sum (map f xs)@ and @sum (zipWith f xs ys)@ without the list in
  -- between (the transform rewrites those two shapes to these): a long
  -- list is summed as it is produced, so it never lives in the heap.  The
  -- same value and derivatives as 'sumD' of the list.
  sumMapD :: (b -> AD a) -> [b] -> AD a
  sumMapD f xs = mapD f xs >>= sumD
  sumZipWithD :: (b -> AD (c -> AD a)) -> [b] -> [c] -> AD a
  sumZipWithD f xs ys = zipWithD f xs ys >>= sumD
  -- | @sum (zipWith (*) xs ys)@ (the transform rewrites that shape to
  -- this): for the dual scalar one statement, a single tape node over all
  -- the factors, where the general fused sum records a node per product
  -- and per addition.  The same value as 'sumZipWithD' of 'timesD'.
  sumZipWithTimesD :: [a] -> [a] -> AD a
  sumZipWithTimesD = sumZipWithD (\x -> pure (timesD x))
  {-# INLINE sumMapD #-}
  {-# INLINE sumZipWithD #-}
  {-# INLINE sumZipWithTimesD #-}
  -- | (^)
  powIntD :: Integral b => a -> b -> AD a
  -- | An arithmetic expression as one statement (the transform emits it
  -- for two or more of + - * / negate): @stmtAt k byOps@ runs @k toD
  -- fromD@, the statement's code, where @a@ is the dual scalar (@toD@ and
  -- @fromD@ are then identities), and @byOps@, the same operations one by
  -- one, at every other type.
  stmtAt :: ((a -> D) -> (D -> a) -> AD a) -> AD a -> AD a
  stmtAt _ byOps = byOps
  {-# INLINE stmtAt #-}

class DNum a => DFractional a where
  divD :: a -> a -> AD a
  recipD :: a -> AD a
  -- | (^^)
  powIntFracD :: Integral b => a -> b -> AD a

class DFractional a => DFloating a where
  expD, logD, sqrtD, sinD, cosD, tanD, asinD, acosD, atanD :: a -> AD a
  -- | 'Numeric.log1p', 'Numeric.expm1'
  log1pD, expm1D :: a -> AD a
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

-- Every partial derivative comes from the C engine's rule for the operation
-- (cbits/rules/scalar_rules.h), so a program gets the same derivatives here as
-- through the C API.  So do the values: those of + - * / negate abs sqrt are
-- IEEE-exact and computed here; every other one is C's (GHC's atan2, for
-- one, is not libm's).

-- | The result of a one-argument operation with value v at the argument:
-- C records its node; a constant argument gives a constant.
node1 :: Rec1 -> Double -> D -> AD D
node1 record !v (D x i)
  | i == -1 = pure (D v (-1))
  | otherwise = AD (\t -> D v <$> record t i x v)
{-# INLINE node1 #-}

-- | The same for two arguments (one of them may be a constant).
node2 :: Rec2 -> Double -> D -> D -> AD D
node2 record !v (D x i) (D y j)
  | i == -1 && j == -1 = pure (D v (-1))
  | otherwise = AD (\t -> D v <$> record t i j x y v)
{-# INLINE node2 #-}

-- | x^n for an integer n, as C's dr_powi.
powiD :: Integral b => D -> b -> AD D
powiD (D x i) n =
  let !m = fromIntegral n
      !v = c_fe_powi x m
  in if i == -1 then pure (D v (-1)) else AD (\t -> D v <$> c_fe_powi_rec t i x m v)
{-# INLINE powiD #-}

instance DNum D where
  plusD a@(D x _) b@(D y _) = node2 c_fe_add_rec (x + y) a b
  minusD a@(D x _) b@(D y _) = node2 c_fe_sub_rec (x - y) a b
  timesD a@(D x _) b@(D y _) = node2 c_fe_mul_rec (x * y) a b
  subtractD a b = minusD b a
  negateD a@(D x _) = node1 c_fe_neg_rec (negate x) a
  -- GHC's abs on Double is fabs, sign of NaN included
  absD a@(D x _) = node1 c_fe_abs_rec (abs x) a
  signumD (D x i) = pure (constD (guardSignum x i))
  sumD = sumDs
  sumMapD = sumMapFusedD
  sumZipWithD = sumZipWithFusedD
  sumZipWithTimesD = dotDs
  {-# INLINE sumMapD #-}
  {-# INLINE sumZipWithD #-}
  productD = go (constD 1)
    where go !acc [] = pure acc
          go !acc (x : rest) = timesD acc x >>= \acc' -> go acc' rest
  powIntD a n
    | n < 0 = error "Negative exponent"
    | otherwise = powiD a n
  stmtAt k _ = k id id
  {-# INLINE stmtAt #-}
  {-# INLINE plusD #-}
  {-# INLINE minusD #-}
  {-# INLINE timesD #-}
  {-# INLINE subtractD #-}
  {-# INLINE negateD #-}
  {-# INLINE absD #-}
  {-# INLINE signumD #-}
  {-# INLINE powIntD #-}

instance DFractional D where
  divD a@(D x _) b@(D y _) = node2 c_fe_div_rec (x / y) a b
  recipD = divD (constD 1)
  powIntFracD = powiD
  {-# INLINE divD #-}
  {-# INLINE recipD #-}
  {-# INLINE powIntFracD #-}

instance DFloating D where
  expD a@(D x _) = node1 c_fe_exp_rec (c_fe_exp x) a
  logD a@(D x _) = node1 c_fe_log_rec (c_fe_log x) a
  sqrtD a@(D x _) = node1 c_fe_sqrt_rec (sqrt x) a
  sinD a@(D x _) = node1 c_fe_sin_rec (c_fe_sin x) a
  cosD a@(D x _) = node1 c_fe_cos_rec (c_fe_cos x) a
  tanD a@(D x _) = node1 c_fe_tan_rec (c_fe_tan x) a
  asinD a@(D x _) = node1 c_fe_asin_rec (c_fe_asin x) a
  acosD a@(D x _) = node1 c_fe_acos_rec (c_fe_acos x) a
  atanD a@(D x _) = node1 c_fe_atan_rec (c_fe_atan x) a
  sinhD a@(D x _) = node1 c_fe_sinh_rec (c_fe_sinh x) a
  coshD a@(D x _) = node1 c_fe_cosh_rec (c_fe_cosh x) a
  tanhD a@(D x _) = node1 c_fe_tanh_rec (c_fe_tanh x) a
  asinhD a@(D x _) = node1 c_fe_asinh_rec (c_fe_asinh x) a
  acoshD a@(D x _) = node1 c_fe_acosh_rec (c_fe_acosh x) a
  atanhD a@(D x _) = node1 c_fe_atanh_rec (c_fe_atanh x) a
  log1pD a@(D x _) = node1 c_fe_log1p_rec (c_fe_log1p x) a
  expm1D a@(D x _) = node1 c_fe_expm1_rec (c_fe_expm1 x) a
  powD a@(D x _) b@(D y _) = node2 c_fe_pow_rec (c_fe_pow x y) a b
  logBaseD a@(D x _) b@(D y _) = node2 c_fe_logbase_rec (c_fe_logbase x y) a b
  {-# INLINE expD #-}
  {-# INLINE logD #-}
  {-# INLINE sqrtD #-}
  {-# INLINE sinD #-}
  {-# INLINE cosD #-}
  {-# INLINE tanD #-}
  {-# INLINE asinD #-}
  {-# INLINE acosD #-}
  {-# INLINE atanD #-}
  {-# INLINE sinhD #-}
  {-# INLINE coshD #-}
  {-# INLINE tanhD #-}
  {-# INLINE asinhD #-}
  {-# INLINE acoshD #-}
  {-# INLINE atanhD #-}
  {-# INLINE log1pD #-}
  {-# INLINE expm1D #-}
  {-# INLINE powD #-}
  {-# INLINE logBaseD #-}

instance DRealFloat D where
  atan2D y@(D yv _) x@(D xv _) = node2 c_fe_atan2_rec (c_fe_atan2 yv xv) y x
  {-# INLINE atan2D #-}

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
-- | The fused sums add as they go: a left fold of additions from 0, the
-- order 'sumDs' adds in, so the value is the same to the bit; its n-ary
-- node becomes a chain of additions with the same (unit) partials.  Both
-- loops are tail-recursive: no stack grows with the list.
sumMapFusedD :: (b -> AD D) -> [b] -> AD D
sumMapFusedD f = go (constD 0)
  where
    go !acc [] = pure acc
    go !acc (x : rest) = f x >>= addTerm acc >>= \acc' -> go acc' rest
{-# INLINE sumMapFusedD #-}

sumZipWithFusedD :: (b -> AD (c -> AD D)) -> [b] -> [c] -> AD D
sumZipWithFusedD f = go (constD 0)
  where
    go !acc (x : xs) (y : ys) = f x >>= \g -> g y >>= addTerm acc >>= \acc' -> go acc' xs ys
    go !acc _ _ = pure acc
{-# INLINE sumZipWithFusedD #-}

-- | One term of a fused sum.  A constant on either side is folded into the
-- value without a node (the id of the other side stands for the sum: its
-- partial is 1), as 'sumDs' leaves constants out of its node; on a tape of
-- order 2 (second order, replay) it is an addition like any other, so that
-- each id stands for its node's own value.
addTerm :: D -> D -> AD D
addTerm acc@(D s i) z@(D v j)
  | i /= -1 && j /= -1 = plusD acc z
  | i == -1 && j == -1 = pure (D (s + v) (-1))
  | otherwise = AD $ \t -> do
      o <- c_tape_order t
      if o == 2 then unAD (plusD acc z) t else pure (D (s + v) (max i j))
{-# INLINE addTerm #-}

-- | A sum of products as statements: the pairs go to C a batch at a time
-- (ids and values of both factors, in a buffer), and C records each batch
-- as one node over the sum so far and the batch's active factors, with the
-- partials of its mul rule (dr_fe_dot_rec).  The value is added up here as
-- 'sumZipWithFusedD' adds it, a left fold of the products from 0, so it is
-- the same to the bit.
--
-- The lists are walked once: each pair is evaluated as it is stored.  An
-- element may be a lazily recorded value whose recording sums products
-- too; its nodes go on the tape before this batch's node, which is all the
-- order the sweep needs, and a nested sum has its own buffer.  An element
-- that raises frees the buffer on the way out.  The buffer is C's (malloc),
-- one per call, not the Haskell heap's: one in the collector's allocation
-- area would bring on collections that cost more than the nodes saved.
dotDs :: [D] -> [D] -> AD D
dotDs xs0 ys0 = AD $ \t -> case (xs0, ys0) of
  (_ : _, _ : _) -> do
    buf <- mallocBytes (32 * batch)
    let ia = castPtr buf :: Ptr Int64
        xa = buf `plusPtr` (8 * batch) :: Ptr Double
        ib = buf `plusPtr` (16 * batch) :: Ptr Int64
        xb = buf `plusPtr` (24 * batch) :: Ptr Double
        -- k pairs of the batch stored; s0 the sum before the batch, acc
        -- its id; s the sum so far
        fill !k !s0 !acc !s (D x i : as) (D y j : bs) | k < batch = do
          pokeElemOff ia k i
          pokeElemOff xa k x
          pokeElemOff ib k j
          pokeElemOff xb k y
          fill (k + 1) s0 acc (s + x * y) as bs
        fill k s0 acc s as bs
          | k == 0 = pure (D s acc)
          | otherwise = do
              acc' <- c_fe_dot_rec t acc s0 (fromIntegral k) ia xa ib xb
              fill 0 s acc' s as bs
    r <- fill 0 0 (-1) 0 xs0 ys0 `onException` free buf
    free buf
    pure r
  _ -> pure (D 0 (-1))
  where
    -- C's batch (DR_FE_DOT_CHUNK), so that each batch is one node
    batch = fromIntegral c_fe_dot_chunk :: Int
sumDs :: [D] -> AD D
sumDs xs = AD $ \t -> do
  o <- c_tape_order t
  if o == 2 then unAD (sumByAdditions xs) t else sumNode t xs

-- | On a tape of order 2, a sum is its additions from 0, each a node, in
-- the order 'sumNode' adds its value up (so the value is the same): an
-- n-ary node of given partials has no value the engine could replay.
sumByAdditions :: [D] -> AD D
sumByAdditions = go (constD 0)
  where
    go !acc [] = pure acc
    go !acc (x : rest) = plusD acc x >>= \acc' -> go acc' rest

-- | The sum as one n-ary node over its active terms.
sumNode :: Ptr CTape -> [D] -> IO D
sumNode t xs = do
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
