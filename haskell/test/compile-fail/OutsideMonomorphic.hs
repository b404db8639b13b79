-- EXPECT: `OutsideMonomorphic.halfSquare', defined outside any differentiable block at the type GHC.Types.Double -> GHC.Types.Double
-- EXPECT: give it a polymorphic signature such as `Floating a => a -> a'
-- EXPECT: in the definition of `f'
-- EXPECT: or declare it a primitive with its derivative (primitive 'halfSquare 'halfSquareVJP)
{-# LANGUAGE TemplateHaskell #-}
module OutsideMonomorphic where
import Numeric.DualRev
halfSquare :: Double -> Double
halfSquare x = x * x / 2
differentiable [d|
  f :: Double -> Double
  f x = halfSquare x + 1
  |]
