-- EXPECT: a view pattern in a pattern binding (match it in a case or a function argument)
-- EXPECT: in the definition of `f'
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE ViewPatterns #-}
module ViewPatternBinding where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = let (reverse -> (x : _)) = xs in x * x
  |]
