{-# LANGUAGE BangPatterns #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Derivatives taken inside differentiable code.  The inner function is
-- recorded on the same tape, on a fresh copy of its argument, while the
-- tape logs what second derivatives need; then the engine records the
-- inner function's derivative as ordinary operations: its tangent pass,
-- seeded on that copy only, for a derivative (dr_tangent_record), or its
-- reverse pass, one for all the copies, for a gradient and each row of a
-- Jacobian (dr_adjoint_record).  The result is a dual number like any
-- other, so the outer derivative differentiates through it, and an inner
-- function that refers to an outer variable sees it as a constant of the
-- inner derivative: no confusion of perturbations.  Nesting goes to any
-- depth, each level recording the tangent pass of the one inside it.
module Numeric.DualRev.Internal.Run.Control.Nested
  ( derivative
  , derivative'
  , gradient
  , gradient'
  , jacobianOf
  , hessianOf
  , derivativeD
  , derivativeD'
  , gradientD
  , gradientD'
  , jacobianOfD
  , hessianOfD
    -- * For the overloaded mode
  , nestedOn
  , copyOf
  , tangentSeeded
  ) where

import Control.Exception (finally, throwIO)
import Control.Monad (forM, when)
import Data.Int (Int64)
import Foreign.C.String (peekCString)
import Foreign.C.Types (CInt)
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (Ptr, castPtr, plusPtr)
import Foreign.Storable (peekByteOff, pokeByteOff)

import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.NestFFI
import Numeric.DualRev.Internal.Run.Scalar.AD

-- | @derivative f x@: the derivative of @f@ at @x@.
--
-- Meant for differentiable code: inside a 'Numeric.DualRev.differentiable'
-- block it may be applied to local functions and lambdas, including
-- closures over the enclosing function's arguments, and the block's
-- derivatives ('Numeric.DualRev.grad', ...) differentiate through it, to
-- any depth of nesting:
--
-- > differentiable [d|
-- >   confused :: Double -> Double
-- >   confused x = x * derivative (\y -> x + y) x   -- x * 1
-- >   |]
-- >
-- > $(grad 'confused) 5  ==  1.0
--
-- A block function that calls it is also an ordinary function: called
-- directly (@confused 5 == 5@), it runs its differentiable version on a
-- tape of its own and gives the value (for a signature without type
-- variables and arguments the splices can take; others keep the call
-- below).  Called directly in ordinary code, outside any block, the
-- function it is given is a compiled @Double -> Double@ whose operations
-- cannot be seen, so the call raises an error; take derivatives of
-- ordinary code with the splices.
derivative :: (Double -> Double) -> Double -> Double
derivative _ _ = throwOutside "derivative"

-- | @gradient f xs@: the gradient of @f@ at @xs@, one entry per input.
-- Like 'derivative': for differentiable code, where it may be nested and
-- differentiated through.
--
-- > differentiable [d|
-- >   hvpByNesting :: ([Double], [Double]) -> [Double]
-- >   hvpByNesting (x, v) =
-- >     gradient (\x' -> sum (zipWith (*) v (gradient f x'))) x
-- >   |]
gradient :: ([Double] -> Double) -> [Double] -> [Double]
gradient _ _ = throwOutside "gradient"

-- | @derivative' f x@: the value of @f@ at @x@ and its derivative there,
-- from one recording of @f@ (where @(f x, derivative f x)@ records @f@
-- twice).  Like 'derivative': for differentiable code.
derivative' :: (Double -> Double) -> Double -> (Double, Double)
derivative' _ _ = throwOutside "derivative'"

-- | @gradient' f xs@: the value of @f@ at @xs@ and its gradient there, from
-- one recording of @f@ (as 'Numeric.DualRev.grad'' does for a splice, and
-- @ad@'s @grad'@): where a loop needs both at each point (a descent that
-- compares values and steps along gradients), one recording instead of
-- two.  Like 'gradient': for differentiable code.
--
-- > differentiable [d|
-- >   -- one step of gradient descent, the value at the start beside it
-- >   step :: [Double] -> (Double, [Double])
-- >   step x = let (v, g) = gradient' (\ys -> sum (map (\y -> y * y) ys)) x
-- >            in (v, zipWith (\a d -> a - 0.1 * d) x g)
-- >   |]
gradient' :: ([Double] -> Double) -> [Double] -> (Double, [Double])
gradient' _ _ = throwOutside "gradient'"

-- | @jacobianOf f xs@: the Jacobian of @f@ at @xs@, one row per output
-- (the gradient of that output).  Like 'gradient': for differentiable
-- code, where it may be nested and differentiated through; one recorded
-- reverse pass per output.
--
-- > differentiable [d|
-- >   -- the Jacobian's determinant of a map of the plane
-- >   jdet :: [Double] -> Double
-- >   jdet p = let [[a, b], [c, d]] = jacobianOf (\[x, y] -> [x * y, x + sin y]) p
-- >            in a * d - b * c
-- >   |]
jacobianOf :: ([Double] -> [Double]) -> [Double] -> [[Double]]
jacobianOf _ _ = throwOutside "jacobianOf"

-- | @hessianOf f xs@: the Hessian of @f@ at @xs@, one row per input: the
-- Jacobian of the gradient.  Like 'gradient': for differentiable code,
-- where it may be nested and differentiated through.
--
-- > differentiable [d|
-- >   -- the Laplacian of x^3 y: the trace of its Hessian, 6 x y
-- >   laplacian :: [Double] -> Double
-- >   laplacian p = sum (zipWith (!!) (hessianOf (\[x, y] -> x * x * x * y) p) [0 ..])
-- >   |]
hessianOf :: ([Double] -> Double) -> [Double] -> [[Double]]
hessianOf _ _ = throwOutside "hessianOf"

throwOutside :: String -> a
throwOutside name = errorWithoutStackTrace
  ("dualrev: `" ++ name ++ "' was called outside differentiable code: it "
   ++ "differentiates the code of a differentiable block; call it inside one "
   ++ "and use the block's function through a splice ($(grad 'f), ...)")

-- | The dual of 'derivative'.
derivativeD :: (D -> AD D) -> D -> AD D
derivativeD f x = nested $ \t mark -> do
  y <- copyOf t x
  r <- unAD (f y) t
  tangentOf t mark [idD y] r

-- | The dual of 'gradient': one recorded reverse pass for all inputs.
gradientD :: ([D] -> AD D) -> [D] -> AD [D]
gradientD f xs = nested $ \t mark -> do
  ys <- mapM (copyOf t) xs
  r <- unAD (f ys) t
  adjointOf t mark (map idD ys) r

-- | The dual of 'derivative'': the inner function's value beside its
-- tangent (the value depends on x through the copy, so an outer derivative
-- goes through it as through x).
derivativeD' :: (D -> AD D) -> D -> AD (D, D)
derivativeD' f x = nested $ \t mark -> do
  y <- copyOf t x
  r <- unAD (f y) t
  d <- tangentOf t mark [idD y] r
  pure (r, d)

-- | The dual of 'gradient'': the value beside one recorded reverse pass.
gradientD' :: ([D] -> AD D) -> [D] -> AD (D, [D])
gradientD' f xs = nested $ \t mark -> do
  ys <- mapM (copyOf t) xs
  r <- unAD (f ys) t
  gs <- adjointOf t mark (map idD ys) r
  pure (r, gs)

-- | The dual of 'jacobianOf': one recorded reverse pass per output.
jacobianOfD :: ([D] -> AD [D]) -> [D] -> AD [[D]]
jacobianOfD f xs = nested $ \t mark -> do
  ys <- mapM (copyOf t) xs
  rs <- unAD (f ys) t
  forM rs (adjointOf t mark (map idD ys))

-- | The dual of 'hessianOf': the Jacobian of the recorded gradient.
hessianOfD :: ([D] -> AD D) -> [D] -> AD [[D]]
hessianOfD f = jacobianOfD (gradientD f)

-- | Run with the tape logging second-order information from a mark on,
-- restoring its order afterwards.
nested :: (Ptr CTape -> Int64 -> IO a) -> AD a
nested body = AD (\t -> nestedOn t (body t))

-- | 'nested' on a given tape: the body gets the mark.  It records even
-- inside the operand of a comparison ('unrecordedD'): a derivative there
-- needs the nodes of its own function.
nestedOn :: Ptr CTape -> (Int64 -> IO a) -> IO a
nestedOn t body = do
  saved <- c_nest_begin t
  when (saved < 0) (failWith "a derivative inside differentiable code" (negate saved))
  mark <- c_tape_mark t
  body mark `finally` c_nest_end t saved

-- | A fresh node with the value of x that depends on x: the inner
-- variable, seeded alone.
copyOf :: Ptr CTape -> D -> IO D
copyOf t (D v i) = D v <$> (if i == -1 then c_record0 t else c_record1 t i 1)

-- | The derivatives of r with respect to the nodes ids, recorded on the
-- tape by one reverse pass from the mark on.
adjointOf :: Ptr CTape -> Int64 -> [Int64] -> D -> IO [D]
adjointOf t mark ids (D rv ri) = do
  let n = length ids
  allocaBytes (8 * n + 16 * n + 16) $ \buf -> do
    let idp = castPtr buf :: Ptr Int64
        out = buf `plusPtr` (8 * n)
    mapM_ (\(j, i) -> pokeByteOff idp (8 * j) i) (zip [0 :: Int ..] ids)
    st <- c_fe_adjoint_record t mark rv ri (fromIntegral n) idp out
    when (st /= 0) (failWith "a derivative inside differentiable code" st)
    forM [0 .. n - 1] $ \j -> do
      !v <- peekByteOff out (16 * j)
      !i <- peekByteOff out (16 * j + 8)
      pure (D v i)

-- | The tangent of r recorded on the tape, the seeds' tangents 1.
tangentOf :: Ptr CTape -> Int64 -> [Int64] -> D -> IO D
tangentOf t mark seeds = tangentSeeded t mark [(s, constD 1) | s <- seeds]

-- | The tangent of r recorded on the tape, given the tangent of each seed
-- node (a dual number itself: a direction may depend on variables).
tangentSeeded :: Ptr CTape -> Int64 -> [(Int64, D)] -> D -> IO D
tangentSeeded t mark seeds (D rv ri) = do
  let k = length seeds
  allocaBytes (8 * k + 16 * k + 16) $ \buf -> do
    let ids = castPtr buf :: Ptr Int64
        sv = buf `plusPtr` (8 * k)
        out = buf `plusPtr` (24 * k)
    mapM_ (\(j, (s, D dv di)) -> do
             pokeByteOff ids (8 * j) s
             pokeByteOff sv (16 * j) dv
             pokeByteOff sv (16 * j + 8) di)
          (zip [0 :: Int ..] seeds)
    st <- c_fe_tangent_record t mark (fromIntegral k) ids sv rv ri out
    when (st /= 0) (failWith "a derivative inside differentiable code" st)
    !v <- peekByteOff out 0
    !i <- peekByteOff out 8
    pure (D v i)

failWith :: String -> CInt -> IO a
failWith what st = do
  msg <- c_strerror st >>= peekCString
  throwIO (DualRevError ("dualrev: " ++ what ++ ": " ++ msg))
