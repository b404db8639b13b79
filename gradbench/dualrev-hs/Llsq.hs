{-# LANGUAGE BangPatterns, TemplateHaskell #-}
-- | The eval "llsq": the least-squares objective 0.5 |s - T x|^2, with
-- T[i][j] = t_i^j at the n points t_i evenly spaced over [-1, 1] and
-- s_i = sign t_i, and its gradient in x.  The objective is written over
-- lists; its gradient over arrays, as one writes a fit for speed: the
-- design matrix T built for the call (rows of powers, in a storable
-- vector), the residual a matrix-vector product (BLAS), as dualrev-c does;
-- x read into a @Vec@ and the gradient written out of one outside the
-- timed runs, as the C tool's are.
module Llsq (functions, llsq, llsqGrad) where

import qualified Data.Vector.Storable as VS
import qualified Data.Vector.Storable.Mutable as MVS

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

-- | The n x m design matrix (row i: 1, t_i, t_i^2, ...) and the signs.
-- (Written in place, each row's powers a running product; every entry
-- written, so not zeroed first: MVS.new's memset was 15 % of a call at n = 16.)
design :: Int -> Int -> (Mat, Vec)
design n m =
  ( matFromStorable n m (VS.create (MVS.unsafeNew (n * m) >>= \v -> rows v 0 >> pure v))
  , vecFromStorable (VS.generate n (signum . point)) )
  where
    point :: Int -> Double
    point i = -1 + fromIntegral i * 2 / (fromIntegral n - 1)
    rows v !i
      | i == n = pure ()
      | otherwise = powers v (i * m) (point i) 0 1 >> rows v (i + 1)
    powers v !base !t !j !p
      | j == m = pure ()
      | otherwise = MVS.unsafeWrite v (base + j) p >> powers v base t (j + 1) (p * t)

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate; T and s, data, are compared with the
-- recorded ones).
llsqGrad :: (Int, Vec) -> Vec
llsqGrad (n, x) =
  let (t, s) = design n (vlength x)
  in fst3 (llsqTaped (x, Constant t, Constant s))
  where fst3 (a, _, _) = a

llsqTaped :: (Vec, Constant Mat, Constant Vec) -> (Vec, Constant Mat, Constant Vec)
llsqTaped = $(tapedGrad 'llsqArrays)
{-# NOINLINE llsqTaped #-}

functions :: [(String, Function)]
functions =
  [ ("primal", function input llsq (scalar "llsq"))
  , ("gradient", function (fmap (fmap vfromList) . input) llsqGrad (vector "llsq" . vtoList)) ]
  where input v = (,) <$> field "n" v <*> field "x" v
