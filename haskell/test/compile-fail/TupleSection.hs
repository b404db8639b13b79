-- EXPECT: a tuple section
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE TupleSections #-}
module TupleSection where
import Numeric.DualRev
differentiable [d|
  f :: [Double] -> Double
  f xs = sum (map (uncurry (*)) (map (, 2) xs))
  |]
