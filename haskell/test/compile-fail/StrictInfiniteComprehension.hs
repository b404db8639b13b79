-- EXPECT: `concatMap' applied to an infinite list
{-# LANGUAGE TemplateHaskell #-}
module StrictInfiniteComprehension where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = sum (take 3 [x * fromIntegral k | k <- cycle [1 :: Int, 2]])
  |]
