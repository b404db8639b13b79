{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: bindings of the C engine.
--
-- Raw bindings to the C engine (include/dualrev.h).  Every call is
-- @unsafe@: none of them calls back into Haskell or blocks.
module Numeric.DualRev.Internal.Engine.FFI
  ( CTape
  , c_tape_new, c_tape_free, p_tape_free, c_tape_clear, c_tape_len
  , c_tape_status, c_strerror
  , c_record0, c_record1, c_record2, c_recordn
  , c_input_range, c_adjoints_read
  , c_seed, c_reverse, c_adjoint, c_adjoints_clear
  , c_fork, c_join, c_set_threads, c_get_threads
    -- * Scalar operations (cbits/frontend.h)
  , Rec1, Rec2
  , c_fe_add_rec, c_fe_sub_rec, c_fe_mul_rec, c_fe_div_rec, c_fe_neg_rec
  , c_fe_abs_rec, c_fe_sqrt_rec
  , c_fe_exp, c_fe_exp_rec, c_fe_expm1, c_fe_expm1_rec
  , c_fe_log, c_fe_log_rec, c_fe_log1p, c_fe_log1p_rec
  , c_fe_sin, c_fe_sin_rec, c_fe_cos, c_fe_cos_rec, c_fe_tan, c_fe_tan_rec
  , c_fe_asin, c_fe_asin_rec, c_fe_acos, c_fe_acos_rec, c_fe_atan, c_fe_atan_rec
  , c_fe_sinh, c_fe_sinh_rec, c_fe_cosh, c_fe_cosh_rec, c_fe_tanh, c_fe_tanh_rec
  , c_fe_asinh, c_fe_asinh_rec, c_fe_acosh, c_fe_acosh_rec
  , c_fe_atanh, c_fe_atanh_rec
  , c_fe_atan2, c_fe_atan2_rec, c_fe_pow, c_fe_pow_rec
  , c_fe_logbase, c_fe_logbase_rec, c_fe_powi, c_fe_powi_rec
  ) where

import Data.Int (Int64)
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
foreign import ccall unsafe "dr_adjoints_read"
  c_adjoints_read :: Ptr CTape -> Int64 -> CSize -> Ptr Double -> IO CInt

foreign import ccall unsafe "dr_seed" c_seed :: Ptr CTape -> Int64 -> Double -> IO CInt
foreign import ccall unsafe "dr_reverse" c_reverse :: Ptr CTape -> IO CInt
foreign import ccall unsafe "dr_adjoint" c_adjoint :: Ptr CTape -> Int64 -> IO Double
foreign import ccall unsafe "dr_adjoints_clear" c_adjoints_clear :: Ptr CTape -> IO CInt

foreign import ccall unsafe "dr_fork" c_fork :: Ptr CTape -> CSize -> Ptr (Ptr CTape) -> IO CInt
foreign import ccall unsafe "dr_join" c_join :: Ptr CTape -> IO CInt
foreign import ccall unsafe "dr_set_threads" c_set_threads :: Ptr CTape -> CUInt -> IO CInt
foreign import ccall unsafe "dr_get_threads" c_get_threads :: Ptr CTape -> IO CUInt

-- Scalar operations, with the value and partials of the C API's (dr_sin,
-- ...): @c_fe_OP@ is the value, pure; @c_fe_OP_rec@ records the operation's
-- node for arguments with ids and values, given its value, and returns the
-- new id.  The values of + - * / negate abs sqrt are IEEE-exact, so the
-- front end computes them itself and only records through C.

-- | tape, argument id, argument value, result value
type Rec1 = Ptr CTape -> Int64 -> Double -> Double -> IO Int64
-- | tape, argument ids, argument values, result value
type Rec2 = Ptr CTape -> Int64 -> Int64 -> Double -> Double -> Double -> IO Int64

foreign import ccall unsafe "dr_fe_add_rec" c_fe_add_rec :: Rec2
foreign import ccall unsafe "dr_fe_sub_rec" c_fe_sub_rec :: Rec2
foreign import ccall unsafe "dr_fe_mul_rec" c_fe_mul_rec :: Rec2
foreign import ccall unsafe "dr_fe_div_rec" c_fe_div_rec :: Rec2
foreign import ccall unsafe "dr_fe_neg_rec" c_fe_neg_rec :: Rec1
foreign import ccall unsafe "dr_fe_abs_rec" c_fe_abs_rec :: Rec1
foreign import ccall unsafe "dr_fe_sqrt_rec" c_fe_sqrt_rec :: Rec1

foreign import ccall unsafe "dr_fe_exp" c_fe_exp :: Double -> Double
foreign import ccall unsafe "dr_fe_exp_rec" c_fe_exp_rec :: Rec1
foreign import ccall unsafe "dr_fe_expm1" c_fe_expm1 :: Double -> Double
foreign import ccall unsafe "dr_fe_expm1_rec" c_fe_expm1_rec :: Rec1
foreign import ccall unsafe "dr_fe_log" c_fe_log :: Double -> Double
foreign import ccall unsafe "dr_fe_log_rec" c_fe_log_rec :: Rec1
foreign import ccall unsafe "dr_fe_log1p" c_fe_log1p :: Double -> Double
foreign import ccall unsafe "dr_fe_log1p_rec" c_fe_log1p_rec :: Rec1
foreign import ccall unsafe "dr_fe_sin" c_fe_sin :: Double -> Double
foreign import ccall unsafe "dr_fe_sin_rec" c_fe_sin_rec :: Rec1
foreign import ccall unsafe "dr_fe_cos" c_fe_cos :: Double -> Double
foreign import ccall unsafe "dr_fe_cos_rec" c_fe_cos_rec :: Rec1
foreign import ccall unsafe "dr_fe_tan" c_fe_tan :: Double -> Double
foreign import ccall unsafe "dr_fe_tan_rec" c_fe_tan_rec :: Rec1
foreign import ccall unsafe "dr_fe_asin" c_fe_asin :: Double -> Double
foreign import ccall unsafe "dr_fe_asin_rec" c_fe_asin_rec :: Rec1
foreign import ccall unsafe "dr_fe_acos" c_fe_acos :: Double -> Double
foreign import ccall unsafe "dr_fe_acos_rec" c_fe_acos_rec :: Rec1
foreign import ccall unsafe "dr_fe_atan" c_fe_atan :: Double -> Double
foreign import ccall unsafe "dr_fe_atan_rec" c_fe_atan_rec :: Rec1
foreign import ccall unsafe "dr_fe_sinh" c_fe_sinh :: Double -> Double
foreign import ccall unsafe "dr_fe_sinh_rec" c_fe_sinh_rec :: Rec1
foreign import ccall unsafe "dr_fe_cosh" c_fe_cosh :: Double -> Double
foreign import ccall unsafe "dr_fe_cosh_rec" c_fe_cosh_rec :: Rec1
foreign import ccall unsafe "dr_fe_tanh" c_fe_tanh :: Double -> Double
foreign import ccall unsafe "dr_fe_tanh_rec" c_fe_tanh_rec :: Rec1
foreign import ccall unsafe "dr_fe_asinh" c_fe_asinh :: Double -> Double
foreign import ccall unsafe "dr_fe_asinh_rec" c_fe_asinh_rec :: Rec1
foreign import ccall unsafe "dr_fe_acosh" c_fe_acosh :: Double -> Double
foreign import ccall unsafe "dr_fe_acosh_rec" c_fe_acosh_rec :: Rec1
foreign import ccall unsafe "dr_fe_atanh" c_fe_atanh :: Double -> Double
foreign import ccall unsafe "dr_fe_atanh_rec" c_fe_atanh_rec :: Rec1

foreign import ccall unsafe "dr_fe_atan2" c_fe_atan2 :: Double -> Double -> Double
foreign import ccall unsafe "dr_fe_atan2_rec" c_fe_atan2_rec :: Rec2
foreign import ccall unsafe "dr_fe_pow" c_fe_pow :: Double -> Double -> Double
foreign import ccall unsafe "dr_fe_pow_rec" c_fe_pow_rec :: Rec2
foreign import ccall unsafe "dr_fe_logbase" c_fe_logbase :: Double -> Double -> Double
foreign import ccall unsafe "dr_fe_logbase_rec" c_fe_logbase_rec :: Rec2

-- | x^n for an integer n carried as a Double
foreign import ccall unsafe "dr_fe_powi" c_fe_powi :: Double -> Double -> Double
foreign import ccall unsafe "dr_fe_powi_rec"
  c_fe_powi_rec :: Ptr CTape -> Int64 -> Double -> Double -> Double -> IO Int64
