-- EXPECT: Float is not supported in differentiable code
{-# LANGUAGE TemplateHaskell #-}
module FloatType where
import Numeric.DualRev
differentiable [d|
  f :: Float -> Float
  f x = x * x
  |]
