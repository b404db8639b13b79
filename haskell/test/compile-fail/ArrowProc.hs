-- EXPECT: Expression form not (yet) handled by Template Haskell
{-# LANGUAGE Arrows #-}
{-# LANGUAGE TemplateHaskell #-}
module ArrowProc where
import Control.Arrow (returnA)
import Numeric.DualRev
-- arrow notation cannot be quoted (GHC stops at the quote, before dualrev
-- sees the code): write proc x -> returnA -< e as \x -> e
differentiable [d|
  f :: Double -> Double
  f = proc y -> returnA -< y * 2
  |]
