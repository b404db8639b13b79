{-# LANGUAGE TemplateHaskell #-}
-- | The eval "lse": log-sum-exp of a vector, shifted by its maximum so that
-- no exponential overflows, and its gradient.  The primal is written over
-- lists; the gradient over an array ('logSumExp' of the package's arrays,
-- one node, as dualrev-c's), the input read into it and the gradient
-- written out from it outside the timed runs, as the C tool's are.
module Lse (functions, lse, lseGrad) where

import Numeric.DualRev
import Numeric.DualRev.Array (Vec, vfromList, vtoList)
import qualified Numeric.DualRev.Array as A

import Eval

differentiable [d|
  lse :: [Double] -> Double
  lse xs = log (sum (map (\x -> exp (x - a)) xs)) + a
    where a = maximum xs

  lseArray :: Vec -> Double
  lseArray v = A.logSumExp v
  |]

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate).
lseGrad :: Vec -> Vec
lseGrad = $(tapedGrad 'lseArray)
{-# NOINLINE lseGrad #-}

functions :: [(String, Function)]
functions =
  [ ("primal", function (field "x") lse (scalar "lse"))
  , ("gradient", function (fmap vfromList . field "x") lseGrad (vector "lse" . vtoList)) ]
