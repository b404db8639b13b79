-- EXPECT: the method `scale' of the class `UserClassMethod.Scalable', which is declared outside any differentiable block; declare the class (and its instances) in a differentiable block
-- EXPECT: in the definition of `f'
{-# LANGUAGE TemplateHaskell #-}
module UserClassMethod where
import Numeric.DualRev
class Scalable a where
  scale :: Double -> a -> a
instance Scalable Double where
  scale k x = k * x
differentiable [d|
  f :: Double -> Double
  f x = scale 2 x
  |]
