-- EXPECT: a visible type application
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE TypeApplications #-}
module TypeApplication where
import Numeric.DualRev
differentiable [d|
  f :: Double -> Double
  f x = x * fromIntegral @Int 3
  |]
