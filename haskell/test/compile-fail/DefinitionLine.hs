-- EXPECT: in the definition of `second' at
-- EXPECT: DefinitionLine.hs:17:3
-- (the definition's first equation, not the block's first line)
{-# LANGUAGE TemplateHaskell #-}
module DefinitionLine where
import Numeric.DualRev

atDouble :: Double -> Double
atDouble x = x * 2

differentiable [d|
  first :: Double -> Double
  first x = x * x

  second :: Double -> Double
  -- a function at Double from outside: refused
  second x = atDouble x + first x
  |]
