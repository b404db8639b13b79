-- EXPECT: the rule for `mix' (primitive at
-- EXPECT: RuleAdjoints.hs:18:1): the VJP `mixVJP' does not have the type of a VJP of `mix'
-- EXPECT: mix :: Int -> Double -> [Double] -> Double
-- EXPECT: mixVJP :: Int -> Double -> [Double] -> (Double, Double -> Double)
-- EXPECT: mixVJP :: Int -> Double -> [Double] -> (Double, Double -> (Double, [Double]))
-- EXPECT: to the adjoints of the 2 arguments that hold Doubles, as a tuple in their order
{-# LANGUAGE TemplateHaskell #-}
module RuleAdjoints where
import Numeric.DualRev

mix :: Int -> Double -> [Double] -> Double
mix k x ys = fromIntegral k * x * sum ys

-- one adjoint where mix has two arguments holding Doubles (the Int has none)
mixVJP :: Int -> Double -> [Double] -> (Double, Double -> Double)
mixVJP k x ys = (mix k x ys, \ybar -> ybar * fromIntegral k * sum ys)

primitive 'mix 'mixVJP
