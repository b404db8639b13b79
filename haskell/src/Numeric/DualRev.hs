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
-- What a block may contain, in short (the README's \"What Haskell code is accepted\"
-- has the full list):
--
-- * functions and constants with type signatures, monomorphic or with class
--   constraints (@Floating a => [a] -> a@); data types, records, classes and
--   instances of one's own (also @Num@ / @Floating@ instances for vector
--   types);
-- * the usual expression forms (lambdas, @let@ / @where@, guards, @case@,
--   view patterns, list comprehensions, arithmetic sequences, sections) and
--   do-notation in @Maybe@, @Either e@, lists and @Identity@;
-- * the Prelude's numeric functions and most of its list functions, much of
--   "Data.List", "Data.Maybe", "Data.Either", "Data.Function", "Data.Ord"
--   and "Control.Monad", and the array functions of "Numeric.DualRev.Array"
--   (each one tape node);
-- * class-polymorphic functions defined outside any block, called at the
--   dual scalar, and functions defined outside any block that 'primitive'
--   gave a derivative of their own.
--
-- Anything else is a compile-time error naming the construct, the
-- definition and the block's source location.
--
-- The inputs and outputs of a differentiated function may be built from
-- 'Double', 'Int', 'Bool', tuples, lists, 'Maybe', 'Either', user data
-- types and the arrays 'Numeric.DualRev.Array.Vec' and
-- 'Numeric.DualRev.Array.Mat'; a part wrapped in 'Constant' is data, not
-- differentiated.
--
-- Semantics: differentiable code is evaluated strictly (call-by-value), as
-- in the paper this implements.  So knot-tying recursive values are not
-- supported, and a @let@/@where@ binding is computed even in a branch that
-- does not use it; infinite lists work only where a lazy consumer (@zip@,
-- @take@, @takeWhile@, ...) consumes them: their elements are recorded when
-- first demanded.
--
-- Results are pure values: one whose evaluation an asynchronous exception
-- ('System.Timeout.timeout', 'Control.Concurrent.killThread') interrupted
-- is computed again, from the start, when it is next demanded.
--
-- More: "Numeric.DualRev.Array" for vectors and matrices; the package's
-- @haskell/examples/FitModel.hs@ for a complete program; the cases under
-- @haskell/test/compile-fail/@ for the errors the front end gives.
module Numeric.DualRev
  ( -- * Declaring differentiable code
    differentiable
    -- * Derivatives
  , grad
  , grad'
  , differentiate
  , jacobian
  , jvp
  , jvps
    -- * Gradients recorded once, replayed after
  , tapedGrad
  , tapedGrad'
  , tapedJacobian
  , tapedHvp
    -- * Second derivatives
  , hvp
  , hessian
  , gnvp
  , sparseJacobian
  , sparseHessian
    -- * Custom derivative rules
  , primitive
  , primitiveWithJVP
    -- * Derivatives inside differentiable code
  , derivative
  , derivative'
  , gradient
  , gradient'
  , jacobianOf
  , hessianOf
    -- * Data that is not differentiated
  , Constant (..)
  , constant
    -- * Parallelism
  , (|*|)
    -- * Long loops
  , checkpointedIterate
  , checkpointedIterateWith
  , defaultSnapshots
    -- * Errors
  , DualRevError (..)
  ) where

import Language.Haskell.TH (Dec, Exp, Name, Q)

import Numeric.DualRev.Internal.Run.Scalar.AD (DualRevError (..))
import Numeric.DualRev.Internal.Run.Control.Checkpoint (checkpointedIterate, checkpointedIterateWith, defaultSnapshots)
import Numeric.DualRev.Internal.Run.Driver.Constant (Constant (..), constant)
import Numeric.DualRev.Internal.Run.Control.Nested (derivative, derivative', gradient, gradient', jacobianOf, hessianOf)
import Numeric.DualRev.Internal.Run.Control.Pair ((|*|))
import Numeric.DualRev.Internal.Compile.Custom (primitiveDecs)
import Numeric.DualRev.Internal.Compile.Transform (differentiableDecs)
import Numeric.DualRev.Internal.Compile.Wrap
import Numeric.DualRev.Internal.Compile.Taped (tapedGradQ, tapedGradQ', tapedHvpQ, tapedJacobianQ)

-- | Keep the declarations and emit their transformed versions.  Every
-- top-level function needs a type signature.  The examples below use this
-- block:
--
-- > differentiable [d|
-- >   f :: (Double, Double) -> Double
-- >   f (x, y) = x * y + y * y
-- >
-- >   polar :: (Double, Double) -> (Double, Double)
-- >   polar (r, t) = (r * cos t, r * sin t)
-- >   |]
differentiable :: Q [Dec] -> Q [Dec]
differentiable = differentiableDecs

-- | @$(grad 'f) :: a -> a@ for @f :: a -> Double@: the gradient, shaped like
-- the input (discrete parts come back unchanged).  The tape is released at
-- once.
--
-- > $(grad 'f) (3, 2)  ==  (2.0, 7.0)    -- (y, x + 2 y)
grad :: Name -> Q Exp
grad = gradQ

-- | @$(grad' 'f) :: a -> (Double, a)@: value and gradient.
--
-- > $(grad' 'f) (3, 2)  ==  (10.0, (2.0, 7.0))
grad' :: Name -> Q Exp
grad' = gradQ'

-- | @$(differentiate 'f) :: a -> (b, b -> a)@ for @f :: a -> b@: the value and
-- the backpropagator (vector-Jacobian product), which may be called any
-- number of times.  The tape is freed when the backpropagator is garbage.
--
-- > let (y, back) = $(differentiate 'polar) (2, 0)
-- > y          ==  (2.0, 0.0)
-- > back (1, 0)  ==  (1.0, 0.0)    -- the gradient of the first output
-- > back (0, 1)  ==  (0.0, 2.0)    -- and of the second
differentiate :: Name -> Q Exp
differentiate = differentiateQ

-- | @$(jacobian 'f) :: a -> [a]@ for @f :: a -> b@: one row (a gradient) per
-- scalar of the output, in left-to-right order.  The engine sweeps the
-- recorded tape forward, one sweep per block of input directions, when the
-- output has more scalars than the input, and in reverse, one sweep per
-- block of rows, otherwise.
--
-- > $(jacobian 'polar) (2, 0)  ==  [(1.0, 0.0), (0.0, 2.0)]
jacobian :: Name -> Q Exp
jacobian = jacobianQ

-- | @$(jvp 'f) :: a -> a -> (b, b)@ for @f :: a -> b@: the value and the
-- directional derivative J v in the direction v (shaped like the input),
-- shaped like the output: one forward sweep, whatever the output's size.
-- Discrete parts of the direction are ignored; those of the result are the
-- output's.
--
-- > $(jvp 'polar) (2, 0) (0, 1)  ==  ((2.0, 0.0), (0.0, 2.0))   -- d/dt
-- > $(jvp 'f) (3, 2) (1, 1)      ==  (10.0, 9.0)                -- y + x + 2 y
jvp :: Name -> Q Exp
jvp = jvpQ

-- | @$(jvps 'f) :: a -> [a] -> (b, [b])@ for @f :: a -> b@: the value and
-- the directional derivatives along each of the directions, from one
-- recording and one forward sweep that carries every direction side by
-- side, where a 'jvp' per direction would record @f@ again for each.  A
-- gradient by forward mode is the directions of the unit vectors.
--
-- > $(jvps 'f) (3, 2) [(1, 0), (0, 1)]  ==  (10.0, [2.0, 7.0])   -- y, x + 2 y
jvps :: Name -> Q Exp
jvps = jvpsQ

-- | @$(tapedGrad 'f) :: a -> a@: the gradient, as 'grad' gives it, from a
-- function recorded once and replayed by the engine at later inputs,
-- without running f's Haskell code again.  Bind it once and call the
-- binding many times (a gradient-descent loop, an optimiser, a sampler):
--
-- > let g = $(tapedGrad 'loss)
-- > in  iterate (\w -> zipWith (\a d -> a - 0.1 * d) w (g w)) w0 !! 400
--
-- Each binding keeps one tape, a buffer of the input's scalars, the input
-- it was recorded at (whose arrays of data the tape reads) and the input
-- of its last replay (freed when the binding is).  A call
-- replays it where its input has the recorded input's discrete structure
-- (the same list lengths, constructors, and Int, Bool, Char parts: the
-- input type needs 'Eq') and every comparison f made on a differentiable
-- value comes out the same (@<@, '==', 'compare', 'max', 'min', 'floor',
-- 'round', 'isNaN', 'signum', ..., inside library functions such as
-- 'Data.List.sort' too); otherwise it records f again at that input and
-- keeps the new tape.  The result is, bit for bit, the gradient 'grad'
-- computes.  A function the engine cannot replay (custom rules, nested
-- derivatives) is recorded at every call, as by 'grad'.  A @Vec@ or @Mat@
-- of the input is one array input of the tape, which reads the new
-- input's elements where they are at each replay (no copy).  The discrete
-- parts are compared with '==' at every call, the data (in a 'Constant')
-- by the bits of its Doubles, arrays included, as the tape holds the
-- recorded values (-0 for 0 is other data; the same NaN is the same),
-- except a part that is the very object the last call passed there (the
-- same data set at every step of a loop).  Safe to call
-- from many threads: a call that finds the tape in use records on a tape
-- of its own (kept where the other call has not put its tape back by
-- then).  A call that an exception interrupts drops its tape, and the
-- next call records afresh.
tapedGrad :: Name -> Q Exp
tapedGrad = tapedGradQ

-- | @$(tapedGrad' 'f) :: a -> (Double, a)@: value and gradient, as
-- 'tapedGrad' computes them.
tapedGrad' :: Name -> Q Exp
tapedGrad' = tapedGradQ'

-- | @$(tapedJacobian 'f) :: a -> [a]@ for @f :: a -> b@: the Jacobian as
-- 'jacobian' gives it (one row per scalar of the output, each shaped like
-- the input), from a function recorded once and replayed, as 'tapedGrad'.
tapedJacobian :: Name -> Q Exp
tapedJacobian = tapedJacobianQ

-- | @$(tapedHvp 'f) :: a -> a -> a@ for @f :: a -> Double@: 'hvp' (the
-- Hessian at x times the direction v, shaped like the input) from a
-- function recorded once and replayed, as 'tapedGrad': a call that
-- replays runs none of f's Haskell code, only the engine's replay and one
-- product.  For the products of a Newton-CG step or a Lanczos iteration,
-- which take many directions at one point, and for a new point at each
-- step of an optimiser.
--
-- > $(tapedHvp 'f) (3, 2) (1, 0)  ==  (0.0, 1.0)    -- H = [[0, 1], [1, 2]]
tapedHvp :: Name -> Q Exp
tapedHvp = tapedHvpQ

-- | @$(hvp 'f) :: a -> a -> a@ for @f :: a -> Double@: the Hessian of f at x
-- times the direction v, shaped like the input (discrete parts come back
-- unchanged), without forming the Hessian: forward over reverse on the
-- recorded computation (one tangent pass, one reverse pass).
--
-- > $(hvp 'f) (3, 2) (1, 0)  ==  (0.0, 1.0)    -- H = [[0, 1], [1, 2]]
--
-- Second derivatives need a rule for every operation on the tape: they
-- work through the array operations of "Numeric.DualRev.Array"; a custom
-- rule ('primitive') or a checkpointed loop on the way gets a
-- 'DualRevError' with the engine's message for DR_ENOTSUP.
hvp :: Name -> Q Exp
hvp = hvpQ

-- | @$(gnvp 'r) :: a -> a -> a@ for residuals @r :: a -> b@: the
-- Gauss-Newton product J^T J v, J the Jacobian of r's output scalars at x,
-- shaped like the input: the curvature of the least-squares objective
-- @0.5 * sum of squares of r@ without the residuals' own second
-- derivatives (positive semidefinite: what Gauss-Newton and
-- Levenberg-Marquardt steps solve with).  One forward and one reverse
-- sweep over one recording, with no second-order rules needed (custom
-- rules with a forward rule and array operations work).
--
-- > $(gnvp 'polar) (2, 0) (1, 1)  ==  (1.0, 4.0)   -- J = [[1, 0], [0, 2]]
gnvp :: Name -> Q Exp
gnvp = gnvpQ

-- | @$(sparseJacobian 'f) :: a -> [((Int, Int), Double)]@ for @f :: a -> b@:
-- the Jacobian's nonzero entries, ((output scalar, input scalar), value),
-- the scalars of output and input numbered left to right from 0 (as
-- 'jacobian' orders its rows and their entries), row by row.  The engine
-- reads the sparsity pattern off the recorded graph, colours its columns
-- (or rows) and takes one sweep per colour: a banded Jacobian of any size
-- costs a few sweeps.  An entry of the pattern may be zero at this point.
--
-- > $(sparseJacobian 'f) [1, 2, 3]   -- f [x, y, z] = [x * y, sin z]
-- >   ==  [((0, 0), 2.0), ((0, 1), 1.0), ((1, 2), cos 3)]
sparseJacobian :: Name -> Q Exp
sparseJacobian = sparseJacobianQ

-- | @$(sparseHessian 'f) :: a -> [((Int, Int), Double)]@ for
-- @f :: a -> Double@: the Hessian's nonzero entries, both triangles,
-- ((input scalar, input scalar), value), numbered as 'sparseJacobian'
-- numbers the input, row by row: the pattern read off the recorded
-- graph, coloured, and one Hessian-vector product per colour.  The same
-- limits as 'hvp'.
--
-- > $(sparseHessian 'f) [1, 2, 3]   -- f [x, y, z] = x * y + z ^ 3
-- >   ==  [((0, 1), 1.0), ((1, 0), 1.0), ((2, 2), 18.0)]
sparseHessian :: Name -> Q Exp
sparseHessian = sparseHessianQ

-- | @$(hessian 'f) :: a -> [a]@ for @f :: a -> Double@: the rows of the
-- (symmetric) Hessian, one per scalar of the input in left-to-right order,
-- each shaped like the input; n Hessian-vector products for n scalars.
-- The same limits as 'hvp'.
--
-- > $(hessian 'f) (3, 2)  ==  [(0.0, 1.0), (1.0, 2.0)]
hessian :: Name -> Q Exp
hessian = hessianQ

-- | @primitive 'f 'fVJP@, a declaration splice, makes @f@, a function
-- defined outside any block (ordinary code, a foreign import), a primitive
-- of differentiable code with the derivative @fVJP@, its VJP: at the
-- arguments, the value and the backpropagator from the value's cotangent
-- to the arguments' adjoints.  Blocks then use @f@ as they use a built-in
-- (called, mapped, passed around), and every splice differentiates
-- through it.
--
-- > softclip :: Double -> Double -> Double            -- any code
-- > softclip c x = c * tanh (x / c)
-- >
-- > softclipVJP :: Double -> Double -> (Double, Double -> (Double, Double))
-- > softclipVJP c x =
-- >   let t = tanh (x / c)
-- >   in (c * t, \ybar -> (ybar * (t - x / c * (1 - t * t)), ybar * (1 - t * t)))
-- >
-- > primitive 'softclip 'softclipVJP
-- >
-- > differentiable [d|
-- >   loss :: [Double] -> Double
-- >   loss xs = sum (map (softclip 2) xs)
-- >   |]
-- >
-- > $(grad 'loss) [1, 2, 3]   -- 1 - tanh (x / 2) ^ 2 for each x
--
-- For @f :: a1 -> ... -> an -> b@ the VJP's type is
--
-- > fVJP :: a1 -> ... -> an -> (b, b -> (c1, ..., ck))
--
-- where @c1 ... ck@ are the types of the arguments that hold Doubles, in
-- order (for one of them, no tuple); the other arguments (@Int@, @Bool@,
-- 'Constant', ...) are data, passed to the rule as they are, without
-- adjoints.  The result and the arguments holding Doubles are built from
-- 'Double', lists and tuples (of up to 7 components).  A polymorphic
-- function or rule is taken at 'Double'.  A rule whose arity or type does
-- not fit the function, a rule for a built-in or for a function of a
-- block, is a compile-time error naming the rule, its location and the
-- type to write.
--
-- When a call is recorded, the rule gives the engine its Jacobian there,
-- one node of given partials per scalar of the value, from one call of the
-- backpropagator per scalar of the value (one for a 'Double'): every
-- derivative of this module works through it ('jvp' and 'jacobian'
-- included), and the rule runs only where a call is recorded.  Give a rule
-- to a function of one element and 'map' it rather than to a function
-- returning a long list.  The rule has no second derivatives: 'hvp',
-- 'hessian', and 'derivative' or 'gradient' taken around a call inside
-- differentiable code, raise a 'DualRevError' naming the rule.
--
-- Declare the rule after the function and its derivatives, before the
-- blocks that use it.  Other modules use the rule when the declaring
-- module exports @f'dr@ and @f'drw@ beside @f@, as for a block's functions.
primitive :: Name -> Name -> Q [Dec]
primitive f vjp = primitiveDecs "primitive" f vjp Nothing

-- | @primitiveWithJVP 'f 'fVJP 'fJVP@: 'primitive' with a JVP too,
--
-- > fJVP :: a1 -> ... -> an -> (b, (c1, ..., ck) -> b)
--
-- the value and the map from the arguments' tangents (shaped as the VJP's
-- adjoints) to the value's tangent.  Where the arguments have fewer
-- scalars than the value, the Jacobian of a call is built from the JVP,
-- one call of that map per scalar of the arguments, rather than from the
-- VJP.  The value of a call is the VJP's either way.
primitiveWithJVP :: Name -> Name -> Name -> Q [Dec]
primitiveWithJVP f vjp fjvp = primitiveDecs "primitiveWithJVP" f vjp (Just fjvp)
