-- EXPECT: unsupported in differentiable code: do-notation
-- EXPECT: in the definition of `f'
{-# LANGUAGE TemplateHaskell #-}
module DoNotation where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = sum (do { x <- xs; [x, x * 2] })
  |]
