-- EXPECT: the rule for `sq' (primitive at
-- EXPECT: `sq' has a derivative already: it is defined in a differentiable block, or another rule was declared for it
-- EXPECT: a rule is for a function defined outside any block (ordinary code or a foreign import), declared once
{-# LANGUAGE TemplateHaskell #-}
module RuleBlockFunction where
import Numeric.DualRev

differentiable [d|
  sq :: Double -> Double
  sq x = x * x
  |]

sqVJP :: Double -> (Double, Double -> Double)
sqVJP x = (x * x, \ybar -> 2 * x * ybar)

primitive 'sq 'sqVJP
