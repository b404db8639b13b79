-- EXPECT: a top-level definition without a type signature
-- EXPECT: in the definition of `helper'
{-# LANGUAGE TemplateHaskell #-}
module NoSignature where
import Numeric.DualRev
differentiable [d|
  helper x = x * x

  f :: Double -> Double
  f x = helper x
  |]
