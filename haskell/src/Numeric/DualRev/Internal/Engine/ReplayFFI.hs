{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: bindings of the C engine's replay
-- (include/dualrev.h, \"replay\"), which taped functions use.
module Numeric.DualRev.Internal.Engine.ReplayFFI
  ( c_replay_range, c_taped_grad, c_taped_grad_arrays, c_taped_read_arrays, c_taped_hvp, c_taped_hvp_arrays, c_value, c_fe_guard, c_fe_round, c_fe_programs
  , c_memcmp
  ) where

import Data.Int (Int64)
import Foreign.C.Types (CInt (..), CSize (..))
import Foreign.Ptr (Ptr)

import Numeric.DualRev.Internal.Engine.FFI (CTape)

-- | dr_replay of the inputs first .. first+n-1 (haskell/cbits/hs_scalar_args.c):
-- an @unsafe@ call while no checkpointed loop's step (Haskell code, which a
-- replay runs) is alive in the process, else the @safe@ one.
c_replay_range :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> IO CInt
c_replay_range t first n p = do
  st <- c_replay_range_quick t first n p
  if st == -1 then c_replay_range_safe t first n p else pure st

foreign import ccall unsafe "drhs_replay_range"
  c_replay_range_quick :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> IO CInt
foreign import ccall safe "drhs_replay_range_any"
  c_replay_range_safe :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> IO CInt
-- | A taped gradient's replay and sweep in one unsafe call
-- (haskell/cbits/hs_scalar_args.c): first, n, values, y's id, y's value
-- out, the gradient out; -1 where a checkpointed loop's step is alive (then
-- the calls one by one).
foreign import ccall unsafe "drhs_taped_grad"
  c_taped_grad :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> Int64 -> Ptr Double -> Ptr Double -> IO CInt
-- | The same for an input that holds arrays (haskell/cbits/hs_taped.c):
-- first, n, values, the number of arrays, their nodes and offsets among
-- the values, their new elements, where their gradients go, y's id, y's
-- value out, the gradient of the other scalars out.  A @safe@ call: the
-- replay may run a checkpointed loop's step.
foreign import ccall safe "drhs_taped_grad_arrays"
  c_taped_grad_arrays :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> CSize -> Ptr Int64 -> Ptr CSize
                      -> Ptr (Ptr Double) -> Ptr (Ptr Double) -> Int64 -> Ptr Double -> Ptr Double -> IO CInt
-- | The gradient's reading alone, after a sweep (hs_taped.c): first, n,
-- the number of arrays, their nodes, offsets and lengths, where their
-- gradients go, y's id, the gradient of the other scalars out.
foreign import ccall unsafe "drhs_taped_read_arrays"
  c_taped_read_arrays :: Ptr CTape -> Int64 -> CSize -> CSize -> Ptr Int64 -> Ptr CSize -> Ptr CSize
                      -> Ptr (Ptr Double) -> Int64 -> Ptr Double -> IO CInt
-- | A taped Hessian-vector product (haskell/cbits/hs_scalar_args.c): first,
-- n, the values to replay at (null: none), y's id, the direction, the
-- product out; an @unsafe@ call on a small tape while no checkpointed
-- loop's step is alive, else the @safe@ one.
c_taped_hvp :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> Int64 -> Ptr Double -> Ptr Double -> IO CInt
c_taped_hvp t first n p y v out = do
  st <- c_taped_hvp_quick t first n p y v out
  if st == -1 then c_taped_hvp_safe t first n p y v out else pure st

foreign import ccall unsafe "drhs_taped_hvp_quick"
  c_taped_hvp_quick :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> Int64 -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall safe "drhs_taped_hvp"
  c_taped_hvp_safe :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> Int64 -> Ptr Double -> Ptr Double -> IO CInt
-- | The same for an input that holds arrays (haskell/cbits/hs_taped.c):
-- first, n, values (null: no replay), the number of arrays, their nodes
-- and offsets among the values, their new elements, y's id, the direction
-- and the product, laid out as the values.  A @safe@ call, as
-- 'c_taped_grad_arrays'.
foreign import ccall safe "drhs_taped_hvp_arrays"
  c_taped_hvp_arrays :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> CSize -> Ptr Int64 -> Ptr CSize
                     -> Ptr (Ptr Double) -> Int64 -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall unsafe "dr_value" c_value :: Ptr CTape -> Int64 -> Ptr Double -> IO CInt
-- | dr_fe_guard: op, a's value and id, b's value and id; the outcome.
foreign import ccall unsafe "dr_fe_guard"
  c_fe_guard :: Ptr CTape -> CInt -> Double -> Int64 -> Double -> Int64 -> IO CInt
-- | dr_fe_round: a rounding of a value and id, with its guard.
foreign import ccall unsafe "dr_fe_round"
  c_fe_round :: Ptr CTape -> CInt -> Double -> Int64 -> IO Double
-- | dr_fe_programs: whether statements are recorded with their programs
-- (a tape kept for replay).
foreign import ccall unsafe "dr_fe_programs"
  c_fe_programs :: Ptr CTape -> CInt -> IO CInt

-- | The C library's memcmp: whether a taped function's array data has the
-- recorded bits ("Numeric.DualRev.Internal.Run.Driver.Fill").
foreign import ccall unsafe "string.h memcmp"
  c_memcmp :: Ptr Double -> Ptr Double -> CSize -> IO CInt
