{-# LANGUAGE TemplateHaskell #-}
-- | The eval "det": the determinant of an ell x ell matrix by expansion by
-- minors along the first row, and its gradient.
module Det (functions, det, rowsOf) where

import Data.Aeson.Types (Parser, Value)
import Numeric.DualRev

import Eval

differentiable [d|
  det :: [[Double]] -> Double
  det [] = 1
  det (row : rows) =
    sum [ (if even j then a else negate a) * det (minorOf j rows)
        | (j, a) <- zip [0 :: Int ..] row ]

  -- the rows without column j
  minorOf :: Int -> [[Double]] -> [[Double]]
  minorOf j = map (\r -> take j r ++ drop (j + 1) r)
  |]

-- | The input's matrix, row-major in A, as its rows.
rowsOf :: Int -> [Double] -> [[Double]]
rowsOf _ [] = []
rowsOf ell xs = let (r, rest) = splitAt ell xs in r : rowsOf ell rest

input :: Value -> Parser [[Double]]
input v = do
  ell <- field "ell" v
  a <- field "A" v
  if ell >= 1 && length a == ell * ell
    then pure (rowsOf ell a)
    else fail "det: \"A\" must hold ell * ell numbers"

functions :: [(String, Function)]
functions =
  [ ("primal", function input det (scalar "det"))
  , ("gradient", function input (concat . detGrad) (vector "det")) ]

-- | Recorded at the first call and replayed at the next ones of the same
-- size (every run of an evaluate).
detGrad :: [[Double]] -> [[Double]]
detGrad = $(tapedGrad 'det)
{-# NOINLINE detGrad #-}
