-- EXPECT: dualrev: do-notation and the Control.Monad functions in differentiable code
-- EXPECT: work in Maybe, Either e, lists and Identity; not in the monad (,)
{-# LANGUAGE TemplateHaskell #-}
module OtherMonad where
import Numeric.DualRev
-- do in the writer monad of pairs: a monad without a dual bind
differentiable [d|
  f :: Double -> Double
  f x = snd (do { y <- ("a", x * 2); ("b", y * y) })
  |]
