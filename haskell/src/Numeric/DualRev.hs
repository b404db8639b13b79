-- | Reverse-mode automatic differentiation of ordinary Haskell code, recorded
-- on the tape of the dualrev C engine.
--
-- > {-# LANGUAGE TemplateHaskell #-}
-- > import Numeric.DualRev
-- >
-- > differentiable [d|
-- >   loss :: ([Double], [Double]) -> Double
-- >   loss (w, x) = let y = sum (zipWith (*) w x) in y * y
-- >   |]
-- >
-- > main = print ($(grad 'loss) ([1, 2], [3, 4]))
--
-- 'differentiable' keeps the declarations and adds their transformed (dual)
-- versions, named with the suffix @'dr@ (and @'drw@ for workers): later
-- blocks, other modules and the splices below use them by name.  A module
-- with an export list must export those too.
--
-- Semantics: differentiable code is evaluated strictly (call-by-value), as
-- in the paper this implements.  So infinite lists (except through
-- 'iterate', whose elements are computed on demand) and knot-tying
-- recursive values are not supported, and a @let@/@where@ binding is
-- computed even in a branch that does not use it.
--
-- Results are pure values: one whose evaluation an asynchronous exception
-- ('System.Timeout.timeout', 'Control.Concurrent.killThread') interrupted
-- is computed again, from the start, when it is next demanded.
module Numeric.DualRev
  ( -- * Declaring differentiable code
    differentiable
    -- * Derivatives
  , grad
  , grad'
  , differentiate
  , jacobian
    -- * Data that is not differentiated
  , Constant (..)
  , constant
    -- * Parallelism
  , (|*|)
    -- * Errors
  , DualRevError (..)
  ) where

import Language.Haskell.TH (Dec, Exp, Name, Q)

import Numeric.DualRev.Internal.Run.AD (DualRevError (..))
import Numeric.DualRev.Internal.Run.Constant (Constant (..), constant)
import Numeric.DualRev.Internal.Run.Pair ((|*|))
import Numeric.DualRev.Internal.Compile.Transform (differentiableDecs)
import Numeric.DualRev.Internal.Compile.Wrap

-- | Keep the declarations and emit their transformed versions.  Every
-- top-level function needs a type signature.
differentiable :: Q [Dec] -> Q [Dec]
differentiable = differentiableDecs

-- | @$(grad 'f) :: a -> a@ for @f :: a -> Double@: the gradient, shaped like
-- the input (discrete parts come back unchanged).  The tape is released at
-- once.
grad :: Name -> Q Exp
grad = gradQ

-- | @$(grad' 'f) :: a -> (Double, a)@: value and gradient.
grad' :: Name -> Q Exp
grad' = gradQ'

-- | @$(differentiate 'f) :: a -> (b, b -> a)@ for @f :: a -> b@: the value and
-- the backpropagator (vector-Jacobian product), which may be called any
-- number of times.  The tape is freed when the backpropagator is garbage.
differentiate :: Name -> Q Exp
differentiate = differentiateQ

-- | @$(jacobian 'f) :: a -> [a]@ for @f :: a -> b@: one row (a gradient) per
-- scalar of the output, in left-to-right order; one reverse sweep per row.
jacobian :: Name -> Q Exp
jacobian = jacobianQ
