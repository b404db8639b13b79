-- | The names of @ad@'s "Numeric.AD.Rank1.Forward": forward mode's functions, taking
-- functions of ordinary (rank-1) types over one fixed differentiable
-- scalar, @Forward a@.  As in @ad@, nothing in the types keeps two nested
-- differentiations apart: the rank-2 functions of "Numeric.DualRev.AD"
-- do, and compute the same.
module Numeric.DualRev.AD.Rank1.Forward
  ( Forward, auto
  , grad, grad', gradWith, gradWith'
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobianT, jacobianWithT
  , hessianProduct, hessianProduct'
  , diff, diff', diffF, diffF'
  , du, du', duF, duF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
import Numeric.DualRev.Internal.Overloaded.Value (auto)

-- | The differentiable scalar.
type Forward a = Rank1 a

