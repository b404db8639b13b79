-- EXPECT: the rule for `mix' (primitive at
-- EXPECT: RuleArity.hs:16:1): the VJP `mixVJP' takes 1 argument, but `mix' takes 2 arguments
-- EXPECT: mixVJP :: Double -> (Double, Double -> Double)
-- EXPECT: write the VJP with the type
-- EXPECT: mixVJP :: Double -> Double -> (Double, Double -> (Double, Double))
{-# LANGUAGE TemplateHaskell #-}
module RuleArity where
import Numeric.DualRev

mix :: Double -> Double -> Double
mix x y = x * y

mixVJP :: Double -> (Double, Double -> Double)
mixVJP x = (x, \ybar -> ybar)

primitive 'mix 'mixVJP
