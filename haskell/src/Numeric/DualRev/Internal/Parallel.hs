-- | The fork-join pair of differentiable code (thesis section 3.10): the two
-- sides record as two child jobs of the tape, on two Haskell threads, and
-- the C reverse pass runs them in parallel.
module Numeric.DualRev.Internal.Parallel
  ( parPairD
  , useCapabilities
  ) where

import Control.Concurrent (forkOn, getNumCapabilities, isCurrentThreadBound, myThreadId, rtsSupportsBoundThreads, runInUnboundThread, threadCapability)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (SomeException, evaluate, throwIO, try)
import Control.Monad (when)
import Data.Bits (clearBit, setBit, testBit)
import Data.IORef (IORef, atomicModifyIORef', newIORef)
import System.IO.Unsafe (unsafePerformIO)
import Foreign.Marshal.Array (allocaArray)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peekElemOff)

import Numeric.DualRev.Internal.AD
import Numeric.DualRev.Internal.FFI

-- | @a |*| b@ in transformed code.  If the fork cannot be made (out of
-- memory) both sides run in sequence on the current job; the tape's sticky
-- status reports the failure.
parPairD :: AD a -> AD b -> AD (a, b)
parPairD ma mb = AD $ \t -> do
  caps <- getNumCapabilities
  if caps == 1
    -- one capability runs one Haskell thread at a time: forking could only
    -- add cost (and move the work between OS threads), so the two sides
    -- record in order on the current job, exactly as without (|*|)
    then (,) <$> unAD ma t <*> unAD mb t
    else forked t ma mb

forked :: Ptr CTape -> AD a -> AD b -> IO (a, b)
forked t ma mb = do
  -- a bound thread (main is one) that blocks on the MVar below hands its
  -- capability to another OS thread and needs an OS context switch to
  -- resume; run the whole pair (and the forks nested in it) on an unbound
  -- thread instead, so only this outermost pair pays that once
  bound <- isCurrentThreadBound
  if bound && rtsSupportsBoundThreads
    then runInUnboundThread (pairOn t ma mb)
    else pairOn t ma mb

pairOn :: Ptr CTape -> AD a -> AD b -> IO (a, b)
pairOn t ma mb = allocaArray 2 $ \kids -> do
  st <- c_fork t 2 kids
  if st /= 0
    then (,) <$> unAD ma t <*> unAD mb t
    else do
      k0 <- peekElemOff kids 0
      k1 <- peekElemOff kids 1
      (cap, _) <- threadCapability =<< myThreadId
      caps <- getNumCapabilities
      claim <- claimIdle cap caps
      case claim of
        -- every capability already runs a side: both sides run here, one
        -- after the other, still as two jobs, so the reverse pass keeps
        -- the parallelism of the whole tree
        Nothing -> do
          ra <- try (unAD ma k0 >>= evaluate)
          rb <- try (unAD mb k1 >>= evaluate)
          joinWith ra rb
        Just (other, ownClaimed) -> do
          done <- newEmptyMVar
          -- straight onto the idle capability: a forkIO'd thread would wait
          -- in this capability's run queue until the scheduler next runs
          -- here
          _ <- forkOn other $ do
            r <- try (unAD mb k1 >>= evaluate)
            release other
            putMVar done r
          ra <- try (unAD ma k0 >>= evaluate)
          -- while this thread waits, its capability may take other sides
          when ownClaimed (release cap)
          rb <- takeMVar done
          joinWith ra rb
  where
    joinWith ra rb = do
      _ <- c_join t
      a <- rethrow ra
      b <- rethrow rb
      pure (a, b)

-- | The capabilities that run a side of a pair now (bit i: capability i).
-- Forking onto a busy capability would queue the side behind the work
-- there (measured: the outer pair's second side of fparticles started
-- 150-280 us late, behind an inner pair's side), so sides go only to idle
-- capabilities.  Other Haskell threads of the program are not counted.
busyCaps :: IORef Integer
busyCaps = unsafePerformIO (newIORef 0)
{-# NOINLINE busyCaps #-}

-- | Mark this capability busy and claim an idle one, if any: Just (the
-- claimed capability, whether this call marked this one).
claimIdle :: Int -> Int -> IO (Maybe (Int, Bool))
claimIdle cap caps = atomicModifyIORef' busyCaps $ \m ->
  let own = not (testBit m cap)
      m' = setBit m cap
  in case [c | c <- [0 .. caps - 1], not (testBit m' c)] of
       (c : _) -> (setBit m' c, Just (c, own))
       [] -> (m, Nothing)

release :: Int -> IO ()
release c = atomicModifyIORef' busyCaps (\m -> (clearBit m c, ()))

rethrow :: Either SomeException a -> IO a
rethrow = either throwIO pure

-- | Let the reverse pass of a tape use as many threads as the program has
-- capabilities (+RTS -N).
useCapabilities :: Ptr CTape -> IO ()
useCapabilities t = do
  n <- getNumCapabilities
  cur <- c_get_threads t
  when (fromIntegral cur /= n) $ () <$ c_set_threads t (fromIntegral n)
