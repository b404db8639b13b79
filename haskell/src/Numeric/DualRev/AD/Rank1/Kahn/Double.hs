-- | The names of @ad@'s "Numeric.AD.Rank1.Kahn.Double": Kahn mode's functions at Double, taking
-- functions of ordinary (rank-1) types over one fixed differentiable
-- scalar, @KahnDouble@.  As in @ad@, nothing in the types keeps two nested
-- differentiations apart: the rank-2 functions of "Numeric.DualRev.AD"
-- do, and compute the same.
module Numeric.DualRev.AD.Rank1.Kahn.Double
  ( KahnDouble, auto
  , grad, grad', gradWith, gradWith'
  , jacobian, jacobian', jacobianWith, jacobianWith'
  , hessian, hessianF
  , diff, diff', diffF, diffF'
  , vgrad, vgrad', Grad
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
import Numeric.DualRev.Internal.Overloaded.Value (auto)

import Numeric.DualRev.Internal.Overloaded.Variadic (Grad, vgrad, vgrad')
-- | The differentiable scalar at Double.
type KahnDouble = Rank1 Double

