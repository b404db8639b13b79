{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: bindings of the C engine.
--
-- Raw bindings to the C engine (include/dualrev.h).  Every call is
-- @unsafe@ (none of them blocks) but the sweeps: a sweep over a checkpointed
-- loop calls its step, Haskell code, back
-- ("Numeric.DualRev.Internal.Engine.LoopFFI"), which needs a @safe@ call.
-- A sweep goes first to its @_quick@ shim (haskell/cbits/hs_quick.c), an
-- unsafe call that sweeps when no step is alive and the tape is short, and
-- makes the safe call only when the shim declines ('quickOrSafe').
module Numeric.DualRev.Internal.Engine.FFI
  ( CTape
  , c_tape_new, c_tape_free, p_tape_free, c_tape_clear, c_tape_len
  , c_mark_bytes, c_mark_save, c_mark_restore, c_lazy_note, c_lazy_count, c_fe_pause
  , c_tape_status, c_strerror
  , c_record0, c_record1, c_record2, c_recordn
  , c_input_range, c_input_first, c_fe_input_range, c_fe_input_len, c_adjoints_read
  , c_seed, c_reverse, c_reverse_quick, c_gradient_quick, quickOrSafe, c_adjoint, c_adjoints_clear
  , c_fork, c_join, c_set_threads, c_get_threads
  , c_tape_take, c_tape_give
    -- * Jacobians, forward mode and second order
  , CReal, c_jacobian, c_jvp, c_jvp_quick, c_jvp_vec, c_jvp_vec_quick, c_gnvp, c_hvp, c_hvp_inputs, c_hvp_inputs_quick, c_hessian, c_gradient_range, c_jacobian_range
  , CSparse, c_sparse_jacobian, c_sparse_hessian, c_sparse_free
  , c_jacobian_range_safe, c_jacobian_range_quick
  ) where

import Data.Int (Int64)
import Data.Word (Word64)
import Foreign.C.String (CString)
import Foreign.C.Types (CInt (..), CSize (..), CUInt (..))
import Foreign.Ptr (FunPtr, Ptr)

-- | The C @dr_tape@.
data CTape

foreign import ccall unsafe "dr_tape_new" c_tape_new :: IO (Ptr CTape)
foreign import ccall unsafe "dr_tape_free" c_tape_free :: Ptr CTape -> IO ()
foreign import ccall unsafe "&dr_tape_free" p_tape_free :: FunPtr (Ptr CTape -> IO ())
foreign import ccall unsafe "dr_tape_clear" c_tape_clear :: Ptr CTape -> IO CInt
foreign import ccall unsafe "dr_tape_len" c_tape_len :: Ptr CTape -> IO CSize
-- | A position to rewind the tape to (cbits/frontend/rewind.c): the
-- buffer's size; the save (the next node's id, -2 where it cannot be
-- rewound); the rewind (0 where it no longer can).
foreign import ccall unsafe "dr_fe_mark_bytes" c_mark_bytes :: CSize
foreign import ccall unsafe "dr_fe_mark_save" c_mark_save :: Ptr CTape -> Ptr () -> IO Int64
foreign import ccall unsafe "dr_fe_mark_restore" c_mark_restore :: Ptr CTape -> Ptr () -> IO CInt
-- | The count of lazily recorded values, which a rewind must not drop.
foreign import ccall unsafe "drhs_lazy_note" c_lazy_note :: IO ()
-- | Pause (1) or resume (0) the front end's recording on a handle; the old
-- state (frontend.h, dr_fe_pause)
foreign import ccall unsafe "dr_fe_pause" c_fe_pause :: Ptr CTape -> CInt -> IO CInt
foreign import ccall unsafe "drhs_lazy_count" c_lazy_count :: IO Word64
foreign import ccall unsafe "dr_tape_status" c_tape_status :: Ptr CTape -> IO CInt
foreign import ccall unsafe "dr_strerror" c_strerror :: CInt -> IO CString

foreign import ccall unsafe "dr_record0" c_record0 :: Ptr CTape -> IO Int64
foreign import ccall unsafe "dr_record1"
  c_record1 :: Ptr CTape -> Int64 -> Double -> IO Int64
foreign import ccall unsafe "dr_record2"
  c_record2 :: Ptr CTape -> Int64 -> Double -> Int64 -> Double -> IO Int64
foreign import ccall unsafe "dr_recordn"
  c_recordn :: Ptr CTape -> CSize -> Ptr Int64 -> Ptr Double -> IO Int64

foreign import ccall unsafe "dr_input_range"
  c_input_range :: Ptr CTape -> CSize -> Ptr Int64 -> IO CInt
-- | dr_input_range's first id as the result (DR_NONE, -1, for none or on
-- failure: the tape's status then tells), through
-- haskell/cbits/hs_scalar_args.c.
foreign import ccall unsafe "drhs_input_first"
  c_input_first :: Ptr CTape -> CSize -> IO Int64
-- | dr_fe_input_range / dr_fe_input_len (cbits/frontend/frontend.h): an
-- input range whose length the tape notes, and that length from its first
-- id (0: none noted), so a list's read-out need not count the list again.
foreign import ccall unsafe "dr_fe_input_range"
  c_fe_input_range :: Ptr CTape -> CSize -> IO Int64
foreign import ccall unsafe "dr_fe_input_len"
  c_fe_input_len :: Ptr CTape -> Int64 -> IO CSize
foreign import ccall unsafe "dr_adjoints_read"
  c_adjoints_read :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> IO CInt

foreign import ccall unsafe "dr_seed" c_seed :: Ptr CTape -> Int64 -> Double -> IO CInt
foreign import ccall safe "dr_reverse" c_reverse :: Ptr CTape -> IO CInt
foreign import ccall unsafe "drhs_reverse_quick" c_reverse_quick :: Ptr CTape -> IO CInt
foreign import ccall unsafe "drhs_gradient_quick" c_gradient_quick :: Ptr CTape -> Double -> Int64 -> IO CInt
foreign import ccall unsafe "dr_adjoint" c_adjoint :: Ptr CTape -> Int64 -> IO Double
foreign import ccall unsafe "dr_adjoints_clear" c_adjoints_clear :: Ptr CTape -> IO CInt

-- The reused tapes of haskell/cbits/hs_tapes.c.
foreign import ccall unsafe "drhs_tape_take" c_tape_take :: CUInt -> IO (Ptr CTape)
foreign import ccall unsafe "drhs_tape_give" c_tape_give :: Ptr CTape -> IO ()

foreign import ccall unsafe "dr_fork" c_fork :: Ptr CTape -> CSize -> Ptr (Ptr CTape) -> IO CInt
foreign import ccall unsafe "dr_join" c_join :: Ptr CTape -> IO CInt
foreign import ccall unsafe "dr_set_threads" c_set_threads :: Ptr CTape -> CUInt -> IO CInt
foreign import ccall unsafe "dr_get_threads" c_get_threads :: Ptr CTape -> IO CUInt

-- | The C @dr_real@ (a value and an id, 16 bytes), in arrays only.
data CReal

foreign import ccall safe "dr_jacobian"
  c_jacobian :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> Ptr Double -> IO CInt

foreign import ccall safe "dr_jvp"
  c_jvp :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall unsafe "drhs_jvp_quick"
  c_jvp_quick :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall safe "dr_jvp_vec"
  c_jvp_vec :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> CSize -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall unsafe "drhs_jvp_vec_quick"
  c_jvp_vec_quick :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> CSize -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall safe "dr_gnvp"
  c_gnvp :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> Ptr Double -> Ptr Double -> IO CInt

-- dr_hvp, dr_hessian and dr_gradient_range through
-- haskell/cbits/hs_scalar_args.c: y as its value and id (a dr_real cannot be
-- passed by value).  These and drhs_jacobian_range are unsafe calls: their
-- callers (the overloaded mode, second order) record no checkpointed loop,
-- so no sweep calls back into Haskell, and a safe call's cost (releasing
-- the capability) is a large part of a small Jacobian's.
foreign import ccall unsafe "drhs_hvp"
  c_hvp :: Ptr CTape -> Double -> Int64 -> CSize -> Ptr CReal -> Ptr Double -> Ptr Double -> IO CInt
-- (safe: its tape may hold array operations, whose products take long;
-- the _quick shim, an unsafe call, takes a small tape of scalars)
foreign import ccall safe "drhs_hvp_inputs"
  c_hvp_inputs :: Ptr CTape -> Double -> Int64 -> IO CInt
foreign import ccall unsafe "drhs_hvp_inputs_quick"
  c_hvp_inputs_quick :: Ptr CTape -> Double -> Int64 -> IO CInt
foreign import ccall unsafe "drhs_hessian"
  c_hessian :: Ptr CTape -> Double -> Int64 -> CSize -> Ptr CReal -> Ptr Double -> IO CInt
-- | A dr_sparse (six words: rows, cols, nnz, rowptr, colind, val).
data CSparse
-- dr_sparse_jacobian and dr_sparse_hessian (y as its value and id),
-- safe calls: a sweep over a checkpointed loop calls its step, Haskell
-- code, back
foreign import ccall safe "dr_sparse_jacobian"
  c_sparse_jacobian :: Ptr CTape -> CSize -> Ptr CReal -> CSize -> Ptr CReal -> Ptr CSparse -> IO CInt
foreign import ccall safe "drhs_sparse_hessian"
  c_sparse_hessian :: Ptr CTape -> Double -> Int64 -> CSize -> Ptr CReal -> Ptr CSparse -> IO CInt
foreign import ccall unsafe "dr_sparse_free"
  c_sparse_free :: Ptr CSparse -> IO ()
foreign import ccall unsafe "drhs_gradient_range"
  c_gradient_range :: Ptr CTape -> Double -> Int64 -> Int64 -> CSize -> Ptr Double -> IO CInt
foreign import ccall unsafe "drhs_jacobian_range"
  c_jacobian_range :: Ptr CTape -> CSize -> Ptr CReal -> Int64 -> CSize -> Ptr Double -> IO CInt
-- | drhs_jacobian_range as a safe call, for the splices' tapes: a sweep over
-- a checkpointed loop calls its step, Haskell code, back.
foreign import ccall safe "drhs_jacobian_range"
  c_jacobian_range_safe :: Ptr CTape -> CSize -> Ptr CReal -> Int64 -> CSize -> Ptr Double -> IO CInt
foreign import ccall unsafe "drhs_jacobian_range_quick"
  c_jacobian_range_quick :: Ptr CTape -> CSize -> Ptr CReal -> Int64 -> CSize -> Ptr Double -> IO CInt

-- | A @_quick@ shim's result, or, where it declined (DRHS_CALL_SAFE in
-- haskell/cbits/hs_quick.h), the safe call's.
quickOrSafe :: IO CInt -> IO CInt -> IO CInt
quickOrSafe quick safe = quick >>= \st -> if st == -1 then safe else pure st
{-# INLINE quickOrSafe #-}
