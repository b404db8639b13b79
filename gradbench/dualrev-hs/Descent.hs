{-# LANGUAGE TemplateHaskell #-}
-- | GradBench's gradient descent, shared by the evals "saddle" and
-- "particle": steps of eta times the gradient, eta doubled after ten
-- accepted steps in a row and halved on a step that does not decrease the
-- objective, until the gradient or the step is no longer than 1e-5.  In a
-- differentiable block, so that it runs inside differentiated code (the
-- inner optimisation) as well as in ordinary code (the outer one).
-- No export list: other modules' blocks use the dual versions by name.
module Descent where

import Numeric.DualRev

differentiable [d|
  -- | The argmin (sign 1) or argmax (sign -1) of f, of gradient df, from x0.
  -- Written as functions of one decision each, since differentiable code
  -- is strict: a where-binding would be computed on every branch.
  optimise :: Double -> ([Double] -> Double) -> ([Double] -> [Double]) -> [Double] -> [Double]
  optimise sign f df x0 = descend 1e-5 (0 :: Int) x0 (f x0) (df x0)
    where
      descend eta accepted x fx g
        | norm g <= 1e-5 = x
        | accepted == 10 = descend (eta * 2) 0 x fx g
        | otherwise = tryStep eta accepted x fx g (zipWith (\a d -> a - eta * sign * d) x g)
      tryStep eta accepted x fx g xn
        | norm (zipWith (-) x xn) <= 1e-5 = x
        | otherwise = decide eta accepted x fx g xn (f xn)
      decide eta accepted x fx g xn fxn
        | sign * fxn < sign * fx = descend eta (accepted + 1) xn fxn (df xn)
        | otherwise = descend (eta / 2) 0 x fx g

  norm :: [Double] -> Double
  norm v = sqrt (sum (map (\a -> a * a) v))

  -- | The gradient by forward mode: one directional derivative per
  -- coordinate.
  forwardGradient :: ([Double] -> Double) -> [Double] -> [Double]
  forwardGradient f x =
    [ derivative (\t -> f [ if j == i then a + t else a | (j, a) <- zip [0 :: Int ..] x ]) 0
    | i <- [0 .. length x - 1] ]
  |]
