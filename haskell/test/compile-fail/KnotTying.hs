-- EXPECT: recursive value bindings (knot-tying) of xs
{-# LANGUAGE TemplateHaskell #-}
module KnotTying where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = let xs = x : map (* 2) xs in sum (take 3 xs)
  |]
