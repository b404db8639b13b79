{-# LANGUAGE TemplateHaskell #-}
-- Must compile with -Wall -Werror: what the splices generate for a module
-- with an export list draws no warning (run.sh, after the compile-fail
-- cases).  sq and the operator (<+>) are only called saturated, scale is a
-- constant, and no dual value is exported.
module WallClean (loss, gradLoss) where

import Numeric.DualRev

differentiable [d|
  sq :: Double -> Double
  sq x = x * x

  scale :: Double
  scale = 3

  infixl 6 <+>
  (<+>) :: Double -> Double -> Double
  a <+> b = a + 2 * b

  loss :: (Double, [Double]) -> Double
  loss (a, xs) = scale * sum (map (\x -> sq (a * x) <+> x) xs)
  |]

gradLoss :: (Double, [Double]) -> (Double, [Double])
gradLoss = $(grad 'loss)
