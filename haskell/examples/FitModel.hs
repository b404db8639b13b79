{-# LANGUAGE TemplateHaskell #-}
-- | Fit y = a * sin (w * x) + b to samples by gradient descent, with the
-- gradient of the loss from $(grad 'loss).
module Main (main) where

import Numeric.DualRev
import Text.Printf (printf)

differentiable [d|
  model :: (Double, Double, Double) -> Double -> Double
  model (a, w, b) x = a * sin (w * x) + b

  loss :: ((Double, Double, Double), [(Double, Double)]) -> Double
  loss (theta, samples) =
    sum [ (model theta x - y) ^ (2 :: Int) | (x, y) <- samples ] / fromIntegral (length samples)
  |]

samples :: [(Double, Double)]
samples = [ (x, 1.5 * sin (1.3 * x) + 0.25) | i <- [0 .. 31 :: Int]
          , let x = -2 + 4 * fromIntegral i / 31 ]

step :: (Double, Double, Double) -> (Double, Double, Double)
step theta@(a, w, b) =
  let ((ga, gw, gb), _) = $(grad 'loss) (theta, samples)
      rate = 0.05
  in (a - rate * ga, w - rate * gw, b - rate * gb)

main :: IO ()
main = do
  let thetas = iterate step (1, 1, 0)
  mapM_ (\(k, th) -> printf "step %3d  loss %.3e\n" k (loss (th, samples)))
        [ (k, thetas !! k) | k <- [0, 50 .. 400 :: Int] ]
  let final@(a, w, b) = thetas !! 400
      ((ga, gw, gb), _) = $(grad 'loss) (final, samples)
  printf "fitted a = %.4f, w = %.4f, b = %.4f (true 1.5, 1.3, 0.25)\n" a w b
  printf "final gradient = (%.3e, %.3e, %.3e)\n" ga gw gb
