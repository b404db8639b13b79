{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Taped gradients ('Numeric.DualRev.tapedGrad'): a function recorded once,
-- on a tape of its own at order 2, and replayed by the engine at later
-- inputs (include/dualrev.h, \"replay\") instead of running its Haskell
-- code again.  A call replays when its input has the recorded one's
-- discrete structure (the same number of scalars and, the scalars aside,
-- equal to it) and no guard flips (every comparison and discrete result of
-- a dual number the recording computed, "Numeric.DualRev.Internal.Run.Guard");
-- otherwise it records the function again at the new input and keeps that
-- tape.  A function whose tape cannot be replayed (it holds nodes the
-- engine cannot evaluate: custom rules, nested derivatives, checkpointed
-- loops, arrays) is recorded at every call, at order 1.
--
-- The state is one tape behind an 'MVar': a call that finds it taken (the
-- function called from another thread at the same moment) records on a
-- tape of its own instead of waiting.
module Numeric.DualRev.Internal.Run.Taped
  ( tapedGradRun
    -- * For tests
  , tapedRecordings
  ) where

import Control.Concurrent.MVar (newMVar, putMVar, tryTakeMVar)
import Control.Exception (SomeException, catch, evaluate, mask, onException)
import Control.Monad (when)
import Data.Int (Int64)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef)
import Foreign.C.Types (CInt)
import Foreign.ForeignPtr (ForeignPtr, newForeignPtr, withForeignPtr)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (allocaArray)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peek)
import GHC.Compact (compact, getCompact)
import System.IO.Unsafe (unsafeDupablePerformIO, unsafePerformIO)

import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Engine.ReplayFFI (c_replay_range, c_taped_grad, c_value)
import Numeric.DualRev.Internal.Run.AD
import Numeric.DualRev.Internal.Run.Fill (Buf (..), Fill, Src (..), Take)
import Numeric.DualRev.Internal.Run.Flat
import Numeric.DualRev.Internal.Run.Guard (withGuards)
import Numeric.DualRev.Internal.Run.Runners (newTape)

-- | How many recordings taped functions have made (replays do not count):
-- what tests read to tell a replay from a recording.
recordings :: IORef Int
recordings = unsafePerformIO (newIORef 0)
{-# NOINLINE recordings #-}

tapedRecordings :: IO Int
tapedRecordings = readIORef recordings

-- | A recording kept for replay.
data Recorded a = Recorded
  { rTape :: !(ForeignPtr CTape)
  , rInput :: a          -- ^ the input it was recorded at
  , rCount :: !Int       -- ^ its scalars, input nodes first .. first + n - 1
  , rFirst :: !Int64
  , rOut :: !D           -- ^ the output as recorded
  , rReplays :: !Bool    -- ^ False: the engine cannot replay this function
  }

-- | Value and gradient of a function to Double, recorded once and replayed
-- (see the module's description).  @fill@ writes a new input's scalars
-- where the recorded input's discrete structure is the new one's
-- ("Numeric.DualRev.Internal.Run.Fill").  Each application of
-- @tapedGradRun@ to its arguments is one taped function with a state of
-- its own.
tapedGradRun :: Fill a -> Take a -> Trav a -> (Supply -> a -> IO a') -> (a' -> AD D)
             -> a -> (Double, a)
tapedGradRun fill tk trav ins f = unsafePerformIO $ do
  st <- newMVar Nothing
  pure (\x -> unsafeDupablePerformIO (call st x))
  where
    call st x = mask $ \restore -> do
      held <- tryTakeMVar st
      case held of
        Nothing -> restore (alone x)
        Just s -> do
          (s', r) <- restore (step s x) `onException` putMVar st Nothing
          putMVar st s'
          pure r

    -- the state busy: the gradient on a tape of its own, kept by no one
    alone x = do
      t <- newTape
      fp <- newForeignPtr p_tape_free t
      (_, r) <- recordAt fp False x
      pure r

    step Nothing x = do
      t <- newTape
      fp <- newForeignPtr p_tape_free t
      recordAt fp True x
    step (Just rec) x
      | not (rReplays rec) = recordAt (rTape rec) False x
      | otherwise = do
          let n = rCount rec
          allocaArray (max 1 n) $ \p -> do
              k <- fill (rInput rec) x (Buf p n) 0
              if k /= n
                then recordAt (rTape rec) True x   -- another shape
                else withForeignPtr (rTape rec) $ \t -> alloca $ \pv -> do
                  let D y0 yi = rOut rec
                  -- replay and sweep in one call where it may be unsafe
                  quick <- c_taped_grad t (rFirst rec) (fromIntegral n) p yi pv p
                  st <- if quick /= -1 then pure quick
                        else c_replay_range t (rFirst rec) (fromIntegral n) p
                  case st of
                    0 -> do
                      r <- if quick /= -1
                        then do
                          yv <- if yi == -1 then pure y0 else peek pv
                          g <- readBack x p
                          pure (yv, g)
                        else do
                          yv <- valueOf t (rOut rec)
                          g <- gradientAt t (rOut rec) (rFirst rec) x n
                          pure (yv, g)
                      pure (Just rec, r)
                    7 -> recordAt (rTape rec) True x   -- a guard flipped
                    _ -> recordAt (rTape rec) False x  -- cannot replay

    -- record at x (for replay: at order 2, guards on), take the gradient
    recordAt fp replayable x = withForeignPtr fp $ \t -> do
      atomicModifyIORef' recordings (\k -> (k + 1, ()))
      engine "dr_tape_clear" (c_tape_clear t)
      engine "dr_tape_set_order" (c_tape_set_order t (if replayable then 2 else 1))
      (n, first, y) <- (if replayable then withGuards t else id) (record trav ins f t x)
      g <- gradientAt t y first x n
      -- the recorded input is kept for the shape of later ones: in a
      -- compact region the collector does not copy it at every major
      -- collection (a large one cost more than the replay); an input the
      -- region cannot hold (arrays, in pinned memory) is kept as it is
      x0 <- if replayable then inCompact x else pure x
      let rec = Recorded fp x0 n first y replayable
      pure (Just rec, (primalD y, g))

    gradientAt t (D _ yi) first x n = do
      engine "dr_adjoints_clear" (c_adjoints_clear t)
      when (yi /= -1) $ do
        engine "dr_seed" (c_seed t yi 1)
        engine "dr_reverse" (c_reverse t)
      allocaArray (max 1 n) $ \p -> do
        engine "dr_adjoints_read" (c_adjoints_read t first (fromIntegral n) p)
        readBack x p

    -- the gradient, shaped like x, from the buffer
    readBack x p = newCounter >>= \c -> tk x (Src p c)

inCompact :: a -> IO a
inCompact x = (getCompact <$> compact x) `catch` \e -> const (evaluate x) (e :: SomeException)

valueOf :: Ptr CTape -> D -> IO Double
valueOf _ (D v (-1)) = pure v
valueOf t (D _ i) = alloca $ \p -> do
  engine "dr_value" (c_value t i p :: IO CInt)
  peek p
