{-# LANGUAGE TemplateHaskell #-}
-- Must compile with -Wall -Werror: arithmetic expressions recorded as
-- statements (literals among the factors, division, negation, a repeated
-- leaf) and local helpers inlined at their calls (tuple patterns, a
-- wildcard, an argument used twice, a value moved into the expression that
-- uses it) leave no unused binding behind.
module WallCleanStatements (step, gradStep) where

import Numeric.DualRev

differentiable [d|
  step :: ((Double, Double), (Double, Double)) -> Double
  step (p, v) =
    let (px, py) = add p (scl 0.5 v)
        acc = add (scl (-0.5) p) (scl (-0.2) v)
        (ax, ay) = acc
    in 2 * px * py - px / (1 + py * py) + negate (ax * ay) + first 3 px + twice (px * py)
    where
      add (a, b) (c, d) = (a + c, b + d)
      scl k (a, b) = (k * a, k * b)
      first a _ = a * a + 1
      twice a = a * a + a
  |]

gradStep :: ((Double, Double), (Double, Double)) -> ((Double, Double), (Double, Double))
gradStep = $(grad 'step)
