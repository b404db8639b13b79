{-# LANGUAGE TemplateHaskell #-}
-- | The eval "particle": a particle from (0, 8) at velocity (0.75, 0),
-- accelerated by minus the gradient of the potential of two charges, at
-- (10, 10 - w) and (10, 0), moves by Euler steps of 0.1 until it crosses
-- the x axis; the control w minimises the square of where it crosses, by
-- GradBench's descent from the input's w.  Every step's force is a nested
-- derivative, which the descent's derivative in w differentiates through.
-- The function's name says the modes, outer then inner: r reverse (grad',
-- gradient), f forward (jvp, derivative per coordinate).
module Particle (functions, particle, objective) where

import Numeric.DualRev

import Descent
import Eval

differentiable [d|
  potential :: [[Double]] -> [Double] -> Double
  potential charges [x, y] =
    sum [ 1 / sqrt ((x - cx) * (x - cx) + (y - cy) * (y - cy)) | [cx, cy] <- charges ]
  potential _ _ = 0

  -- the square of where the particle crosses the axis, the force the
  -- gradient that gradOf gives
  landing :: (([Double] -> Double) -> [Double] -> [Double]) -> Double -> Double
  landing gradOf w = fly [0, 8] [0.75, 0]
    where
      charges = [[10, 10 - w], [10, 0]]
      dt = 0.1
      fly p v =
        let force = gradOf (potential charges) p
            p' = zipWith (\a b -> a + dt * b) p v
        in if p' !! 1 <= 0 then crossing p' v else fly p' (zipWith (\a b -> a - dt * b) v force)
      -- where the straight line of the last step meets the axis
      crossing [x, y] [vx, vy] = let xf = x + negate (y / vy) * vx in xf * xf
      crossing _ _ = 0

  landingR :: Double -> Double
  landingR = landing gradient

  landingF :: Double -> Double
  landingF = landing forwardGradient
  |]

-- | The objective at w and its derivative, from one recording, by reverse
-- or forward mode (outerFwd).
objective :: Bool -> Bool -> Double -> (Double, Double)
objective outerFwd innerFwd w
  | not outerFwd = (if innerFwd then $(grad' 'landingF) else $(grad' 'landingR)) w
  | otherwise = (if innerFwd then $(jvp 'landingF) else $(jvp 'landingR)) w 1

-- | The optimal w from w0.
particle :: Bool -> Bool -> Double -> Double
particle outerFwd innerFwd w0 =
  head (optimiseWith 1 (\ws -> let (v, d) = objective outerFwd innerFwd (head ws) in (v, [d])) [w0])

functions :: [(String, Function)]
functions =
  [ (name, function (field "w") (particle (o == 'f') (i == 'f')) (scalar "particle"))
  | name@[o, i] <- ["rr", "rf", "fr", "ff"] ]
