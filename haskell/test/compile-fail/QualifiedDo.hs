-- EXPECT: unsupported in differentiable code: a qualified do block (QualifiedDo)
{-# LANGUAGE QualifiedDo #-}
{-# LANGUAGE TemplateHaskell #-}
module QualifiedDo where
import Numeric.DualRev
import qualified Prelude as P
import Prelude
differentiable [d|
  f :: [Double] -> Double
  f xs = sum (P.do { x <- xs; [x * 2] })
  |]
