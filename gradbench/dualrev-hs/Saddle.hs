{-# LANGUAGE TemplateHaskell #-}
-- | The eval "saddle": min over x of max over y of
-- f(x, y) = (x1^2 + x2^2) - (y1^2 + y2^2), both optimisations by
-- GradBench's descent from the input's start.  The outer objective runs the
-- inner ascent, whose gradients are nested derivatives: the outer gradient
-- differentiates through them.  The function's name says the modes, outer
-- then inner: r reverse (grad', gradient'), f forward (jvps along the unit
-- vectors, derivative' per coordinate); the inner ascent takes each point's
-- value and gradient from one recording.  The output is the saddle point,
-- x then y.
module Saddle (functions, saddle, outer) where

import Numeric.DualRev

import Descent
import Eval

differentiable [d|
  f :: [Double] -> [Double] -> Double
  f [x1, x2] [y1, y2] = (x1 * x1 + x2 * x2) - (y1 * y1 + y2 * y2)
  f _ _ = 0

  -- max over y of f x, from start
  outerR :: (Constant [Double], [Double]) -> Double
  outerR (start, x) = f x (optimise (-1) (gradient' (f x)) (constant start))

  outerF :: (Constant [Double], [Double]) -> Double
  outerF (start, x) = f x (optimise (-1) (forwardGradient' (f x)) (constant start))

  -- f at a fixed x, for the final ascent's gradient in y
  fAtX :: (Constant [Double], [Double]) -> Double
  fAtX (x, y) = f (constant x) y
  |]

-- | The outer objective, max over y of f(x, y) from start, and its gradient
-- in x, from one recording: by reverse mode, or by forward mode (outerFwd),
-- the directional derivatives along the unit vectors in one sweep.
outer :: Bool -> Bool -> [Double] -> [Double] -> (Double, [Double])
outer outerFwd innerFwd start x
  | not outerFwd = let (v, (_, g)) = (if innerFwd then $(grad' 'outerF) else $(grad' 'outerR)) (Constant start, x)
                   in (v, g)
  | otherwise = let (v, ds) = (if innerFwd then $(jvps 'outerF) else $(jvps 'outerR))
                                (Constant start, x) [(Constant start, e) | e <- [[1, 0], [0, 1]]]
                in (v, ds)

-- | The saddle point from start, x then y.
saddle :: Bool -> Bool -> [Double] -> [Double]
saddle outerFwd innerFwd start = x ++ y
  where
    x = optimiseWith 1 (outer outerFwd innerFwd start) start
    y = optimiseWith (-1) (\y' -> let (v, (_, g)) = $(grad' 'fAtX) (Constant x, y') in (v, g)) start

functions :: [(String, Function)]
functions =
  [ (name, function (field "start") (saddle (o == 'f') (i == 'f')) (vector "saddle"))
  | name@[o, i] <- ["rr", "rf", "fr", "ff"] ]
