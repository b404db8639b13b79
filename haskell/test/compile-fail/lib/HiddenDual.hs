{-# LANGUAGE TemplateHaskell #-}
-- Helper of ExportList*.hs: a differentiable definition whose module's
-- export list leaves out its dual (f'dr, f'drw).
module HiddenDual (f) where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = x * x
  |]
