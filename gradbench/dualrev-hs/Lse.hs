{-# LANGUAGE TemplateHaskell #-}
-- | The eval "lse": log-sum-exp of a vector, shifted by its maximum so that
-- no exponential overflows, and its gradient.
module Lse (functions, lse, lseGrad) where

import Numeric.DualRev

import Eval

differentiable [d|
  lse :: [Double] -> Double
  lse xs = log (sum (map (\x -> exp (x - a)) xs)) + a
    where a = maximum xs
  |]

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate).
lseGrad :: [Double] -> [Double]
lseGrad = $(tapedGrad 'lse)
{-# NOINLINE lseGrad #-}

functions :: [(String, Function)]
functions =
  [ ("primal", function (field "x") lse (scalar "lse"))
  , ("gradient", function (field "x") lseGrad (vector "lse")) ]
