-- EXPECT: which is neither a supported Prelude function nor defined in a differentiable block
-- EXPECT: in the differentiable block at
{-# LANGUAGE TemplateHaskell #-}
module ShowFunction where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = fromIntegral (length (show x)) * x
  |]
