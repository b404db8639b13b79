-- EXPECT: Float is not supported in differentiable code
{-# LANGUAGE TemplateHaskell #-}
module FloatField where
import Numeric.DualRev
differentiable [d|
  data T = T Float Double

  f :: T -> Double
  f (T _ y) = y
  |]
