{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: import "Numeric.DualRev.Array" instead.
--
-- 'Vec' and 'Mat' to and from "Data.Vector.Storable".  Both hold their
-- elements as a 'Foreign.ForeignPtr.ForeignPtr' and a length (a storable
-- vector's slice already points at its first element), so a conversion
-- shares the storage instead of copying it.
module Numeric.DualRev.Internal.Run.Array.Storable
  ( vecFromStorable, vecToStorable
  , matFromStorable, matToStorable
  ) where

import Control.Exception (throw)
import qualified Data.Vector.Storable as VS
import Foreign.ForeignPtr (ForeignPtr, withForeignPtr)
import Foreign.ForeignPtr.Unsafe (unsafeForeignPtrToPtr)
import Foreign.Marshal.Utils (copyBytes)
import Foreign.Ptr (ptrToWordPtr)
import Foreign.Storable (alignment, sizeOf)
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Run.Scalar.AD (DualRevError (..))
import Numeric.DualRev.Internal.Run.Array.Data

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.Array

-- | The vector with the storable vector's elements, sharing its storage.
--
-- The storage is copied only when the storable vector's first element is
-- not aligned for a 'Double' (a vector 'VS.unsafeCast' from bytes at an
-- odd offset): the C kernels read it as an array of doubles.  Otherwise the
-- two share the memory, so the storable vector must not be written to
-- afterwards (through 'VS.unsafeThaw' or the mutable vector it was frozen
-- from), just as for any immutable storable vector.
--
-- Not supported inside differentiable code: convert outside the block and
-- pass the 'Vec' in.
--
-- >>> import qualified Data.Vector.Storable as VS
-- >>> vecFromStorable (VS.fromList [1, 2, 3])
-- vfromList [1.0,2.0,3.0]
vecFromStorable :: VS.Vector Double -> Vec
vecFromStorable v = let (n, fp) = aligned v in Vec n fp

-- | The storable vector with the vector's elements, sharing its storage
-- (never a copy).
--
-- Not supported inside differentiable code.
--
-- >>> vecToStorable (vfromList [1, 2, 3])
-- [1.0,2.0,3.0]
vecToStorable :: Vec -> VS.Vector Double
vecToStorable (Vec n fp) = VS.unsafeFromForeignPtr0 fp n

-- | @matFromStorable r c v@: the @r@ x @c@ matrix whose elements are those
-- of @v@, row by row, sharing its storage (copied only when misaligned, as
-- for 'vecFromStorable').  A 'Numeric.DualRev.DualRevError' naming the
-- shape mismatch when the length of @v@ is not @r * c@.
--
-- Not supported inside differentiable code.
--
-- >>> matFromStorable 2 2 (VS.fromList [1, 2, 3, 4])
-- fromRows [[1.0,2.0],[3.0,4.0]]
matFromStorable :: Int -> Int -> VS.Vector Double -> Mat
matFromStorable r c v
  | r < 0 || c < 0 || r * c /= VS.length v = throw (DualRevError
      ("dualrev: matFromStorable: shape mismatch: " ++ show (VS.length v)
       ++ " elements for a " ++ show r ++ " x " ++ show c ++ " matrix"))
  | otherwise = let (_, fp) = aligned v in Mat r c fp

-- | The elements, row by row, as a storable vector sharing the matrix's
-- storage (never a copy).
--
-- Not supported inside differentiable code.
--
-- >>> matToStorable (fromRows [[1, 2], [3, 4]])
-- [1.0,2.0,3.0,4.0]
matToStorable :: Mat -> VS.Vector Double
matToStorable (Mat r c fp) = VS.unsafeFromForeignPtr0 fp (r * c)

-- | The length and storage of the elements, copied into fresh storage when
-- they are not aligned for a 'Double'.
aligned :: VS.Vector Double -> (Int, ForeignPtr Double)
aligned v
  | misaligned = (n, unsafeDupablePerformIO (newBuf n copy))
  | otherwise = (n, fp)
  where
    (fp, n) = VS.unsafeToForeignPtr0 v
    -- only the address is read, never the memory behind it
    misaligned = ptrToWordPtr (unsafeForeignPtrToPtr fp) `mod` fromIntegral (alignment (0 :: Double)) /= 0
    copy dst = withForeignPtr fp $ \src -> copyBytes dst src (n * sizeOf (0 :: Double))
