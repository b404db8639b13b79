-- EXPECT: `g' is not differentiable: define it inside differentiable
{-# LANGUAGE TemplateHaskell #-}
module GradNotDifferentiable where
import Numeric.DualRev
g :: Double -> Double
g x = x * x
h :: Double -> Double
h = $(grad 'g)
