{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The guards of a taped recording (include/dualrev.h, \"replay\"): while
-- a thread records a function that will be replayed, every comparison and
-- every discrete result of a dual number it computes (the methods of 'Eq',
-- 'Ord', 'RealFrac', 'RealFloat', 'signum', 'fromEnum') is recorded on the
-- tape as a guard, so that a replay at inputs where one comes out
-- otherwise is refused and the function is recorded again.  Those methods
-- are pure, and used inside library functions ('sort', 'maximum', 'elem')
-- as much as in the block's own code, so they reach the tape through the
-- registry below, not through the 'AD' monad.  Outside a taped recording
-- a comparison of active values costs one read of a counter.
module Numeric.DualRev.Internal.Run.Driver.Guard
  ( withGuards, guardingTape, withGuardsOn, guardsAnywhere
  , guardRaw, guardRound, guardSignum
    -- * The guard kinds (dr_fe_guard's op)
  , gLt, gLe, gGt, gGe, gEq, gNe, gFloor, gCeil, gTrunc, gRint, gIsNaN, gIsInf, gSignBit
  ) where

import Control.Concurrent (ThreadId, myThreadId)
import Control.Exception (finally)
import Data.Int (Int64)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef)
import qualified Data.Map.Strict as M
import Foreign.C.Types (CInt)
import Foreign.Ptr (Ptr)
import System.IO.Unsafe (unsafeDupablePerformIO, unsafePerformIO)

import Numeric.DualRev.Internal.Engine.FFI (CTape)
import Numeric.DualRev.Internal.Engine.ReplayFFI (c_fe_guard, c_fe_round)

gLt, gLe, gGt, gGe, gEq, gNe, gFloor, gCeil, gTrunc, gRint, gIsNaN, gIsInf, gSignBit :: CInt
gLt = 0
gLe = 1
gGt = 2
gGe = 3
gEq = 4
gNe = 5
gFloor = 6
gCeil = 7
gTrunc = 8
gRint = 9
gIsNaN = 10
gIsInf = 11
gSignBit = 12

-- | The threads recording guards, and on which tape.
registry :: IORef (M.Map ThreadId (Ptr CTape))
registry = unsafePerformIO (newIORef M.empty)
{-# NOINLINE registry #-}

-- | How many threads record guards: the test every comparison makes.
recording :: IORef Int
recording = unsafePerformIO (newIORef 0)
{-# NOINLINE recording #-}

-- | Run with the calling thread's comparisons of dual numbers recorded as
-- guards on t.
withGuards :: Ptr CTape -> IO a -> IO a
withGuards t io = do
  me <- myThreadId
  atomicModifyIORef' registry (\m -> (M.insert me t m, ()))
  atomicModifyIORef' recording (\n -> (n + 1, ()))
  io `finally` do
    atomicModifyIORef' recording (\n -> (n - 1, ()))
    atomicModifyIORef' registry (\m -> (M.delete me m, ()))

-- | Whether any thread records guards now (one read of a counter).
guardsAnywhere :: IO Bool
guardsAnywhere = (/= 0) <$> readIORef recording

-- | The tape the calling thread records guards on, if it does.
guardingTape :: IO (Maybe (Ptr CTape))
guardingTape = do
  n <- readIORef recording
  if n == 0 then pure Nothing else M.lookup <$> myThreadId <*> readIORef registry

-- | Run with the calling thread's guards recorded on the handle t (a child
-- handle of a fork, for a side of (|*|) that runs inside a recording with
-- guards), the thread's earlier handle, if any, restored after.
withGuardsOn :: Ptr CTape -> IO a -> IO a
withGuardsOn t io = do
  me <- myThreadId
  old <- atomicModifyIORef' registry (\m -> (M.insert me t m, M.lookup me m))
  io `finally` atomicModifyIORef' registry
    (\m -> (maybe (M.delete me m) (\o -> M.insert me o m) old, ()))

-- | The outcome of a guard of kind op over a and b (values and node ids,
-- -1 for a constant), recorded where the calling thread records guards.
-- Between constants it records nothing.
guardRaw :: CInt -> Double -> Int64 -> Double -> Int64 -> Bool -> Bool
guardRaw op x i y j out
  | i == -1 && j == -1 = out
  | otherwise = record op x i y j out
{-# INLINE guardRaw #-}

-- | (Out of line with its unsafeDupablePerformIO: GHC 9.0 panics, "Unknown
-- call method", compiling some callers that inline it.)
record :: CInt -> Double -> Int64 -> Double -> Int64 -> Bool -> Bool
record op x i y j out =
  unsafeDupablePerformIO (withTape out (\t -> out <$ c_fe_guard t op x i y j))
{-# NOINLINE record #-}

-- | A discrete result r of a rounding (floor, ceiling, truncate, round:
-- gFloor ... gRint) of the value x of node i, with the guard that x rounds
-- to the same.
guardRound :: CInt -> Double -> Int64 -> r -> r
guardRound op x i r
  | i == -1 = r
  | otherwise = recordRound op x i r
{-# INLINE guardRound #-}

recordRound :: CInt -> Double -> Int64 -> r -> r
recordRound op x i r = unsafeDupablePerformIO (withTape r (\t -> r <$ c_fe_round t op x i))
{-# NOINLINE recordRound #-}

-- | 'signum' of the value x of node i, with the guards that fix it: its
-- sign, and for 0, -0 and NaN (which signum gives back) which of them.
guardSignum :: Double -> Int64 -> Double
guardSignum x i
  | guardRaw gGt x i 0 (-1) (x > 0) = 1
  | guardRaw gLt x i 0 (-1) (x < 0) = -1
  | guardRaw gIsNaN x i 0 (-1) (isNaN x) = x
  | guardRaw gSignBit x i 0 (-1) (isNegativeZero x) = -0.0
  | otherwise = 0

-- | Run act on the tape the calling thread records guards on, if any.
withTape :: a -> (Ptr CTape -> IO a) -> IO a
withTape none act = do
  n <- readIORef recording
  if n == 0
    then pure none
    else do
      me <- myThreadId
      m <- readIORef registry
      maybe (pure none) act (M.lookup me m)
