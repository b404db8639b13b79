-- EXPECT: \case (LambdaCase)
{-# LANGUAGE LambdaCase #-}
{-# LANGUAGE TemplateHaskell #-}
module LambdaCase where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f = \case { [] -> 0; (x : _) -> x }
  |]
