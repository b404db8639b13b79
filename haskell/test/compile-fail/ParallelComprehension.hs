-- EXPECT: unsupported in differentiable code: this qualifier in a list comprehension
{-# LANGUAGE ParallelListComp #-}
{-# LANGUAGE TemplateHaskell #-}
module ParallelComprehension where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = sum [ x * y | x <- xs | y <- reverse xs ]
  |]
