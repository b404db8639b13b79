-- EXPECT: recursive value bindings (knot-tying)
{-# LANGUAGE TemplateHaskell #-}
module KnotTyingMutual where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = head ys
    where xs = x : ys
          ys = map sin xs
  |]
