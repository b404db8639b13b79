{-# LANGUAGE TemplateHaskell #-}
-- | GradBench's gradient descent, shared by the evals "saddle" and
-- "particle": steps of eta times the gradient, eta doubled after ten
-- accepted steps in a row and halved on a step that does not decrease the
-- objective, until the gradient or the step is no longer than 1e-5.
-- Written twice: 'optimise' in a differentiable block, for the inner
-- optimisations, which run inside differentiated code, over a function
-- that gives the value and the gradient at a point from one recording
-- ('gradient''; differentiable code is strict, so a rejected step's
-- gradient is computed too, which costs less than recording the accepted
-- steps' objective twice); and 'optimiseWith' in ordinary code, for the
-- outer ones, over the same kind of function (the gradient read lazily
-- there: a rejected step never asks for it).
-- No export list: other modules' blocks use the dual versions by name.
module Descent where

import Numeric.DualRev

differentiable [d|
  -- | The argmin (sign 1) or argmax (sign -1) of f from x0, fdf giving
  -- f's value and gradient at a point.  Written as functions of one
  -- decision each, since differentiable code is strict: a where-binding
  -- would be computed on every branch.
  optimise :: Double -> ([Double] -> (Double, [Double])) -> [Double] -> [Double]
  optimise sign fdf x0 = case fdf x0 of (f0, g0) -> descend 1e-5 (0 :: Int) x0 f0 g0
    where
      descend eta accepted x fx g
        | norm g <= 1e-5 = x
        | accepted == 10 = descend (eta * 2) 0 x fx g
        | otherwise = tryStep eta accepted x fx g (zipWith (\a d -> a - eta * sign * d) x g)
      tryStep eta accepted x fx g xn
        | norm (zipWith (-) x xn) <= 1e-5 = x
        | otherwise = case fdf xn of (fxn, gxn) -> decide eta accepted x fx g xn fxn gxn
      decide eta accepted x fx g xn fxn gxn
        | sign * fxn < sign * fx = descend eta (accepted + 1) xn fxn gxn
        | otherwise = descend (eta / 2) 0 x fx g

  norm :: [Double] -> Double
  norm v = sqrt (sum (map (\a -> a * a) v))

  -- | The gradient by forward mode: one directional derivative per
  -- coordinate.
  forwardGradient :: ([Double] -> Double) -> [Double] -> [Double]
  forwardGradient f x =
    [ derivative (\t -> f [ if j == i then a + t else a | (j, a) <- zip [0 :: Int ..] x ]) 0
    | i <- [0 .. length x - 1] ]

  -- | The value and the gradient by forward mode: the value from the
  -- first directional derivative's recording.
  forwardGradient' :: ([Double] -> Double) -> [Double] -> (Double, [Double])
  forwardGradient' f x =
    let ds = [ derivative' (\t -> f [ if j == i then a + t else a | (j, a) <- zip [0 :: Int ..] x ]) 0
             | i <- [0 .. length x - 1] ]
    in (case ds of { (v, _) : _ -> v; [] -> f x }, map snd ds)
  |]

-- | 'optimise' in ordinary code, over the value and the gradient at a point
-- together.
optimiseWith :: Double -> ([Double] -> (Double, [Double])) -> [Double] -> [Double]
optimiseWith sign fdf x0 = let (f0, g0) = fdf x0 in go 1e-5 (0 :: Int) x0 f0 g0
  where
    go eta accepted x fx g
      | norm g <= 1e-5 = x
      | accepted == 10 = go (eta * 2) 0 x fx g
      | norm (zipWith (-) x xn) <= 1e-5 = x
      | sign * fxn < sign * fx = go eta (accepted + 1) xn fxn gxn
      | otherwise = go (eta / 2) 0 x fx g
      where
        xn = zipWith (\a d -> a - eta * sign * d) x g
        (fxn, gxn) = fdf xn
