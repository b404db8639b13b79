{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The walks that the wrappers of 'Numeric.DualRev.grad' and friends use
-- for array inputs and outputs: input nodes, values, seeds, adjoints.
module Numeric.DualRev.Internal.Run.Array.Walks
  ( inputVec, inputMat
  , primalVec, primalMat
  , seedVec, seedMat
  , collectVec, collectMat
  ) where

import Control.Monad (when)
import Foreign.ForeignPtr (withForeignPtr)

import Numeric.DualRev.Internal.Engine.ArrayFFI
import Numeric.DualRev.Internal.Run.Array.Carrier (keepAlive, primalMat, primalVec)
import Numeric.DualRev.Internal.Run.Array.Data
import Numeric.DualRev.Internal.Run.Array.Dual (arrShape, arrSize)

-- | Input arrays are borrowed by the tape, not copied: the runners keep the
-- input value alive until after the sweep ('collectVec' touches it).
inputVec :: T -> Vec -> IO DVec
inputVec t (Vec n fp) = withForeignPtr fp $ \p -> DVec <$> c_arr_input_ref t 1 (fromIntegral n) 1 p

inputMat :: T -> Mat -> IO DMat
inputMat t (Mat r c fp) = withForeignPtr fp $ \p ->
  DMat <$> c_arr_input_ref t 2 (fromIntegral r) (fromIntegral c) p

seedVec :: T -> DVec -> Vec -> IO ()
seedVec t (DVec i) (Vec n fp) = do
  m <- arrSize t i
  when (m /= n) $ arrayError "the cotangent vector has another length than the output"
  withForeignPtr fp $ \p -> () <$ c_arr_seed t i p

seedMat :: T -> DMat -> Mat -> IO ()
seedMat t (DMat i) (Mat r c fp) = do
  (r', c') <- arrShape t i
  when ((r, c) /= (r', c')) $ arrayError "the cotangent matrix has another shape than the output"
  withForeignPtr fp $ \p -> () <$ c_arr_seed t i p

collectVec :: T -> Vec -> DVec -> IO (IO Vec)
collectVec t v@(Vec n _) (DVec i) = pure (Vec n <$> newBuf n (\p -> () <$ c_arr_adjoint t i p) <* keepAlive v)

collectMat :: T -> Mat -> DMat -> IO (IO Mat)
collectMat t m@(Mat r c _) (DMat i) = pure (Mat r c <$> newBuf (r * c) (\p -> () <$ c_arr_adjoint t i p) <* keepAlive m)
