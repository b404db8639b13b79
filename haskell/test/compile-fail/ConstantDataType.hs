-- EXPECT: `Constant [(Int, Obs)]', a constant of a data type holding Double values
-- EXPECT: pass its contents as a tuple or a list and rebuild the value inside the block
-- EXPECT: in the definition of `fit' at
{-# LANGUAGE TemplateHaskell #-}
module ConstantDataType where
import Numeric.DualRev
data Obs = Obs Double Double
differentiable [d|
  fit :: ([Double], Constant [(Int, Obs)]) -> Double
  fit ([a, b], obs) = sum [ (a * x + b - y) * fromIntegral w | (w, Obs x y) <- constant obs ]
  fit _ = 0
  |]
