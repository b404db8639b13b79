-- EXPECT: the rule for `tanh' (primitive at
-- EXPECT: `tanh' is a primitive of differentiable code already, with the engine's derivative, and a rule cannot replace it
-- EXPECT: give the rule to a function of your own instead, e.g. myTanh = tanh, and use that
{-# LANGUAGE TemplateHaskell #-}
module RuleBuiltin where
import Numeric.DualRev

tanhVJP :: Double -> (Double, Double -> Double)
tanhVJP x = let t = tanh x in (t, \ybar -> ybar * (1 - t * t))

primitive 'tanh 'tanhVJP
