{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: bindings of the C engine.
--
-- Raw bindings to the array operations of the C engine (the FFI-friendly
-- "_id" forms of include/dualrev.h: node ids in, node ids out).
module Numeric.DualRev.Internal.Engine.ArrayFFI where

import Data.Int (Int64)
import Foreign.C.Types (CInt (..), CSize (..))
import Foreign.Ptr (Ptr)

import Numeric.DualRev.Internal.Engine.FFI (CTape)

type Id = Int64
type T = Ptr CTape

foreign import ccall unsafe "dr_arr_input_id" c_arr_input :: T -> CInt -> Int64 -> Int64 -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_const_id" c_arr_const :: T -> CInt -> Int64 -> Int64 -> Ptr Double -> IO Id
-- the _ref forms borrow the caller's data (kept alive and unchanged until the tape is cleared)
foreign import ccall unsafe "dr_arr_input_ref_id" c_arr_input_ref :: T -> CInt -> Int64 -> Int64 -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_const_ref_id" c_arr_const_ref :: T -> CInt -> Int64 -> Int64 -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_shape" c_arr_shape :: T -> Id -> Ptr CInt -> Ptr Int64 -> Ptr Int64 -> IO CInt
foreign import ccall unsafe "dr_arr_size" c_arr_size :: T -> Id -> IO Int64
foreign import ccall unsafe "dr_arr_read" c_arr_read :: T -> Id -> Ptr Double -> IO CInt
foreign import ccall unsafe "dr_arr_seed" c_arr_seed :: T -> Id -> Ptr Double -> IO CInt
foreign import ccall unsafe "dr_arr_adjoint" c_arr_adjoint :: T -> Id -> Ptr Double -> IO CInt

foreign import ccall unsafe "dr_arr_add_id" c_arr_add :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_sub_id" c_arr_sub :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_mul_id" c_arr_mul :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_div_id" c_arr_div :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_scale_id" c_arr_scale :: T -> Double -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_map_id" c_arr_map :: T -> CInt -> Id -> IO Id
foreign import ccall unsafe "dr_arr_add_rowvec_id" c_arr_add_rowvec :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_add_colvec_id" c_arr_add_colvec :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_replicate_rows_id" c_arr_replicate_rows :: T -> Id -> Int64 -> IO Id
foreign import ccall unsafe "dr_arr_replicate_cols_id" c_arr_replicate_cols :: T -> Id -> Int64 -> IO Id
foreign import ccall unsafe "dr_arr_dot_id" c_arr_dot :: T -> Id -> Id -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_matvec_id" c_arr_matvec :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_vecmat_id" c_arr_vecmat :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_matmul_id" c_arr_matmul :: T -> Id -> CInt -> Id -> CInt -> IO Id
foreign import ccall unsafe "dr_arr_outer_id" c_arr_outer :: T -> Id -> Id -> IO Id
foreign import ccall unsafe "dr_arr_transpose_id" c_arr_transpose :: T -> Id -> IO Id
foreign import ccall unsafe "dr_arr_sum_id" c_arr_sum :: T -> Id -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_sum_rows_id" c_arr_sum_rows :: T -> Id -> IO Id
foreign import ccall unsafe "dr_arr_sum_cols_id" c_arr_sum_cols :: T -> Id -> IO Id
foreign import ccall unsafe "dr_arr_max_id" c_arr_max :: T -> Id -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_softmax_id" c_arr_softmax :: T -> Id -> IO Id
foreign import ccall unsafe "dr_arr_log_softmax_id" c_arr_log_softmax :: T -> Id -> IO Id
foreign import ccall unsafe "dr_arr_logsumexp_id" c_arr_logsumexp :: T -> Id -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_logsumexp_rows_id" c_arr_logsumexp_rows :: T -> Id -> IO Id
foreign import ccall unsafe "dr_arr_index_id" c_arr_index :: T -> Id -> Int64 -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_index2_id" c_arr_index2 :: T -> Id -> Int64 -> Int64 -> Ptr Double -> IO Id
foreign import ccall unsafe "dr_arr_from_reals_id" c_arr_from_reals :: T -> CSize -> Ptr Double -> Ptr Id -> IO Id
foreign import ccall unsafe "dr_arr_slice_id" c_arr_slice :: T -> Id -> Int64 -> Int64 -> IO Id
foreign import ccall unsafe "dr_arr_slice2_id" c_arr_slice2 :: T -> Id -> Int64 -> Int64 -> Int64 -> Int64 -> IO Id
foreign import ccall unsafe "dr_arr_concat_id" c_arr_concat :: T -> CInt -> CSize -> Ptr Id -> IO Id
foreign import ccall unsafe "dr_arr_gather_id" c_arr_gather :: T -> Id -> CSize -> Ptr Int64 -> IO Id
foreign import ccall unsafe "dr_arr_scatter_id" c_arr_scatter :: T -> Id -> Int64 -> Ptr Int64 -> IO Id
foreign import ccall unsafe "dr_arr_reshape_id" c_arr_reshape :: T -> Id -> CInt -> Int64 -> Int64 -> IO Id
