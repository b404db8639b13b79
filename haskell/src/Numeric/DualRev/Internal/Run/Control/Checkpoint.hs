{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Time-stepping loops with binomial checkpointing: 'checkpointedIterate'
-- for users, and its dual, which records the loop as one node of the C
-- engine (@dr_record_checkpointed@).  The engine calls the dual step back
-- on a tape of the loop's own, once per step while the loop is recorded
-- and again while a sweep recomputes steps from its snapshots.
module Numeric.DualRev.Internal.Run.Control.Checkpoint
  ( checkpointedIterate
  , checkpointedIterateWith
  , defaultSnapshots
  , checkpointedIterateD
  , checkpointedIterateWithD
  ) where

import Control.Exception (SomeException, handle, throwIO)
import Control.Monad (when, zipWithM_)
import Data.IORef (newIORef, readIORef, writeIORef)
import Foreign.C.String (peekCString)
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peekByteOff, pokeByteOff)

import Numeric.DualRev.Internal.Engine.FFI (CReal, c_strerror, c_tape_status)
import Numeric.DualRev.Internal.Engine.LoopFFI
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Driver.Current (recordingOn)
import Numeric.DualRev.Internal.Run.Control.Custom (Shape (..))

-- | @checkpointedIterate n step x0@ is @iterate step x0 !! n@, the state
-- after n steps, computed strictly.  In differentiable code the loop is
-- recorded with binomial checkpointing: memory for 'defaultSnapshots'
-- states and a segment of steps (at least 256 KiB of tape) instead of every
-- operation of every step, for a bounded number of recomputations of each
-- step during the reverse pass; the gradient is the one of the plain loop.
--
-- The state is a 'Double', a list (its length kept by every step), or a
-- tuple of up to seven states (the shapes of custom rules' arguments).  The step may use constants from around the
-- loop, but a value that is differentiated (a parameter, say) must be part
-- of the state, which the step passes on unchanged: the step runs on a tape
-- of the loop's own, and a differentiated value from outside it is
-- reported as an error.
checkpointedIterate :: Int -> (s -> s) -> s -> s
checkpointedIterate = checkpointedIterateWith defaultSnapshots

-- | 'checkpointedIterate' keeping at most that many snapshots of the state.
checkpointedIterateWith :: Int -> Int -> (s -> s) -> s -> s
checkpointedIterateWith _ n step x0 = go n x0
  where
    go k x | k <= 0 = x
           | otherwise = let x' = step x in x' `seq` go (k - 1) x'

-- | The snapshots 'checkpointedIterate' keeps: with segments of 256 KiB of
-- tape, a million steps of a small state are recomputed at most twice.
defaultSnapshots :: Int
defaultSnapshots = 100

checkpointedIterateD :: Shape a s => Int -> (s -> AD s) -> s -> AD s
checkpointedIterateD = checkpointedIterateWithD defaultSnapshots

checkpointedIterateWithD :: forall a s. Shape a s => Int -> Int -> (s -> AD s) -> s -> AD s
checkpointedIterateWithD snaps n step x0
  | n <= 0 = pure x0
  | otherwise = AD $ \t -> do
      let xs = duals x0 []
          m = length xs
      failure <- newIORef (Nothing :: Maybe SomeException)
      let run :: StepFn
          run _ inner _ _ xp yp = handle (\e -> writeIORef failure (Just e) >> pure 2) $ do
            s <- rebuildFrom xp m
            s' <- recordingOn inner (unAD (step s) inner)
            let ys = duals s' []
            when (length ys /= m) $ throwIO $ DualRevError $
              "dualrev: checkpointedIterate: a step turned a state of " ++ show m
                ++ " numbers into one of " ++ show (length ys)
                ++ " (every step must keep the state's shape)"
            pokeReals yp ys
            c_tape_status inner
      fp <- mkStepFn run
      allocaBytes (16 * m) $ \xbuf -> allocaBytes (16 * m) $ \obuf -> do
        pokeReals xbuf xs
        st <- c_record_checkpointed t fp (fromIntegral n) (fromIntegral m) xbuf
                (fromIntegral (max 0 snaps)) obuf
        if st == 0
          then rebuildFrom obuf m
          else readIORef failure >>= \f -> case f of
            Just e -> throwIO e
            Nothing -> do
              msg <- c_strerror st >>= peekCString
              throwIO $ DualRevError $ "dualrev: checkpointedIterate: " ++ msg
                ++ if st == 2
                     then " (a step used a differentiated value from outside its state: \
                          \pass it in the state and have the step return it unchanged)"
                     else ""
  where
    rebuildFrom :: Ptr CReal -> Int -> IO s
    rebuildFrom p m = fst . fillD (primal x0 :: a) <$> mapM (peekReal p) [0 .. m - 1]

peekReal :: Ptr CReal -> Int -> IO D
peekReal p i = D <$> peekByteOff p (16 * i) <*> peekByteOff p (16 * i + 8)

pokeReals :: Ptr CReal -> [D] -> IO ()
pokeReals p = zipWithM_ (\i (D v j) -> pokeByteOff p (16 * i) v >> pokeByteOff p (16 * i + 8) j) [0 ..]
