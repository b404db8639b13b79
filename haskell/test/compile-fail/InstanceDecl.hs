-- EXPECT: an instance of the class `InstanceDecl.Scalable', which is declared outside any differentiable block, for a type holding Double values; declare the class in a differentiable block
-- EXPECT: in the differentiable block at
{-# LANGUAGE TemplateHaskell #-}
module InstanceDecl where
import Numeric.DualRev
class Scalable a where
  scale :: Double -> a -> a
differentiable [d|
  data P = P Double Double

  instance Scalable P where
    scale k (P a b) = P (k * a) (k * b)
  |]
