{-# LANGUAGE TemplateHaskell #-}
-- Must compile with -Wall -Werror: what the splices generate for a module
-- with an export list draws no warning (run.sh, after the compile-fail
-- cases).  sq is only called saturated, scale is a constant, and neither
-- dual value is exported.
module WallClean (loss, gradLoss) where

import Numeric.DualRev

differentiable [d|
  sq :: Double -> Double
  sq x = x * x

  scale :: Double
  scale = 3

  loss :: (Double, [Double]) -> Double
  loss (a, xs) = scale * sum (map (\x -> sq (a * x)) xs)
  |]

gradLoss :: (Double, [Double]) -> (Double, [Double])
gradLoss = $(grad 'loss)
