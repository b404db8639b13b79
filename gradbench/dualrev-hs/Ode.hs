{-# LANGUAGE TemplateHaskell #-}
-- | The eval "ode": s steps of fourth-order Runge-Kutta on y_0' = x_0,
-- y_i' = x_i y_{i-1}, from y = 0 at t = 0 to t = 2; the primal is y at
-- t = 2, the gradient that of its last entry in x.
module Ode (functions, ode) where

import Data.Aeson.Types (Parser, Value)
import Numeric.DualRev

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

  odeLast :: ([Double], Int) -> Double
  odeLast xs = last (ode xs)
  |]

input :: Value -> Parser ([Double], Int)
input v = do
  x <- field "x" v
  s <- field "s" v
  if not (null x) && s >= 1 then pure (x, s) else fail "ode: need a non-empty x and s >= 1"

functions :: [(String, Function)]
functions =
  [ ("primal", function input ode (vector "ode"))
  , ("gradient", function input (fst . odeGrad) (vector "ode")) ]

-- | Recorded at the first call and replayed at the next ones of the same
-- size (every run of an evaluate).
odeGrad :: ([Double], Int) -> ([Double], Int)
odeGrad = $(tapedGrad 'odeLast)
{-# NOINLINE odeGrad #-}
