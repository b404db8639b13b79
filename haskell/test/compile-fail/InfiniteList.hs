-- EXPECT: an infinite arithmetic sequence
{-# LANGUAGE TemplateHaskell #-}
module InfiniteList where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = sum (zipWith (*) [1 ..] [x, x])
  |]
