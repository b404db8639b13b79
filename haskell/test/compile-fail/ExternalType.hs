-- EXPECT: the constructor `ExternalType.Ext', whose type holds Double values but was not declared in a differentiable block
-- EXPECT: in the definition of `f'
{-# LANGUAGE TemplateHaskell #-}
module ExternalType where
import Numeric.DualRev
data Ext = Ext Double Double
differentiable [d|
  f :: Ext -> Double
  f (Ext a b) = a * b
  |]
