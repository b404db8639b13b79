-- EXPECT: unsupported in differentiable code
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE RecursiveDo #-}
module MdoNotation where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = sum (mdo { x <- xs; [x] })
  |]
