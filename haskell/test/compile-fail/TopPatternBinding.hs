-- EXPECT: a top-level pattern binding
{-# LANGUAGE TemplateHaskell #-}
module TopPatternBinding where
import Numeric.DualRev
differentiable [d|
  (a, b) = (1, 2) :: (Double, Double)
  |]
