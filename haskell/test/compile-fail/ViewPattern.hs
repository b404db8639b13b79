-- EXPECT: a view pattern
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE ViewPatterns #-}
module ViewPattern where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f (reverse -> (x : _)) = x
  f _ = 0
  |]
