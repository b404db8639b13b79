{-# LANGUAGE TemplateHaskell #-}
-- Must compile with -Wall -Werror: infinite lists consumed lazily (ranges
-- without an end, cycle, repeat) are part of the supported language.
module InfiniteList (f, gradF) where

import Numeric.DualRev

differentiable [d|
  f :: (Double, [Double]) -> Double
  f (x, ws) = sum (zipWith (*) [x ..] ws) + sum (zipWith (*) [1, 3 ..] ws)
              + sum [fromIntegral i * w | (i, w) <- zip [0 :: Int ..] ws]
              + sum (take 3 (repeat x)) + sum (zipWith (*) (cycle [1, -1]) ws)
  |]

gradF :: (Double, [Double]) -> (Double, [Double])
gradF = $(grad 'f)
