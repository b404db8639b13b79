-- EXPECT: `f' is not differentiable: define it inside differentiable [d| ... |] (and export its dual `f'dr' too
{-# LANGUAGE TemplateHaskell #-}
module ExportListGrad where
import HiddenDual
import Numeric.DualRev
g :: Double -> Double
g = $(grad 'f)
