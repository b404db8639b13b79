{-# LANGUAGE TemplateHaskell #-}
-- | Rules declared in a module of their own, with an export list, for
-- "CustomRules": a foreign call (the C library's @erf@) declared a
-- primitive here is used by blocks there; and an ordinary function with no
-- rule here gets its rule there.
module CustomRulesDefs
  ( cErf, cErf'dr, cErf'drw
  , plainCube
  ) where

import Numeric.DualRev

foreign import ccall unsafe "math.h erf" cErf :: Double -> Double

cErfVJP :: Double -> (Double, Double -> Double)
cErfVJP x = (cErf x, \ybar -> ybar * 2 / sqrt pi * exp (negate (x * x)))

primitive 'cErf 'cErfVJP

plainCube :: Double -> Double
plainCube x = x * x * x
