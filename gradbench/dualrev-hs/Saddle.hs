{-# LANGUAGE TemplateHaskell #-}
-- | The eval "saddle": min over x of max over y of
-- f(x, y) = (x1^2 + x2^2) - (y1^2 + y2^2), both optimisations by
-- GradBench's descent from the input's start.  The outer objective runs the
-- inner ascent, whose gradients are nested derivatives: the outer gradient
-- differentiates through them.  The function's name says the modes, outer
-- then inner: r reverse (grad, gradient), f forward (jvp per coordinate,
-- derivative per coordinate).  The output is the saddle point, x then y.
module Saddle (functions, saddle, outerValue, outerGradient) where

import Numeric.DualRev

import Descent
import Eval

differentiable [d|
  f :: [Double] -> [Double] -> Double
  f [x1, x2] [y1, y2] = (x1 * x1 + x2 * x2) - (y1 * y1 + y2 * y2)
  f _ _ = 0

  -- max over y of f x, from start
  outerR :: (Constant [Double], [Double]) -> Double
  outerR (start, x) = f x (optimise (-1) (f x) (gradient (f x)) (constant start))

  outerF :: (Constant [Double], [Double]) -> Double
  outerF (start, x) = f x (optimise (-1) (f x) (forwardGradient (f x)) (constant start))

  -- f at a fixed x, for the final ascent's gradient in y
  fAtX :: (Constant [Double], [Double]) -> Double
  fAtX (x, y) = f (constant x) y
  |]

-- | The outer objective, max over y of f(x, y) from start, at x.  Its
-- value through a splice: called directly, outerF would run
-- forwardGradient's ordinary version, whose derivative refuses to run
-- outside differentiable code.
outerValue :: Bool -> [Double] -> [Double] -> Double
outerValue innerFwd start x =
  fst (if innerFwd then $(differentiate 'outerF) (Constant start, x)
                   else $(differentiate 'outerR) (Constant start, x))

-- | Its gradient in x, by reverse or forward mode (outerFwd).
outerGradient :: Bool -> Bool -> [Double] -> [Double] -> [Double]
outerGradient outerFwd innerFwd start x
  | not outerFwd = snd (if innerFwd then $(grad 'outerF) (Constant start, x)
                                    else $(grad 'outerR) (Constant start, x))
  | otherwise = [ snd (if innerFwd then $(jvp 'outerF) (Constant start, x) (Constant start, e)
                                   else $(jvp 'outerR) (Constant start, x) (Constant start, e))
                | e <- [[1, 0], [0, 1]] ]

-- | The saddle point from start, x then y.
saddle :: Bool -> Bool -> [Double] -> [Double]
saddle outerFwd innerFwd start = x ++ y
  where
    x = optimise 1 (outerValue innerFwd start) (outerGradient outerFwd innerFwd start) start
    y = optimise (-1) (f x) (\y' -> snd ($(grad 'fAtX) (Constant x, y'))) start

functions :: [(String, Function)]
functions =
  [ (name, function (field "start") (saddle (o == 'f') (i == 'f')) (vector "saddle"))
  | name@[o, i] <- ["rr", "rf", "fr", "ff"] ]
