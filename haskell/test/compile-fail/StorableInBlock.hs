-- EXPECT: unsupported in differentiable code: `vecFromStorable': the conversions between Vec or Mat and Data.Vector.Storable work in ordinary code only
-- EXPECT: in the definition of `f'
{-# LANGUAGE TemplateHaskell #-}
module StorableInBlock where
import Numeric.DualRev
import Numeric.DualRev.Array
differentiable [d|
  f :: Vec -> Double
  f v = vsum (vecFromStorable (vecToStorable v))
  |]
