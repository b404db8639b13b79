{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: bindings of the C engine's second-order
-- calls (include/dualrev.h, \"second order\"), which nested derivatives use.
module Numeric.DualRev.Internal.Engine.NestFFI
  ( c_tape_set_order, c_tape_order, c_tape_mark, c_nest_begin, c_nest_end, c_fe_tangent_record
  , c_fe_adjoint_record
  ) where

import Data.Int (Int64)
import Foreign.C.Types (CInt (..), CSize (..))
import Foreign.Ptr (Ptr)

import Numeric.DualRev.Internal.Engine.FFI (CTape)

foreign import ccall unsafe "dr_tape_set_order"
  c_tape_set_order :: Ptr CTape -> CInt -> IO CInt
foreign import ccall unsafe "dr_tape_order" c_tape_order :: Ptr CTape -> IO CInt
foreign import ccall unsafe "dr_tape_mark" c_tape_mark :: Ptr CTape -> IO Int64
-- | A nested derivative's start (order 2, recording resumed): what
-- c_nest_end puts back, or minus the status (haskell/cbits/hs_nested.c)
foreign import ccall unsafe "drhs_nest_begin" c_nest_begin :: Ptr CTape -> IO CInt
foreign import ccall unsafe "drhs_nest_end" c_nest_end :: Ptr CTape -> CInt -> IO ()
-- | from, k, seed ids, seeds (dr_real: value and id, 16 bytes each), y's
-- value and id, the tangent out (a dr_real)
foreign import ccall unsafe "dr_fe_tangent_record"
  c_fe_tangent_record :: Ptr CTape -> Int64 -> CSize -> Ptr Int64 -> Ptr ()
                      -> Double -> Int64 -> Ptr () -> IO CInt
-- | from, y's value and id, n, the variables' ids, the derivatives out
-- (dr_real: value and id, 16 bytes each)
foreign import ccall unsafe "dr_fe_adjoint_record"
  c_fe_adjoint_record :: Ptr CTape -> Int64 -> Double -> Int64 -> CSize
                      -> Ptr Int64 -> Ptr () -> IO CInt
