{-# LANGUAGE KindSignatures #-}
-- | The names of @ad@'s "Numeric.AD.Rank1.Dense": dense mode's functions, taking
-- functions of ordinary (rank-1) types over one fixed differentiable
-- scalar, @Dense f a@.  As in @ad@, nothing in the types keeps two nested
-- differentiations apart: the rank-2 functions of "Numeric.DualRev.AD"
-- do, and compute the same.
module Numeric.DualRev.AD.Rank1.Dense
  ( Dense, auto
  , grad, grad', gradWith, gradWith'
  , jacobian, jacobian', jacobianWith, jacobianWith'
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
import Numeric.DualRev.Internal.Overloaded.Value (auto)

import Data.Kind (Type)
-- | The differentiable scalar (the container's type is only a name here).
type Dense (f :: Type -> Type) a = Rank1 a

