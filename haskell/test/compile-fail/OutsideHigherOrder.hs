-- EXPECT: `OutsideHigherOrder.twice', defined outside any differentiable block, which takes a function as an argument; define it in a differentiable block
{-# LANGUAGE TemplateHaskell #-}
module OutsideHigherOrder where
import Numeric.DualRev
twice :: (a -> a) -> a -> a
twice g = g . g
differentiable [d|
  f :: Double -> Double
  f x = twice sin x
  |]
