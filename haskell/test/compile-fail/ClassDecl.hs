-- EXPECT: unsupported in differentiable code: this declaration
-- EXPECT: class Scalable
{-# LANGUAGE TemplateHaskell #-}
module ClassDecl where
import Numeric.DualRev
differentiable [d|
  class Scalable a where
    scale :: Double -> a -> a

  f :: Double -> Double
  f x = x * 2
  |]
