{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE FunctionalDependencies #-}
{-# LANGUAGE UndecidableInstances #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Custom rules ('Numeric.DualRev.primitive'): a call of a function that a
-- rule declared a primitive records its Jacobian at the call's inputs as
-- nodes of given partials, one node per scalar of the output over the
-- scalars of the inputs.  The Jacobian comes from the rule when the call is
-- recorded: its VJP applied to each unit cotangent of the output (a row
-- each), or, when the rule has a JVP and the inputs have fewer active
-- scalars than the output, its JVP applied to each unit tangent of an
-- active input (a column each).  A scalar-valued rule is one VJP call.
--
-- Those nodes are ordinary ones, so every sweep of the engine works through
-- them (reverse, forward, k-wide, parallel jobs) without calling the rule,
-- and an exception in a rule surfaces where the call is recorded.  Their partials are numbers, not recorded operations, so they
-- have no second derivatives: a call with active inputs on a tape of order
-- 2 (hvp, hessian, a derivative inside differentiable code) raises
-- 'DualRevError' rather than give a second derivative without the rule's
-- curvature.
module Numeric.DualRev.Internal.Run.Control.Custom
  ( Shape (..)
  , shapeTupleMax
  , customD
  ) where

import Control.Exception (throwIO)
import Control.Monad (forM, when)
import Data.List (mapAccumL, transpose)

import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_order)

-- | The types a rule's arguments (those holding 'Double's) and result may
-- have, @a@, with their duals @d@: 'Double', lists and tuples of them.
class Shape a d | a -> d, d -> a where
  -- | The scalars, left to right, in front of the rest.
  scalars :: a -> [Double] -> [Double]
  -- | The dual scalars, left to right, in front of the rest.
  duals :: d -> [D] -> [D]
  -- | The plain value of a dual one.
  primal :: d -> a
  -- | A value shaped like the first, its scalars taken from the list; the
  -- rest of the list.
  fill :: a -> [Double] -> (a, [Double])
  -- | A dual value shaped like the plain one, its scalars taken from the
  -- list; the rest of the list.
  fillD :: a -> [D] -> (d, [D])
  -- | Are the two of the same shape (lists of the same lengths)?
  conform :: a -> a -> Bool

instance Shape Double D where
  scalars = (:)
  duals = (:)
  primal = primalD
  fill _ (x : r) = (x, r)
  fill _ [] = shortList
  fillD _ (d : r) = (d, r)
  fillD _ [] = shortList
  conform _ _ = True
  {-# INLINE scalars #-}
  {-# INLINE duals #-}
  {-# INLINE primal #-}
  {-# INLINE fill #-}
  {-# INLINE fillD #-}
  {-# INLINE conform #-}

instance Shape a d => Shape [a] [d] where
  scalars xs r = foldr scalars r xs
  duals ds r = foldr duals r ds
  primal = map primal
  fill xs r = swap' (mapAccumL (\r' x -> swap' (fill x r')) r xs)
  fillD xs r = swap' (mapAccumL (\r' x -> swap' (fillD x r')) r xs)
  conform xs ys = length xs == length ys && and (zipWith conform xs ys)

instance (Shape a1 d1, Shape a2 d2) => Shape (a1, a2) (d1, d2) where
  scalars (x1, x2) = scalars x1 . scalars x2
  duals (d1, d2) = duals d1 . duals d2
  primal (d1, d2) = (primal d1, primal d2)
  fill (x1, x2) r0 =
    let (y1, r1) = fill x1 r0; (y2, r2) = fill x2 r1 in ((y1, y2), r2)
  fillD (x1, x2) r0 =
    let (y1, r1) = fillD x1 r0; (y2, r2) = fillD x2 r1 in ((y1, y2), r2)
  conform (x1, x2) (y1, y2) = conform x1 y1 && conform x2 y2

instance (Shape a1 d1, Shape a2 d2, Shape a3 d3) => Shape (a1, a2, a3) (d1, d2, d3) where
  scalars (x1, x2, x3) = scalars (x1, (x2, x3))
  duals (d1, d2, d3) = duals (d1, (d2, d3))
  primal (d1, d2, d3) = (primal d1, primal d2, primal d3)
  fill (x1, x2, x3) r = let ((y1, (y2, y3)), r') = fill (x1, (x2, x3)) r in ((y1, y2, y3), r')
  fillD (x1, x2, x3) r = let ((y1, (y2, y3)), r') = fillD (x1, (x2, x3)) r in ((y1, y2, y3), r')
  conform (x1, x2, x3) (y1, y2, y3) = conform (x1, (x2, x3)) (y1, (y2, y3))

instance (Shape a1 d1, Shape a2 d2, Shape a3 d3, Shape a4 d4)
    => Shape (a1, a2, a3, a4) (d1, d2, d3, d4) where
  scalars (x1, x2, x3, x4) = scalars (x1, (x2, x3, x4))
  duals (d1, d2, d3, d4) = duals (d1, (d2, d3, d4))
  primal (d1, d2, d3, d4) = (primal d1, primal d2, primal d3, primal d4)
  fill (x1, x2, x3, x4) r =
    let ((y1, (y2, y3, y4)), r') = fill (x1, (x2, x3, x4)) r in ((y1, y2, y3, y4), r')
  fillD (x1, x2, x3, x4) r =
    let ((y1, (y2, y3, y4)), r') = fillD (x1, (x2, x3, x4)) r in ((y1, y2, y3, y4), r')
  conform (x1, x2, x3, x4) (y1, y2, y3, y4) = conform (x1, (x2, x3, x4)) (y1, (y2, y3, y4))

instance (Shape a1 d1, Shape a2 d2, Shape a3 d3, Shape a4 d4, Shape a5 d5)
    => Shape (a1, a2, a3, a4, a5) (d1, d2, d3, d4, d5) where
  scalars (x1, x2, x3, x4, x5) = scalars (x1, (x2, x3, x4, x5))
  duals (d1, d2, d3, d4, d5) = duals (d1, (d2, d3, d4, d5))
  primal (d1, d2, d3, d4, d5) = (primal d1, primal d2, primal d3, primal d4, primal d5)
  fill (x1, x2, x3, x4, x5) r =
    let ((y1, (y2, y3, y4, y5)), r') = fill (x1, (x2, x3, x4, x5)) r in ((y1, y2, y3, y4, y5), r')
  fillD (x1, x2, x3, x4, x5) r =
    let ((y1, (y2, y3, y4, y5)), r') = fillD (x1, (x2, x3, x4, x5)) r in ((y1, y2, y3, y4, y5), r')
  conform (x1, x2, x3, x4, x5) (y1, y2, y3, y4, y5) =
    conform (x1, (x2, x3, x4, x5)) (y1, (y2, y3, y4, y5))

instance (Shape a1 d1, Shape a2 d2, Shape a3 d3, Shape a4 d4, Shape a5 d5, Shape a6 d6)
    => Shape (a1, a2, a3, a4, a5, a6) (d1, d2, d3, d4, d5, d6) where
  scalars (x1, x2, x3, x4, x5, x6) = scalars (x1, (x2, x3, x4, x5, x6))
  duals (d1, d2, d3, d4, d5, d6) = duals (d1, (d2, d3, d4, d5, d6))
  primal (d1, d2, d3, d4, d5, d6) =
    (primal d1, primal d2, primal d3, primal d4, primal d5, primal d6)
  fill (x1, x2, x3, x4, x5, x6) r =
    let ((y1, (y2, y3, y4, y5, y6)), r') = fill (x1, (x2, x3, x4, x5, x6)) r
    in ((y1, y2, y3, y4, y5, y6), r')
  fillD (x1, x2, x3, x4, x5, x6) r =
    let ((y1, (y2, y3, y4, y5, y6)), r') = fillD (x1, (x2, x3, x4, x5, x6)) r
    in ((y1, y2, y3, y4, y5, y6), r')
  conform (x1, x2, x3, x4, x5, x6) (y1, y2, y3, y4, y5, y6) =
    conform (x1, (x2, x3, x4, x5, x6)) (y1, (y2, y3, y4, y5, y6))

instance (Shape a1 d1, Shape a2 d2, Shape a3 d3, Shape a4 d4, Shape a5 d5, Shape a6 d6, Shape a7 d7)
    => Shape (a1, a2, a3, a4, a5, a6, a7) (d1, d2, d3, d4, d5, d6, d7) where
  scalars (x1, x2, x3, x4, x5, x6, x7) = scalars (x1, (x2, x3, x4, x5, x6, x7))
  duals (d1, d2, d3, d4, d5, d6, d7) = duals (d1, (d2, d3, d4, d5, d6, d7))
  primal (d1, d2, d3, d4, d5, d6, d7) =
    (primal d1, primal d2, primal d3, primal d4, primal d5, primal d6, primal d7)
  fill (x1, x2, x3, x4, x5, x6, x7) r =
    let ((y1, (y2, y3, y4, y5, y6, y7)), r') = fill (x1, (x2, x3, x4, x5, x6, x7)) r
    in ((y1, y2, y3, y4, y5, y6, y7), r')
  fillD (x1, x2, x3, x4, x5, x6, x7) r =
    let ((y1, (y2, y3, y4, y5, y6, y7)), r') = fillD (x1, (x2, x3, x4, x5, x6, x7)) r
    in ((y1, y2, y3, y4, y5, y6, y7), r')
  conform (x1, x2, x3, x4, x5, x6, x7) (y1, y2, y3, y4, y5, y6, y7) =
    conform (x1, (x2, x3, x4, x5, x6, x7)) (y1, (y2, y3, y4, y5, y6, y7))

-- | The largest tuple 'Shape' has an instance for.
shapeTupleMax :: Int
shapeTupleMax = 7

swap' :: (a, b) -> (b, a)
swap' (a, b) = (b, a)
{-# INLINE swap' #-}

shortList :: a
shortList = error "dualrev: Shape.fill: fewer scalars than the shape holds"

-- | The call of a primitive with a custom rule, recorded.  @what@ names the
-- rule for messages; @xs@ are the scalars of the arguments that hold
-- 'Double's, left to right; @vjpAt@ is the rule's VJP at the arguments:
-- the value, and the backpropagator giving the adjoints' scalars in the
-- same order, or 'Nothing' for adjoints not shaped like the arguments;
-- @jvpAt@ the rule's JVP there, if it has one: from the tangents' scalars
-- in that order to the value's tangent.  The value is the VJP's.
customD :: Shape b d
        => String -> [D] -> (b, b -> Maybe [Double]) -> Maybe ([Double] -> b) -> AD d
customD what xs (y, back) jvpAt = AD $ \t ->
  if all (\(D _ i) -> i == -1) xs
    then pure (fst (fillD y (map constD ys)))
    else do
      order <- c_tape_order t
      when (order == 2) $ throwIO (DualRevError
        ("dualrev: " ++ what ++ " gives first derivatives only, and this derivative needs "
         ++ "second ones through it (hvp and hessian need them everywhere, derivative and "
         ++ "gradient inside differentiable code in the function they differentiate): call it "
         ++ "outside that function, or write the function in a differentiable block"))
      let active = [k | (k, D _ i) <- zip [0 :: Int ..] xs, i /= -1]
      rows <- case jvpAt of
        -- a column per active input, where they are fewer than the rows
        Just fwd | length active < m -> do
          cols <- forM active $ \k -> do
            let tangent = fwd [if j == k then 1 else 0 | j <- [0 .. n - 1]]
            when (not (conform y tangent)) $ throwIO (DualRevError
              ("dualrev: " ++ what ++ ": its JVP gave a tangent not shaped like the value "
               ++ "(a list in the tangent must be as long as in the value)"))
            pure (scalars tangent [])
          -- row j: the partials of output j in the active inputs (the
          -- others are constants, which recordN leaves out anyway)
          pure [ spread n active r | r <- transpose cols ]
        _ -> forM [0 .. m - 1] $ \j -> do
          let ybar = if m == 1 then fst (fill y [1])
                     else fst (fill y [if i == j then 1 else 0 | i <- [0 .. m - 1]])
          case back ybar of
            Just row | length row == n -> pure row
            _ -> throwIO (DualRevError
              ("dualrev: " ++ what ++ ": its VJP gave adjoints not shaped like the arguments "
               ++ "(an adjoint list must be as long as its argument)"))
      outs <- forM (zip ys rows) $ \(v, row) -> unAD (recordN v (zip xs row)) t
      pure (fst (fillD y outs))
  where
    ys = scalars y []
    m = length ys
    n = length xs
{-# INLINABLE customD #-}

-- | Partials for the inputs listed (active ones), zero for the others.
spread :: Int -> [Int] -> [Double] -> [Double]
spread n ks ps = go 0 (zip ks ps)
  where
    go !i _ | i >= n = []
    go !i ((k, p) : rest) | k == i = p : go (i + 1) rest
    go !i kps = 0 : go (i + 1) kps
