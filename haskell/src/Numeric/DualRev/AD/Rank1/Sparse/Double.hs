-- | The names of @ad@'s "Numeric.AD.Rank1.Sparse.Double": sparse mode's functions at Double, taking
-- functions of ordinary (rank-1) types over one fixed differentiable
-- scalar, @SparseDouble@.  As in @ad@, nothing in the types keeps two nested
-- differentiations apart: the rank-2 functions of "Numeric.DualRev.AD"
-- do, and compute the same.
module Numeric.DualRev.AD.Rank1.Sparse.Double
  ( SparseDouble, auto
  , grad, grad', gradWith, gradWith'
  , Grad, vgrad, grads, Grads, vgrads
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobians
  , hessian, hessian', hessianF, hessianF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
import Numeric.DualRev.Internal.Overloaded.Value (auto)

import Numeric.DualRev.Internal.Overloaded.Variadic (Grad, Grads, vgrad, vgrads)
-- | The differentiable scalar at Double.
type SparseDouble = Rank1 Double

