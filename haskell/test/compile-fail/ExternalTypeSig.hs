-- EXPECT: the type `ExternalTypeSig.Ext' holds Double values or functions but was not declared in a differentiable block
{-# LANGUAGE TemplateHaskell #-}
module ExternalTypeSig where
import Numeric.DualRev
data Ext = Ext Double Double
differentiable [d|
  f :: Ext -> Double
  f _ = 1
  |]
