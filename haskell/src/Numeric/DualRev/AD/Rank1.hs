-- | The names of @ad@'s "Numeric.AD.Rank1": every differentiation of
-- "Numeric.DualRev.AD", taking functions of ordinary (rank-1) types over
-- one fixed differentiable scalar per kind of derivative, as @ad@'s do
-- (nothing in the types keeps two nested differentiations apart: the
-- rank-2 functions of "Numeric.DualRev.AD" do, and compute the same).
-- Gradients, Jacobians and Hessians run on the engine's tape
-- ("Numeric.DualRev.AD.Rank1.Kahn" and @.Sparse@ are these functions by
-- mode); the derivatives of every order of a function of one variable
-- ('diffs', 'taylor', ...) on the tower mode ("Numeric.DualRev.AD.Rank1.Tower").
--
-- >>> hessian (\[x, y] -> x * y) [1, 2]
-- [[0.0,1.0],[1.0,0.0]]
-- >>> take 4 (diffs (\x -> x ^ (3 :: Int)) 2)
-- [8,12,12,6]
module Numeric.DualRev.AD.Rank1
  ( -- * Modes
    Mode (auto), Scalar
    -- * Gradients
  , grad, grad', gradWith, gradWith'
    -- * Higher order gradients
  , grads
    -- * Variadic gradients
  , Grad, vgrad, vgrad', Grads, vgrads
    -- * Jacobians
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobians
  , jacobianT, jacobianWithT
    -- * Hessians
  , hessian, hessian', hessianF, hessianF', hessianProduct, hessianProduct'
    -- * Derivatives of a function of one variable
  , diff, diffF, diff', diffF'
  , diffs, diffsF, diffs0, diffs0F
    -- * Directional derivatives
  , du, du', duF, duF'
  , dus, dus0, dusF, dus0F
    -- * Taylor series
  , taylor, taylor0, maclaurin, maclaurin0
    -- * Gradient descent
  , gradientDescent, gradientAscent
  ) where

import Numeric.DualRev.Internal.Overloaded.Rank1
  ( grad, grad', gradWith, gradWith', grads
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobians
  , jacobianT, jacobianWithT
  , hessian, hessian', hessianF, hessianF', hessianProduct, hessianProduct'
  , diff, diffF, diff', diffF', du, du', duF, duF'
  , gradientDescent, gradientAscent )
import Numeric.DualRev.Internal.Overloaded.Rank1Tower
  ( diffs, diffsF, diffs0, diffs0F, dus, dus0, dusF, dus0F
  , taylor, taylor0, maclaurin, maclaurin0 )
import Numeric.DualRev.Internal.Overloaded.Value (Mode (..))
import Numeric.DualRev.Internal.Overloaded.Variadic (Grad, Grads, vgrad, vgrad', vgrads)
