{-# LANGUAGE BangPatterns, TemplateHaskell #-}
-- | The eval "llsq": the least-squares objective 0.5 |s - T x|^2, with
-- T[i][j] = t_i^j at the n points t_i evenly spaced over [-1, 1] and
-- s_i = sign t_i, and its gradient in x.  The objective is written over
-- lists; its gradient over arrays, as one writes a fit for speed: the
-- design matrix T built for the call (rows of powers, in a storable
-- vector), the residual a matrix-vector product (BLAS), as dualrev-c does;
-- x read into a @Vec@ and the gradient written out of one outside the
-- timed runs, as the C tool's are.  As the C tool's, the memory of T and s
-- is allocated once for an evaluate, with its input, and every run writes
-- them again: a fresh matrix at every run was fresh pages to fault in
-- (2.7 page faults a run at n = 16, a sixth of its time; a thousand at
-- n = 4096).
module Llsq (functions, llsq, llsqGrad) where

import Control.DeepSeq (NFData (..))
import qualified Data.Vector.Storable as VS
import qualified Data.Vector.Storable.Mutable as MVS
import System.IO.Unsafe (unsafePerformIO)

import Numeric.DualRev
import Numeric.DualRev.Array

import Eval

differentiable [d|
  llsq :: (Int, [Double]) -> Double
  llsq (n, x) = sum [ residual i * residual i | i <- [0 .. n - 1] ] / 2
    where
      residual i = let t = -1 + fromIntegral i * 2 / (fromIntegral n - 1)
                   in signum t - sum (zipWith (*) x (iterate (* t) 1))

  -- the same objective, T and s given as data
  llsqArrays :: (Vec, Constant Mat, Constant Vec) -> Double
  llsqArrays (x, t, s) = let r = vsub (constant s) (matVec (constant t) x)
                         in vdot r r / 2
  |]

-- | A gradient's input: n, x, and the memory that every run writes T and
-- s into (allocated with the input, outside the timed runs).
data GradIn = GradIn !Int !Vec !(MVS.IOVector Double) !(MVS.IOVector Double)

instance NFData GradIn where
  rnf (GradIn n x _ _) = rnf n `seq` rnf x

gradIn :: (Int, Vec) -> GradIn
gradIn (n, x) = unsafePerformIO (GradIn n x <$> MVS.unsafeNew (n * vlength x) <*> MVS.unsafeNew n)
{-# NOINLINE gradIn #-}

-- | The n x m design matrix (row i: 1, t_i, t_i^2, ...) and the signs,
-- written into the given memory.  (Each row's powers a running product;
-- every entry written, so not zeroed first: MVS.new's memset was 15 % of a
-- call at n = 16.)
design :: Int -> Int -> MVS.IOVector Double -> MVS.IOVector Double -> IO (Mat, Vec)
design n m tv sv = do
  rows 0
  mapM_ (\i -> MVS.unsafeWrite sv i (signum (point i))) [0 .. n - 1]
  t <- VS.unsafeFreeze tv
  s <- VS.unsafeFreeze sv
  pure (matFromStorable n m t, vecFromStorable s)
  where
    point :: Int -> Double
    point i = -1 + fromIntegral i * 2 / (fromIntegral n - 1)
    rows :: Int -> IO ()
    rows !i
      | i == n = pure ()
      | otherwise = powers (i * m) (point i) 0 1 >> rows (i + 1)
    powers :: Int -> Double -> Int -> Double -> IO ()
    powers !base !t !j !p
      | j == m = pure ()
      | otherwise = MVS.unsafeWrite tv (base + j) p >> powers base t (j + 1) (p * t)

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate).  T and s are data: each run writes the
-- same values into the same memory, which the tape reads at a replay, so
-- a run finds them the last run's very arrays, equal without a comparison.
llsqGrad :: GradIn -> Vec
llsqGrad (GradIn n x tv sv) = unsafePerformIO $ do
  (t, s) <- design n (vlength x) tv sv
  let (g, _, _) = llsqTaped (x, Constant t, Constant s)
  pure g
{-# NOINLINE llsqGrad #-}

llsqTaped :: (Vec, Constant Mat, Constant Vec) -> (Vec, Constant Mat, Constant Vec)
llsqTaped = $(tapedGrad 'llsqArrays)
{-# NOINLINE llsqTaped #-}

functions :: [(String, Function)]
functions =
  [ ("primal", function input llsq (scalar "llsq"))
  , ("gradient", function (fmap (gradIn . fmap vfromList) . input) llsqGrad (vector "llsq" . vtoList)) ]
  where input v = (,) <$> field "n" v <*> field "x" v
