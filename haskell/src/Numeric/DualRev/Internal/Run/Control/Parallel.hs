{-# LANGUAGE LambdaCase #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The fork-join pair of differentiable code (thesis section 3.10): the two
-- sides record as two child jobs of the tape, on two Haskell threads, and
-- the C reverse pass runs them in parallel.
module Numeric.DualRev.Internal.Run.Control.Parallel
  ( parPairD
  , useCapabilities
  , rootHandle, recordingHandle
  , isAsync
  ) where

import Control.Concurrent (ThreadId, forkOn, getNumCapabilities, myThreadId, threadCapability, throwTo, yield)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, takeMVar, tryTakeMVar)
import Control.Exception (SomeAsyncException, SomeException, allowInterrupt, catch, evaluate, finally, fromException, mask, throwIO, try, uninterruptibleMask_)
import Control.Monad (forM_, when)
import Data.Bits (clearBit, setBit, testBit)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef)
import qualified Data.Map.Strict as M
import Data.Maybe (fromMaybe, isJust)
import Data.Word (Word64)
import GHC.Clock (getMonotonicTimeNSec)
import System.IO.Unsafe (unsafePerformIO)
import Foreign.Marshal.Array (allocaArray)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peekElemOff)

import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_order)
import Numeric.DualRev.Internal.Run.Driver.Guard (guardingTape, withGuardsOn)

-- | @a |*| b@ in transformed code.  If the fork cannot be made (out of
-- memory) both sides run in sequence on the current job; the tape's sticky
-- status reports the failure.
parPairD :: AD a -> AD b -> AD (a, b)
parPairD ma mb = AD $ \t -> do
  caps <- getNumCapabilities
  guarding <- guardingTape
  -- one capability runs one Haskell thread at a time: forking could only
  -- add cost (and move the work between OS threads).  A handle of order 2
  -- forks where a taped gradient records (its guards on): the children
  -- record at order 2, the join takes their log and guards into the
  -- parent's, and the replay runs the sides side by side, values and
  -- gradients bit for bit those of one capability.  Elsewhere at order 2
  -- (hvp, hessian, the inner function of a nested derivative) the sides
  -- stay in order: second derivatives are taken by node id, and sides
  -- recorded at once interleave their ids, which would make the results
  -- depend on the capabilities to rounding.  Sequential, the two sides
  -- record in order on the current job, exactly as without (|*|)
  order <- c_tape_order t
  if caps == 1 || (order > 1 && guarding == Nothing)
    then (,) <$> unAD ma t <*> unAD mb t
    else pairOn t (guarding /= Nothing) ma mb

-- | The pair on two jobs.  It runs on the calling thread, bound or not:
-- the caller waits for the other side with 'spinTake', so a bound thread
-- (main is one) keeps its capability and its OS thread.  (Moving the pair
-- to an unbound thread instead, so that blocking cost no OS context
-- switch, made the calling thread block for the whole pair, and its OS
-- thread hand the capability over and back at every gradient.)
pairOn :: Ptr CTape -> Bool -> AD a -> AD b -> IO (a, b)
pairOn t guarding ma mb = do
  root <- rootHandle t
  -- masked from the fork to the join: whatever arrives, the sides have
  -- finished with their child handles before this returns (the caller may
  -- free the tape right after), and c_join always runs
  mask $ \restore -> allocaArray 2 $ \kids -> do
    st <- c_fork t 2 kids
    if st /= 0
      then restore ((,) <$> unAD ma t <*> unAD mb t)
      else do
        k0 <- peekElemOff kids 0
        k1 <- peekElemOff kids 1
        -- inside a recording with guards, each side's guards go to its
        -- own handle, on whichever thread runs it
        let guardsOn k = if guarding then withGuardsOn k else id
            side k m = attempt (onSide (Side k root) (guardsOn k (restore (unAD m k >>= evaluate))))
        (cap, _) <- threadCapability =<< myThreadId
        caps <- getNumCapabilities
        claim <- claimIdle cap caps
        case claim of
          -- every capability already runs a side: both sides run here, one
          -- after the other, still as two jobs, so the reverse pass keeps
          -- the parallelism of the whole tree
          Nothing -> do
            ra <- side k0 ma
            rb <- case ra of
              Left e | isAsync e -> pure (Left e)
              _ -> side k1 mb
            joinWith t ra rb Nothing
          Just (other, ownClaimed) -> do
            done <- newEmptyMVar
            -- straight onto the idle capability: a forkIO'd thread would
            -- wait in this capability's run queue until the scheduler next
            -- runs here.  It starts masked (inherited) and puts its result
            -- whatever happens, so the wait below always ends
            tid <- forkOn other $ do
              r <- side k1 mb
              release other
              putMVar done r
            ra <- side k0 ma
            -- while this thread waits, its capability may take other sides
            when ownClaimed (release cap)
            -- interrupted: the other side's work is wasted, stop it early
            forM_ (either Just (const Nothing) ra) $ \e -> when (isAsync e) (stop tid e)
            (rb, interrupted) <- await done tid
            joinWith t ra rb interrupted

-- | Join, then rethrow: first what interrupted the wait, then the sides'
-- exceptions in order.
joinWith :: Ptr CTape -> Either SomeException a -> Either SomeException b -> Maybe SomeException -> IO (a, b)
joinWith t ra rb interrupted = do
  _ <- c_join t
  forM_ interrupted throwIO
  a <- rethrow ra
  b <- rethrow rb
  pure (a, b)

attempt :: IO a -> IO (Either SomeException a)
attempt = try

-- | Wait for a forked thread's result.  An exception that arrives meanwhile
-- goes on to that thread (so it stops soon) and is returned, to be rethrown
-- once the thread is done: leaving earlier would free the tape under it.
await :: MVar r -> ThreadId -> IO (r, Maybe SomeException)
await done tid = go Nothing
  where
    go interrupted = ((\r -> (r, interrupted)) <$> spinTake done) `catch` \e -> do
      stop tid e
      go (Just (fromMaybe e interrupted))

-- | takeMVar, after polling for up to 'spinNs'.  A blocked thread leaves
-- its capability idle, and an idle capability's OS thread goes to sleep:
-- waking it again is a system call and an OS context switch.  The two
-- sides of a pair usually finish close together, so a short poll mostly
-- avoids that: with it and 'pairOn' on the calling thread, a gradient of
-- four particles simulated as a pair of pairs at -N2 went from 138 to 90 us
-- and from 29 to 15 futex calls (strace).  The poll yields, so other
-- Haskell threads run and a garbage collection can start, and it takes
-- asynchronous exceptions even when masked, as takeMVar would.
spinTake :: MVar a -> IO a
spinTake mv = getMonotonicTimeNSec >>= poll
  where
    poll t0 = tryTakeMVar mv >>= \case
      Just r -> pure r
      Nothing -> do
        allowInterrupt
        now <- getMonotonicTimeNSec
        if now - t0 < spinNs then yield >> poll t0 else takeMVar mv

-- | How long 'spinTake' polls (ns).
spinNs :: Word64
spinNs = 200000

-- | Pass an exception on to a forked thread.  Uninterruptible: a second
-- exception must not take the caller out of the wait; the thread takes
-- exceptions except for the few instructions that put its result.
stop :: ThreadId -> SomeException -> IO ()
stop tid e = uninterruptibleMask_ (throwTo tid e)

-- | An exception another thread threw to this one (timeout, killThread),
-- however it was rethrown since.
isAsync :: SomeException -> Bool
isAsync e = isJust (fromException e :: Maybe SomeAsyncException)

------------------------------------------------------------------------------
-- The handle each thread records on

-- | The handle a thread records on while it runs a side of a pair, and the
-- root handle of that tape.
data Side = Side !(Ptr CTape) !(Ptr CTape)

-- | The threads that run a side of a pair now.  Code that records when a
-- lazy value is first demanded (the elements of 'iterate') cannot take the
-- handle from the 'AD' computation that made the value: by the time it runs
-- that handle may be a side that has joined, or a parent that is forked.
-- It records on the handle of the thread that demands it, found here; a
-- thread not listed records on the root.
sides :: IORef (M.Map ThreadId Side)
sides = unsafePerformIO (newIORef M.empty)
{-# NOINLINE sides #-}

-- | Run with the calling thread listed as recording on a side.
onSide :: Side -> IO a -> IO a
onSide s io = do
  me <- myThreadId
  prev <- atomicModifyIORef' sides (\m -> (M.insert me s m, M.lookup me m))
  io `finally` atomicModifyIORef' sides (\m -> (M.alter (const prev) me m, ()))

-- | The root handle of the tape of handle t, on which the calling thread
-- records now.
rootHandle :: Ptr CTape -> IO (Ptr CTape)
rootHandle t = do
  me <- myThreadId
  m <- readIORef sides
  pure (maybe t (\(Side _ r) -> r) (M.lookup me m))

-- | The handle the calling thread records on now, on the tape with root r.
recordingHandle :: Ptr CTape -> IO (Ptr CTape)
recordingHandle r = do
  me <- myThreadId
  m <- readIORef sides
  pure $ case M.lookup me m of
    Just (Side h r') | r' == r -> h
    _ -> r

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
