{-# LANGUAGE TemplateHaskell #-}
-- Must compile with -Wall -Werror: what the rule splices generate draws no
-- warning, for a module with an export list that exports no dual: rules of
-- one and several arguments, a discrete argument, list and tuple types, a
-- JVP, an operator, each used saturated in a block.
module WallCleanRules (loss, gradLoss) where

import Numeric.DualRev

scaled :: Int -> Double -> [Double] -> Double
scaled k x ys = fromIntegral k * x * sum ys

scaledVJP :: Int -> Double -> [Double] -> (Double, Double -> (Double, [Double]))
scaledVJP k x ys =
  (scaled k x ys, \ybar -> (ybar * fromIntegral k * sum ys, map (const (ybar * fromIntegral k * x)) ys))

primitive 'scaled 'scaledVJP

polar :: Double -> Double -> (Double, Double)
polar r t = (r * cos t, r * sin t)

polarVJP :: Double -> Double -> ((Double, Double), (Double, Double) -> (Double, Double))
polarVJP r t = (polar r t, \(a, b) -> (a * cos t + b * sin t, b * r * cos t - a * r * sin t))

polarJVP :: Double -> Double -> ((Double, Double), (Double, Double) -> (Double, Double))
polarJVP r t = (polar r t, \(dr, dt) -> (dr * cos t - r * sin t * dt, dr * sin t + r * cos t * dt))

primitiveWithJVP 'polar 'polarVJP 'polarJVP

infixl 6 <+>
(<+>) :: Double -> Double -> Double
a <+> b = a + 2 * b

plusVJP :: Double -> Double -> (Double, Double -> (Double, Double))
plusVJP a b = (a <+> b, \ybar -> (ybar, 2 * ybar))

primitive '(<+>) 'plusVJP

differentiable [d|
  loss :: (Double, [Double]) -> Double
  loss (x, ys) = let (u, v) = polar x (scaled 2 x ys) in u <+> v
  |]

gradLoss :: (Double, [Double]) -> (Double, [Double])
gradLoss = $(grad 'loss)
