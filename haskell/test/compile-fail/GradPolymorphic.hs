-- EXPECT: grad needs a monomorphic type
{-# LANGUAGE TemplateHaskell #-}
module GradPolymorphic where
import Numeric.DualRev
differentiable [d|
  g :: Floating a => [a] -> a
  g xs = sum (map sin xs)
  |]
h :: [Double] -> [Double]
h = $(grad 'g)
