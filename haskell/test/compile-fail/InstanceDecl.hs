-- EXPECT: unsupported in differentiable code: this declaration
-- EXPECT: instance
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
