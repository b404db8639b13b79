-- EXPECT: `HiddenDual.f', defined outside any differentiable block at the type
-- EXPECT: that module must export its dual `f'dr' too
{-# LANGUAGE TemplateHaskell #-}
module ExportListUse where
import HiddenDual
import Numeric.DualRev
differentiable [d|
  g :: Double -> Double
  g x = f x + 1
  |]
