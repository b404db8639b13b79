-- | Derivatives of ordinary overloaded Haskell functions on the dualrev C
-- engine, with the names, argument orders and types of the @ad@ package's
-- "Numeric.AD": code written for @ad@ switches by changing its import.
--
-- > import Numeric.DualRev.AD   -- was: import Numeric.AD
-- >
-- > grad (\[x, y] -> x * y + sin x) [1, 2]   ==  [2 + cos 1, 1]
-- > hessian (\[x, y] -> x * x * y) [1, 2]     ==  [[4, 2], [2, 0]]
-- > diff (\x -> x * diff (\y -> auto x + y) 1) 1  ==  1
--
-- The differentiable scalar ('Reverse') records every operation on a C
-- tape as it is evaluated, with the engine's derivative rules (the same as
-- the Template Haskell splices of "Numeric.DualRev" use); the sweeps are
-- the engine's.  Each differentiation has a tape of its own.  A nested one
-- ('grad' inside 'grad', 'hessian', a derivative in a line search) records
-- on the enclosing one's tape and records its own derivatives there too,
-- seeded on fresh copies of its inputs: 'auto' brings an enclosing
-- variable in, and perturbations of different levels do not mix.
--
-- Element types: 'Double', 'Float' (computed in Double, rounded back), any
-- other 'RealFloat' type (carried as Double), and the scalar of an
-- enclosing differentiation.  'Element' is a synonym of 'RealFloat', so an
-- expression such as @grad (\[x, y] -> x * y) [1, 2]@ needs no annotation:
-- its element type defaults to 'Double', as with @ad@.  Differences from
-- @ad@:
--
-- * a sweep does not pass a zero adjoint on (include/dualrev.h): where @ad@
--   gets NaN from 0 * infinity (@sqrt x * sqrt y@ at x = 0, y = 0), the
--   derivative here is 0; and @x ** y@ at x = 0 has the derivative 0 in y
--   where the value is 0 (@ad@: NaN, from 0 * log 0);
-- * 'floatRadix' of a 'Reverse' is -2, the mark that tells the scalar of
--   an enclosing differentiation from a number (@ad@ answers the
--   element's radix);
-- * one differentiable type, 'Reverse', for every function (@ad@ picks a
--   mode per function: @Forward@ for 'diff' and 'du', sparse for
--   'hessian'); functions written against the classes ('Num', 'Floating',
--   'Mode', ...) or against @Reverse s a@ work unchanged;
-- * the containers of 'jacobian', 'diffF' and 'du' are 'Traversable' (@ad@
--   asks only 'Functor' of some);
-- * results are computed when demanded, whole: the gradient of a call is
--   read in one sweep;
-- * Newton's method ('findZero', 'extremum', ...) is in
--   "Numeric.DualRev.AD.Newton", as in @ad@;
-- * the arithmetic of one differentiation must run on one thread at a time
--   (no 'par' between its operations); separate differentiations may run
--   on any threads;
-- * 'AD' is a type family, not a newtype: @AD s (Forward a)@, @AD s
--   (Sparse a)@, ... in a signature written for @ad@ stand for 'Reverse'
--   (@AD s (Tower a)@ for 'Derivatives'), so signatures compile unchanged,
--   but there is no @AD@ constructor to apply or match;
-- * derivatives of every order ('grads', 'jacobians', 'vgrads') nest one
--   differentiation per order and share nothing between symmetric
--   partials (@ad@'s sparse mode computes d2f/dxdy once).
--
-- Modules with @ad@'s names: "Numeric.DualRev.AD.Double",
-- "Numeric.DualRev.AD.Newton" (and @.Double@, with 'constrainedDescent'),
-- "Numeric.DualRev.AD.Jet", and "Numeric.DualRev.AD.Mode.Reverse",
-- @.Mode.Kahn@, @.Mode.Forward@, @.Mode.Sparse@, @.Mode.Dense@ (the same
-- scalar: the same results) and "Numeric.DualRev.AD.Mode.Tower", each with
-- its @.Double@ form; "Numeric.DualRev.AD.Rank1" (every function of this
-- module with rank-1 types), "Numeric.DualRev.AD.Rank1.Forward", @.Rank1.Kahn@,
-- @.Rank1.Sparse@, @.Rank1.Dense@, @.Rank1.Tower@ and @.Rank1.Newton@ (and
-- the @.Double@ forms @ad@ has) take functions of rank-1 types over one
-- fixed scalar, as @ad@'s do (nothing in their types keeps nested
-- differentiations apart); "Numeric.DualRev.AD.Halley" and
-- @.Rank1.Halley@ (and their @.Double@ forms), Halley's method on the tower
-- mode; "Numeric.DualRev.AD.Mode.Dense.Representable" and
-- @.Rank1.Dense.Representable@, dense forward mode in Haskell over
-- containers that are 'Data.Functor.Rep.Representable' but need not be
-- 'Traversable'.
module Numeric.DualRev.AD
  ( -- * The differentiable scalar
    Reverse
  , AD
  , Element
  , Mode (..)
  , Reifies, Tape
    -- * Gradients
  , grad, grad', gradWith, gradWith'
    -- * Derivatives of every order (a 'Cofree' stream)
  , grads, jacobians
    -- * Variadic gradients
  , Grad, Variadic, vgrad, vgrad'
  , Grads, vgrads
    -- * Jacobians
  , jacobian, jacobian', jacobianWith, jacobianWith'
  , jacobianT, jacobianWithT
    -- * Hessians
  , hessian, hessian', hessianF, hessianF'
  , hessianProduct, hessianProduct'
    -- * Derivatives
  , diff, diff', diffF, diffF'
    -- * Directional derivatives
  , du, du', duF, duF'
    -- * Every derivative (a tower, "Numeric.DualRev.AD.Mode.Tower")
  , Derivatives
  , diffs, diffs0, diffsF, diffs0F
  , dus, dus0, dusF, dus0F
  , taylor, taylor0, maclaurin, maclaurin0
    -- * Gradient descent
  , gradientDescent, gradientAscent
  , conjugateGradientDescent, conjugateGradientAscent
  , stochasticGradientDescent
    -- * Working with every order ("Numeric.DualRev.AD.Jet")
  , Jet (..), headJet, tailJet, jet
  ) where

import Numeric.DualRev.Internal.Overloaded.Drivers
import Numeric.DualRev.Internal.Overloaded.Optimize
import Numeric.DualRev.Internal.Overloaded.Higher
import Numeric.DualRev.Internal.Overloaded.ModeNames (AD)
import Numeric.DualRev.Internal.Overloaded.Tower hiding (diff, diff', du, du', duF, duF')
import Numeric.DualRev.AD.Jet
import Numeric.DualRev.Internal.Overloaded.Variadic
import Numeric.DualRev.Internal.Overloaded.Value
