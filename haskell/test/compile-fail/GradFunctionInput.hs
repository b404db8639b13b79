-- EXPECT: cannot differentiate a function whose input or output holds functions
{-# LANGUAGE TemplateHaskell #-}
module GradFunctionInput where
import Numeric.DualRev
differentiable [d|
  g :: (Double -> Double, Double) -> Double
  g (k, x) = k x
  |]
h :: (Double -> Double, Double) -> (Double -> Double, Double)
h = $(grad 'g)
