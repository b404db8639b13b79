{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: bindings of the C engine.
--
-- Checkpointed loops (@dr_record_checkpointed@, through
-- haskell/cbits/hs_loop.c).  The step is a Haskell function that C calls
-- back, while the loop is recorded and again during the sweeps, so these
-- calls, and the sweeps in "Numeric.DualRev.Internal.Engine.FFI", are
-- @safe@.
module Numeric.DualRev.Internal.Engine.LoopFFI
  ( StepFn
  , mkStepFn
  , c_record_checkpointed
  ) where

import Foreign.C.Types (CInt (..), CSize (..))
import Foreign.Ptr (FunPtr, Ptr)

import Numeric.DualRev.Internal.Engine.FFI (CReal, CTape)

-- | A step as C calls it: context, the loop's tape, step number, state
-- size, the state in, the state out (dr_real arrays); a dr_status.
type StepFn = Ptr () -> Ptr CTape -> CSize -> CSize -> Ptr CReal -> Ptr CReal -> IO CInt

-- | The function pointer is freed by the tape (or by a failed call).
foreign import ccall "wrapper" mkStepFn :: StepFn -> IO (FunPtr StepFn)

foreign import ccall safe "drhs_record_checkpointed"
  c_record_checkpointed :: Ptr CTape -> FunPtr StepFn -> CSize -> CSize -> Ptr CReal
                        -> CSize -> Ptr CReal -> IO CInt
