-- EXPECT: unsupported in differentiable code: mdo-notation (RecursiveDo)
-- EXPECT: write the recursion as a recursive function
-- EXPECT: in the definition of `f'
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE RecursiveDo #-}
module MdoNotation where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = sum (mdo { x <- xs; [x] })
  |]
