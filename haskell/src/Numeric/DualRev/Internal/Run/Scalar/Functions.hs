{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: import "Numeric.DualRev.Functions" instead.
--
-- Scalar functions beyond the Prelude's, with the C engine's values (the
-- same as its C API's @dr_OP@).  Each is its own function here; inside a
-- differentiable block it records one node with the engine's derivative
-- (the dual of each is generated from the engine's table, in
-- "Numeric.DualRev.Internal.Run.Scalar.FunctionDuals").  Re-exported by
-- "Numeric.DualRev.Functions".
module Numeric.DualRev.Internal.Run.Scalar.Functions where

import Numeric.DualRev.Internal.Engine.ScalarFFI

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.Functions

-- | The cube root, also of negative numbers; derivative @1 / (3 x^(2/3))@.
-- The value is the C library's @cbrt@, which need not be the double nearest
-- the exact root (glibc 2.36 gives @3.0000000000000004@ for @cbrt 27@).
--
-- >>> cbrt (-8)
-- -2.0
cbrt :: Double -> Double
cbrt = c_fe_cbrt

-- | The error function; derivative @2 / sqrt pi * exp (-x^2)@.
--
-- >>> erf 0
-- 0.0
erf :: Double -> Double
erf = c_fe_erf

-- | The logistic function @1 / (1 + exp (-x))@, computed without overflow;
-- its derivative does not cancel for large @|x|@.
--
-- >>> sigmoid 0
-- 0.5
sigmoid :: Double -> Double
sigmoid = c_fe_sigmoid

-- | @max x 0@; derivative 1 for @x > 0@, else 0 (0 at 0).
--
-- >>> map relu [-1, 2]
-- [0.0,2.0]
relu :: Double -> Double
relu = c_fe_relu

-- | @log (1 + exp x)@, computed without overflow (@x@ for large @x@);
-- derivative 'sigmoid'.
--
-- >>> softplus 0
-- 0.6931471805599453
softplus :: Double -> Double
softplus = c_fe_softplus

-- | @sqrt (x^2 + y^2)@ without overflow; partials @x / h@ and @y / h@ (0 at
-- the origin).
--
-- >>> hypot 3 4
-- 5.0
hypot :: Double -> Double -> Double
hypot = c_fe_hypot
