-- EXPECT: `map' applied to an infinite list
{-# LANGUAGE TemplateHaskell #-}
module StrictInfinite where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = sum (zipWith (*) (map fromIntegral [1 :: Int ..]) xs)
  |]
