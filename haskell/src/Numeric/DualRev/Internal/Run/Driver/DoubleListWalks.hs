{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The walks that the wrappers of 'Numeric.DualRev.grad' and friends use
-- for a list of Double in the input: one call makes all the list's input
-- nodes, with consecutive ids, and one call reads all their adjoints.
module Numeric.DualRev.Internal.Run.Driver.DoubleListWalks
  ( inputDoubles, collectDoubles
  ) where

import Control.Exception (onException)
import Data.Int (Int64)
import Data.IORef (newIORef, readIORef, writeIORef)
import Foreign.ForeignPtr (ForeignPtr, mallocForeignPtrArray, newForeignPtr, withForeignPtr)
import Foreign.Marshal.Alloc (finalizerFree)
import qualified Foreign.Marshal.Alloc as Alloc
import Foreign.Marshal.Array (mallocArray, reallocArray)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peekElemOff, pokeElemOff)
import GHC.Exts (ByteArray#, Ptr (..), Double (..), Int (..), copyByteArrayToAddr#, copyMutableByteArray#, indexDoubleArray#, isTrue#, newByteArray#, shrinkMutableByteArray#, unsafeFreezeByteArray#, writeDoubleArray#, (*#), (+#), (<#), (>=#))
import GHC.IO (IO (..))
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Engine.FFI

-- | The dual of a list of inputs: one call makes the input nodes, with
-- consecutive ids.  The walk that counts the list also copies its values
-- out, and the duals are made from the copy, so the list's cells are walked
-- once: by the time the forward pass uses a matrix's rows, their cells are
-- out of the nearer caches, and a second walk would cost a miss an element.
-- A short list (at most 'shortList' elements) is copied to an array of the
-- garbage-collected heap; it gets its first dual at once, which is all the
-- read-out needs, and the rest in one go when the forward pass first uses
-- them: a list of many short lists then never has all its duals in the heap
-- at once, each row's being garbage once used.  A longer one is copied to a
-- C buffer (outside the garbage-collected heap); its duals are made from it
-- lazily, a chunk of 'chunkLen' at a time, so the forward pass consumes them
-- as it goes: a long dual list never lives in the heap whole, and an element
-- costs its two cells and no thunk.
inputDoubles :: Ptr CTape -> [Double] -> IO [D]
inputDoubles t xs = do
  copied <- copyShort xs
  case copied of
    Short vs@(Values n _) -> do
      first <- inputRange t n
      pure $ if first == -1 || n == 0 then constants
        else let !d = D (valueAt vs 0) first in d : dualsOf vs first 1
    Long prefix rest -> do
      (buf, n) <- copyDoubles prefix rest
      first <- inputRange t n
      pure (if first == -1 then constants else dualsFrom buf first 0 n)
  where
    -- on failure (out of memory) constants; the sweep reports the tape's status
    constants = map (\x -> D x (-1)) xs
{-# INLINE inputDoubles #-}

-- | The values of a short list, copied out of it by the walk that counts it
-- (an unpinned array of the garbage-collected heap): its duals are made
-- from them, without a second walk of the list's cells, which by then are
-- out of the nearer caches.
data Values = Values !Int ByteArray#

valueAt :: Values -> Int -> Double
valueAt (Values _ a) (I# i) = D# (indexDoubleArray# a i)
{-# INLINE valueAt #-}

-- | What the walk of 'copyShort' found: a short list's values, or the
-- first 'shortList' values of a longer one and the rest of its cells.
data Copied = Short Values | Long Values [Double]

-- | The values of a list of at most 'shortList' elements; of a longer one,
-- those it walked before it knew, so that 'copyDoubles' goes on from there.
copyShort :: [Double] -> IO Copied
copyShort xs0 = IO $ \s0 -> case newByteArray# (cap0 *# 8#) s0 of
  (# s1, a #) -> go a cap0 0# xs0 s1
  where
    -- room for this many values first, doubled as needed
    cap0 = 64#
    go a _ i [] s = case shrinkMutableByteArray# a (i *# 8#) s of
      s' -> case unsafeFreezeByteArray# a s' of
        (# s'', b #) -> (# s'', Short (Values (I# i) b) #)
    go a cap i (D# x : rest) s
      | isTrue# (i <# cap) = case writeDoubleArray# a i x s of s' -> go a cap (i +# 1#) rest s'
      | isTrue# (i >=# shortList#) = case unsafeFreezeByteArray# a s of
          (# s', b #) -> (# s', Long (Values (I# i) b) (D# x : rest) #)
      | otherwise = case newByteArray# (cap *# 16#) s of
          (# s', a' #) -> case copyMutableByteArray# a 0# a' 0# (cap *# 8#) s' of
            s'' -> case writeDoubleArray# a' i x s'' of
              s3 -> go a' (cap *# 2#) (i +# 1#) rest s3
    !(I# shortList#) = shortList

-- | The duals of values i .. n-1, ids from @first + i@, all made when the
-- list is first used.
dualsOf :: Values -> Int64 -> Int -> [D]
dualsOf vs@(Values n _) first i = go (n - 1) []
  where go !k acc | k < i = acc
                  | otherwise = let !d = D (valueAt vs k) (first + fromIntegral k) in go (k - 1) (d : acc)

-- | The input nodes of a list of n, their first id (-1: none); the tape
-- notes n, which the read-out asks for ('collectDoubles') instead of
-- walking the list again: by then a matrix's rows are out of every cache,
-- and a walk costs a cache miss an element.
inputRange :: Ptr CTape -> Int -> IO Int64
inputRange t n = c_fe_input_range t (fromIntegral n)

-- | The longest input list copied to an array of the garbage-collected heap,
-- its duals made in one go; a longer one is copied to a C buffer, its duals
-- made a chunk at a time (see 'inputDoubles').
shortList :: Int
shortList = 4096

-- | The longest input list whose read-out is copied to a pinned array of
-- the garbage-collected heap rather than a malloc'ed one.
pinnedList :: Int
pinnedList = 128

-- | The length of the input list of 'inputDoubles' with that first id, as
-- the tape noted it (counted again if it has no note).
rangeLength :: Ptr CTape -> Int64 -> [Double] -> IO Int
rangeLength t first xs = do
  n <- c_fe_input_len t first
  pure (if n == 0 then length xs else fromIntegral n)

-- | The values of a long list in a malloc'ed buffer (freed by the garbage
-- collector's finalizer), and their count: those 'copyShort' copied, then
-- the rest.  If the rest raises, the buffer is freed (the one a
-- reallocation left, not the first).
copyDoubles :: Values -> [Double] -> IO (ForeignPtr Double, Int)
copyDoubles (Values n0@(I# n0#) b) rest0 = do
  let cap0 = 2 * n0
  p0@(Ptr a0) <- mallocArray cap0
  IO $ \s -> (# copyByteArrayToAddr# b 0# a0 (n0# *# 8#) s, () #)
  cur <- newIORef p0
  let go !p !_ !k [] = pure (p, k)
      go !p !cap !k (x : rest)
        | k < cap = pokeElemOff p k x >> go p cap (k + 1) rest
        | otherwise = do
            p' <- reallocArray p (2 * cap)
            writeIORef cur p'
            pokeElemOff p' k x
            go p' (2 * cap) (k + 1) rest
  (p, n) <- go p0 cap0 n0 rest0 `onException` (readIORef cur >>= Alloc.free)
  fp <- newForeignPtr finalizerFree p
  pure (fp, n)

-- | Duals of elements i .. n-1 of the buffer, ids from @first + i@.
dualsFrom :: ForeignPtr Double -> Int64 -> Int -> Int -> [D]
dualsFrom buf first i n
  | i >= n = []
  | otherwise = unsafeDupablePerformIO $ withForeignPtr buf $ \p ->
      let j = min n (i + chunkLen)
          go !k acc | k < i = pure acc
                    | otherwise = do
                        v <- peekElemOff p k
                        let !d = D v (first + fromIntegral k)
                        go (k - 1) (d : acc)
      in go (j - 1) (dualsFrom buf first j n)

chunkLen :: Int
chunkLen = 512

-- | Read-out for 'inputDoubles': remembers the first id and the length, and
-- after a sweep copies the adjoints out with one call; the list is then
-- made lazily, in chunks, from that copy, so a gradient of many rows is
-- built a row at a time as it is used, not whole before it is returned.
-- A copy of at most 'pinnedList' adjoints is a pinned array the collector
-- frees; a longer one is malloc'ed.  (The outer action runs before the
-- forward pass, the inner one after the sweep: Runners' @Collect@.)
collectDoubles :: Ptr CTape -> [Double] -> [D] -> IO (IO [Double])
collectDoubles t xs ds = case ds of
  D _ first : _ | first /= -1 -> do
    !n <- rangeLength t first xs
    pure $ if n <= pinnedList
      then mallocForeignPtrArray n >>= readInto first n
      -- a longer one malloc'ed: blocks of the garbage-collected heap (a
      -- matrix's rows) would count towards its old generation and bring
      -- its next major collection nearer, which copies everything live
      else mallocArray n >>= newForeignPtr finalizerFree >>= readInto first n
  _ -> pure (pure (map (const 0) xs))
  where
    readInto first n buf = do
      _ <- withForeignPtr buf $ \p -> c_adjoints_read t first (fromIntegral n) p
      pure (chunksFrom buf 0 n)
{-# INLINE collectDoubles #-}

-- | Elements i .. n-1 of a buffer as a lazy list, 'chunkLen' at a time.
chunksFrom :: ForeignPtr Double -> Int -> Int -> [Double]
chunksFrom buf i n
  | i >= n = []
  | otherwise = unsafeDupablePerformIO $ withForeignPtr buf $ \p ->
      let j = min n (i + chunkLen)
          go !k acc | k < i = pure acc
                    | otherwise = do { v <- peekElemOff p k; go (k - 1) (v : acc) }
      in go (j - 1) (chunksFrom buf j n)
