{-# LANGUAGE TemplateHaskell #-}
-- | The eval "llsq": the least-squares objective 0.5 |s - T x|^2, with
-- T[i][j] = t_i^j at the n points t_i evenly spaced over [-1, 1] and
-- s_i = sign t_i, and its gradient in x.
module Llsq (functions, llsq, llsqGrad) where

import Numeric.DualRev

import Eval

differentiable [d|
  llsq :: (Int, [Double]) -> Double
  llsq (n, x) = sum [ residual i * residual i | i <- [0 .. n - 1] ] / 2
    where
      residual i = let t = -1 + fromIntegral i * 2 / (fromIntegral n - 1)
                   in signum t - sum (zipWith (*) x (iterate (* t) 1))
  |]

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate).
llsqGrad :: (Int, [Double]) -> [Double]
llsqGrad = snd . llsqTaped

llsqTaped :: (Int, [Double]) -> (Int, [Double])
llsqTaped = $(tapedGrad 'llsq)
{-# NOINLINE llsqTaped #-}

functions :: [(String, Function)]
functions =
  [ ("primal", function input llsq (scalar "llsq"))
  , ("gradient", function input llsqGrad (vector "llsq")) ]
  where input v = (,) <$> field "n" v <*> field "x" v
