-- | The names of @ad@'s "Numeric.AD.Rank1.Sparse": sparse mode's functions, taking
-- functions of ordinary (rank-1) types over one fixed differentiable
-- scalar, @Sparse a@.  As in @ad@, nothing in the types keeps two nested
-- differentiations apart: the rank-2 functions of "Numeric.DualRev.AD"
-- do, and compute the same.
module Numeric.DualRev.AD.Rank1.Sparse
  ( Sparse, auto
  , grad, grad', gradWith, gradWith'
  , Grad, vgrad, grads, Grads, vgrads
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobians
  , hessian, hessian', hessianF, hessianF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
import Numeric.DualRev.Internal.Overloaded.Value (auto)

import Numeric.DualRev.Internal.Overloaded.Variadic (Grad, Grads, vgrad, vgrads)
-- | The differentiable scalar.
type Sparse a = Rank1 a

