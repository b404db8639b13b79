-- EXPECT: grad needs a function returning Double
{-# LANGUAGE TemplateHaskell #-}
module GradNotScalar where
import Numeric.DualRev
differentiable [d|
  g :: Double -> (Double, Double)
  g x = (x, x * x)
  |]
h :: Double -> Double
h = $(grad 'g)
