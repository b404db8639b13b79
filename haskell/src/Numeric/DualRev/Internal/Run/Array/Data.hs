{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The arrays of ordinary code, 'Vec' and 'Mat' (immutable, in pinned
-- storage that the tape borrows rather than copies), and of differentiable
-- code, 'DVec' and 'DMat' (array nodes of the tape).
module Numeric.DualRev.Internal.Run.Array.Data
  ( Vec (..), Mat (..), DVec (..), DMat (..)
  , vecElems, matRows
  , arrayError, newBuf
  ) where

import Control.DeepSeq (NFData (..))
import Data.Int (Int64)
import Foreign.ForeignPtr (ForeignPtr, mallocForeignPtrArray, withForeignPtr)
import Foreign.Marshal.Array (peekArray)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peekElemOff)
import System.IO.Unsafe (unsafeDupablePerformIO)

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.Array

-- | A vector of doubles: immutable, its elements in one block of pinned
-- memory, which the tape reads in place.  Build one with
-- 'Numeric.DualRev.Array.vfromList' (or from a storable vector with
-- 'Numeric.DualRev.Array.vecFromStorable'); it shows as the call that
-- builds it.
--
-- >>> vfromList [1, 2]
-- vfromList [1.0,2.0]
data Vec = Vec !Int !(ForeignPtr Double)

-- | A matrix of doubles: immutable, its elements row by row in one block of
-- pinned memory.  Build one with 'Numeric.DualRev.Array.fromRows' (or from
-- a storable vector with 'Numeric.DualRev.Array.matFromStorable'); it shows
-- as the call that builds it.
--
-- >>> fromRows [[1, 2], [3, 4]]
-- fromRows [[1.0,2.0],[3.0,4.0]]
data Mat = Mat !Int !Int !(ForeignPtr Double)

-- | A vector in differentiable code: an array node of the tape.
newtype DVec = DVec Int64

-- | A matrix in differentiable code: an array node of the tape.
newtype DMat = DMat Int64

-- | Evaluated in full as soon as it is built ('rnf' is 'seq'): results
-- that hold arrays can be forced with 'Control.DeepSeq.force', as a
-- benchmark harness does.
--
-- >>> import Control.DeepSeq (force)
-- >>> force (vfromList [1, 2], [fromRows [[3]]])
-- (vfromList [1.0,2.0],[fromRows [[3.0]]])
instance NFData Vec where
  rnf v = v `seq` ()

instance NFData Mat where
  rnf m = m `seq` ()

instance Show Vec where
  showsPrec p v = showParen (p > 10) (showString "vfromList " . shows (vecElems v))

-- | Element by element, as the lists of the elements compare (a NaN equal
-- to nothing), without making them: a taped function compares the arrays of
-- its input that are data (in a @Constant@) with the recorded ones at every
-- call.
instance Eq Vec where
  Vec n fp == Vec n' fp' = n == n' && sameElems n fp fp'

instance Show Mat where
  showsPrec p m = showParen (p > 10) (showString "fromRows " . shows (matRows m))

instance Eq Mat where
  Mat r c fp == Mat r' c' fp' = (r, c) == (r', c') && sameElems (r * c) fp fp'

-- | Whether the first n elements of two arrays are equal, pairwise by '=='.
sameElems :: Int -> ForeignPtr Double -> ForeignPtr Double -> Bool
sameElems n fa fb = unsafeDupablePerformIO $
  withForeignPtr fa $ \pa -> withForeignPtr fb $ \pb ->
    let go i
          | i >= n = pure True
          | otherwise = do
              a <- peekElemOff pa i
              b <- peekElemOff pb i
              if (a :: Double) == b then go (i + 1) else pure False
    in go 0

vecElems :: Vec -> [Double]
vecElems (Vec n fp) = unsafeDupablePerformIO (withForeignPtr fp (peekArray n))

matRows :: Mat -> [[Double]]
matRows (Mat r c fp) = chunks (unsafeDupablePerformIO (withForeignPtr fp (peekArray (r * c))))
  where chunks xs = if c == 0 then replicate r [] else go xs
        go [] = []
        go xs = let (a, b) = splitAt c xs in a : go b

arrayError :: String -> IO a
arrayError = ioError . userError . ("dualrev: " ++)

newBuf :: Int -> (Ptr Double -> IO ()) -> IO (ForeignPtr Double)
newBuf n fill = do
  fp <- mallocForeignPtrArray (max 1 n)
  withForeignPtr fp fill
  pure fp
