{-# LANGUAGE TemplateHaskell #-}
-- | The eval "ode": s steps of fourth-order Runge-Kutta on y_0' = x_0,
-- y_i' = x_i y_{i-1}, from y = 0 at t = 0 to t = 2; the primal is y at
-- t = 2, the gradient that of its last entry in x.  The primal is written
-- over lists; the gradient over arrays (each step a few operations on
-- whole vectors), the input read into a @Vec@ and the gradient written out
-- of one outside the timed runs, as the C tool's are.
module Ode (functions, ode) where

import Data.Aeson.Types (Parser, Value)
import Numeric.DualRev
import Numeric.DualRev.Array

import Eval

differentiable [d|
  ode :: ([Double], Int) -> [Double]
  ode (x, s) = iterate step (map (const 0) x) !! s
    where
      h = 2 / fromIntegral s
      rhs y = head x : zipWith (*) (tail x) y
      -- y + c k, entry by entry
      along c y k = zipWith (\yi ki -> yi + c * ki) y k
      step y =
        let k1 = rhs y
            k2 = rhs (along (h / 2) y k1)
            k3 = rhs (along (h / 2) y k2)
            k4 = rhs (along h y k3)
            twice = zipWith (\a b -> a + 2 * b)
        in zipWith3 (\yi a b -> yi + h * (a + b) / 6) y (twice (twice k1 k2) k3) k4

  -- the same steps on vectors: y_i' = x_i y_{i-1} as x times y shifted
  -- by one (a 1 in front); the steps, the zero start and that 1 are data
  odeArrays :: (Vec, Constant (Int, Vec, Vec)) -> Double
  odeArrays (x, c) = vindex (iterate step zeros !! s) (vlength x - 1)
    where
      (s, zeros, one) = constant c
      h = 2 / fromIntegral s
      rhs y = vmul x (vconcat [one, vslice 0 (vlength y - 1) y])
      -- y + a k, one array operation
      along a y k = vaxpy a k y
      step y =
        let k1 = rhs y
            k2 = rhs (along (h / 2) y k1)
            k3 = rhs (along (h / 2) y k2)
            k4 = rhs (along h y k3)
        in along (h / 6) y (vadd (vaxpy 2 k3 (vaxpy 2 k2 k1)) k4)
  |]

input :: Value -> Parser ([Double], Int)
input v = do
  x <- field "x" v
  s <- field "s" v
  if not (null x) && s >= 1 then pure (x, s) else fail "ode: need a non-empty x and s >= 1"

functions :: [(String, Function)]
functions =
  [ ("primal", function input ode (vector "ode"))
  , ("gradient", function (fmap arrays . input) (fst . odeGrad) (vector "ode" . vtoList)) ]
  where
    arrays (x, s) = (vfromList x, Constant (s, vfromList (map (const 0) x), vfromList [1]))

-- | Recorded at the first call and replayed at the next ones of the same
-- size (every run of an evaluate).
odeGrad :: (Vec, Constant (Int, Vec, Vec)) -> (Vec, Constant (Int, Vec, Vec))
odeGrad = $(tapedGrad 'odeArrays)
{-# NOINLINE odeGrad #-}
