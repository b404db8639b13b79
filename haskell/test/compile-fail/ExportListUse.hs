-- EXPECT: `HiddenDual.f', which is neither a supported Prelude function nor defined in a differentiable block
{-# LANGUAGE TemplateHaskell #-}
module ExportListUse where
import HiddenDual
import Numeric.DualRev
differentiable [d|
  g :: Double -> Double
  g x = f x + 1
  |]
