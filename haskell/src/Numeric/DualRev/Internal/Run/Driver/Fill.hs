{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The walk of a taped function's input ("Numeric.DualRev.Internal.Run.Driver.Taped"):
-- in one pass over the recorded input and a new one side by side, the new
-- input's scalars are written to a buffer in the order of the flat walks
-- ('Numeric.DualRev.Internal.Run.Flat.Trav'), and its discrete parts (list
-- lengths, constructors, every part without a Double inside, by '=='; the
-- Doubles of a 'Constant' by their bits) are checked against the recorded
-- input's (from the first replay on, the last replay's input, which has the
-- same shape).  A part without a Double inside, or the data of a
-- 'Constant', that is the very object the last call's input holds there (a
-- data set passed again at every step of a loop) is equal without a walk.
-- Any difference, or more scalars than the buffer holds, answers -1: the
-- new input has another shape and the function must be recorded again.
--
-- A @Vec@ or @Mat@ is either copied into the buffer, or lent: its memory
-- noted with its offset, its part of the buffer left unwritten, for a
-- replay that reads the arrays where they are (a taped gradient's array
-- input nodes).  A result's arrays likewise: read from the buffer, or
-- already written where the source says.
module Numeric.DualRev.Internal.Run.Driver.Fill
  ( Fill, Buf (..), Lent (..)
  , Lens (..), Lengths, newLengths, lensOf, lengthsAfter
  , fillD, fillLeaf, fillConstant, fillList, fillDoubles, fillVec, fillMat
  , fillVecData, fillMatData, fillDoubleBits, fillDoublesBits, fillSame
    -- * Reading a result back
  , Take, Src (..)
  , takeD, takeLeaf, takeList, takeDoubles, takeVec, takeMat
  ) where

import Control.Monad (when)
import Data.IORef (IORef, modifyIORef', newIORef, readIORef, writeIORef)
import GHC.Exts (Int (..), MutableByteArray#, RealWorld, copyMutableByteArray#, getSizeofMutableByteArray#,
                 isTrue#, newByteArray#, readIntArray#, reallyUnsafePtrEquality#, writeIntArray#, (*#))
import GHC.Float (castDoubleToWord64)
import GHC.IO (IO (..))
import Foreign.ForeignPtr (ForeignPtr, withForeignPtr)
import Foreign.Marshal.Utils (copyBytes)
import Foreign.Ptr (Ptr, plusPtr)
import Foreign.Storable (peekElemOff, pokeElemOff)

import Numeric.DualRev.Internal.Engine.ReplayFFI (c_memcmp)
import Numeric.DualRev.Internal.Run.Array.Data
import Numeric.DualRev.Internal.Run.Driver.Constant (Constant (..))
import Numeric.DualRev.Internal.Run.Driver.Flat (Counter, newCounter, tick, tickBy)

-- | The buffer of the scalars, its capacity, where the input's arrays go
-- (into the buffer: Nothing; or noted, last first), and the lengths of its
-- lists of Double.
data Buf = Buf !(Ptr Double) !Int !(Maybe (IORef [Lent])) !Lens

-- | The lengths of an input's lists of Double, by their place in the walk
-- (the first met, the second, ...), and how many of them are known: those
-- of the input the last call was given, or none.  A list's length known,
-- only the new list is walked, and the result shaped like it is built
-- without walking it again ('takeDoubles'): walking a list is a chain of
-- loads, each waiting for the one before, and took a fifth of a taped call
-- of fneural (ten thousand weights in 153 lists) for each walk saved.
-- Unboxed, written in place: nothing is allocated for a list whose length
-- is known, so that many short lists cost no more than before.
data Lengths = Lengths !Int !Ints

data Ints = Ints (MutableByteArray# RealWorld)

-- | None known.
newLengths :: IO Lengths
newLengths = Lengths 0 <$> newInts 16

newInts :: Int -> IO Ints
newInts (I# n) = IO $ \st -> case newByteArray# (n *# 8#) st of
  (# st1, a #) -> (# st1, Ints a #)

readInts :: Ints -> Int -> IO Int
readInts (Ints a) (I# i) = IO $ \st -> case readIntArray# a i st of
  (# st1, v #) -> (# st1, I# v #)

-- | Written at i, in the same store or, where it is full, a copy twice its
-- size.
writeInts :: Ints -> Int -> Int -> IO Ints
writeInts is@(Ints a) i v = do
  cap <- sizeInts is
  is'@(Ints b) <- if i < cap then pure is else do
    new@(Ints b0) <- newInts (2 * max i cap)
    IO $ \st -> case copyMutableByteArray# a 0# b0 0# (case cap of I# c -> c *# 8#) st of
      st1 -> (# st1, () #)
    pure new
  case (i, v) of
    (I# i', I# v') -> IO $ \st -> case writeIntArray# b i' v' st of st1 -> (# st1, () #)
  pure is'

sizeInts :: Ints -> IO Int
sizeInts (Ints a) = IO $ \st -> case getSizeofMutableByteArray# a st of
  (# st1, n #) -> (# st1, I# n `quot` 8 #)

-- | The walk's view of the lengths: the next list's place, how many are
-- known, and the store (replaced where it grows).
data Lens = Lens !Counter !Int !(IORef Ints)

lensOf :: Lengths -> IO Lens
lensOf (Lengths known is) = Lens <$> newCounter <*> pure known <*> newIORef is

-- | The lengths of every list the walk met, all known now.
lengthsAfter :: Lens -> IO Lengths
lengthsAfter (Lens c _ ref) = do
  n <- tickBy c 0
  is <- readIORef ref
  pure $! Lengths n is

-- | A non-empty array of an input or a result: its offset among the
-- scalars, its length and its memory.
data Lent = Lent !Int !Int !(ForeignPtr Double)

-- | recorded input, new input, buffer, next index: the index after the
-- new input's scalars, or -1 where the shapes differ (and once -1, -1).
type Fill a = a -> a -> Buf -> Int -> IO Int

fillD :: Fill Double
fillD _ x (Buf p cap _ _) k
  | k < 0 || k >= cap = pure (-1)
  | otherwise = k + 1 <$ pokeElemOff p k x
{-# INLINE fillD #-}

-- | A part without a Double inside: equal, or another shape.  The same
-- object is equal at once: comparing a data set of ten thousand points
-- with '==' was 30 % of a line fit's taped call.  (An object that '=='
-- would not find equal to itself, holding a NaN, is taken as equal: its
-- values are the ones the function was taped at.)
fillLeaf :: Eq a => Fill a
fillLeaf x0 x _ k = pure (if k >= 0 && (isTrue# (reallyUnsafePtrEquality# x0 x) || x0 == x) then k else -1)
{-# INLINE fillLeaf #-}

-- | An array of data (in a 'Constant'): the same shape and the same bits.
-- The tape reads the recorded array's memory at every replay (a constant
-- array node borrows it), so a copy is the same data where its bits are:
-- one holding 0 where the recorded array holds -0 is other data, though
-- '==' finds them equal, and one holding the same NaN is the same.  One
-- memcmp: '==' element by element took a third of a taped call of
-- GradBench's llsq (a 16 x 128 matrix of data).
fillVecData :: Fill Vec
fillVecData (Vec n0 fp0) (Vec n fp) _ k
  | k < 0 || n /= n0 = pure (-1)
  | otherwise = (\same -> if same then k else -1) <$> sameBits n fp0 fp

fillMatData :: Fill Mat
fillMatData (Mat r0 c0 fp0) (Mat r c fp) _ k
  | k < 0 || r /= r0 || c /= c0 = pure (-1)
  | otherwise = (\same -> if same then k else -1) <$> sameBits (r * c) fp0 fp

sameBits :: Int -> ForeignPtr Double -> ForeignPtr Double -> IO Bool
sameBits n fa fb
  | n <= 0 || fa == fb = pure True
  | otherwise = withForeignPtr fa $ \pa -> withForeignPtr fb $ \pb ->
      (== 0) <$> c_memcmp pa pb (fromIntegral (8 * n))

-- | A Double of data (in a 'Constant'): the same bits.  The tape holds the
-- recorded value, so 0 where -0 was recorded is other data (1 / c, atan2
-- tell them apart), though '==' finds them equal, and the same NaN is the
-- same data, though '==' finds it unequal to itself.
fillDoubleBits :: Fill Double
fillDoubleBits x0 x _ k = pure (if k >= 0 && sameDouble x0 x then k else -1)
{-# INLINE fillDoubleBits #-}

sameDouble :: Double -> Double -> Bool
sameDouble a b = castDoubleToWord64 a == castDoubleToWord64 b
{-# INLINE sameDouble #-}

-- | A list of Doubles of data: the same length and bits (the last call's
-- very object at once).
fillDoublesBits :: Fill [Double]
fillDoublesBits = fillSame (\x0 x _ k -> pure (if go x0 x then k else -1))
  where
    go (a : as) (b : bs) = sameDouble a b && go as bs
    go [] [] = True
    go _ _ = False

-- | A list of data holding Doubles walked by f, the last call's very
-- object at once.
fillSame :: Fill a -> Fill a
fillSame f x0 x b k
  | k < 0 = pure k
  | isTrue# (reallyUnsafePtrEquality# x0 x) = pure k
  | otherwise = f x0 x b k
{-# INLINE fillSame #-}

-- | The data in a 'Constant': its value's fill.
fillConstant :: Fill a -> Fill (Constant a)
fillConstant f (Constant a) (Constant b) = f a b
{-# INLINE fillConstant #-}

fillList :: Fill a -> Fill [a]
fillList f = go
  where
    go (a : as) (b : bs) buf k
      | k < 0 = pure k
      | otherwise = f a b buf k >>= go as bs buf
    go [] [] _ k = pure k
    go _ _ _ _ = pure (-1)
{-# INLINE fillList #-}

-- | A list of Double: a loop of stores, over the new list alone where the
-- length of the last call's list there is known.
fillDoubles :: Fill [Double]
fillDoubles x0 x (Buf p cap _ (Lens count known ref)) k
  | k < 0 = pure k
  | otherwise = do
      i <- tick count
      if i < known
        then do
          n <- readIORef ref >>= \is -> readInts is i
          if k + n <= cap then counted x k (k + n) else pure (-1)
        else do
          k' <- paired x0 x k
          when (k' >= 0) $ readIORef ref >>= \is -> writeInts is i (k' - k) >>= writeIORef ref
          pure k'
  where
    counted (b : bs) j end
      | j < end = pokeElemOff p j b >> counted bs (j + 1) end
    counted [] j end | j == end = pure j
    counted _ _ _ = pure (-1)
    paired (_ : as) (b : bs) j
      | j >= cap = pure (-1)
      | otherwise = pokeElemOff p j b >> paired as bs (j + 1)
    paired [] [] j = pure j
    paired _ _ _ = pure (-1)

fillVec :: Fill Vec
fillVec (Vec n0 _) (Vec n fp) buf k
  | n /= n0 = pure (-1)
  | otherwise = copyIn n fp buf k

fillMat :: Fill Mat
fillMat (Mat r0 c0 _) (Mat r c fp) buf k
  | r /= r0 || c /= c0 = pure (-1)
  | otherwise = copyIn (r * c) fp buf k

copyIn :: Int -> ForeignPtr Double -> Buf -> Int -> IO Int
copyIn n fp (Buf p cap lent _) k
  | k < 0 || k + n > cap = pure (-1)
  | Just ref <- lent, n > 0 = (k + n) <$ modifyIORef' ref (Lent k n fp :)
  | otherwise = withForeignPtr fp $ \src -> do
      copyBytes (p `plusPtr` (8 * k)) src (8 * n)
      pure (k + n)

------------------------------------------------------------------------------
-- Reading a result back

-- | A buffer of scalars read in order, the next one's index in a counter,
-- the result's arrays already written, by increasing offset (their part
-- of the buffer unused), and the lengths of the template's lists of
-- Double where its fill counted them ('Lens').
data Src = Src !(Ptr Double) !Counter !(IORef [Lent]) !Lens

-- | A value of the template's shape (its discrete parts kept) with its
-- scalars read in order from the source: a gradient shaped like the input.
-- Lists are built from their last element, without a stack that grows
-- with their length.
type Take a = a -> Src -> IO a

takeD :: Take Double
takeD _ (Src p c _ _) = tick c >>= peekElemOff p
{-# INLINE takeD #-}

takeLeaf :: Take a
takeLeaf x _ = pure x
{-# INLINE takeLeaf #-}

takeList :: Take a -> Take [a]
takeList f xs src = reverse <$> go xs []
  where
    go [] acc = pure acc
    go (a : as) acc = f a src >>= \b -> go as (b : acc)
{-# INLINE takeList #-}

-- | A list of Double: its length (the fill's count, or read off the
-- template), then the values.
takeDoubles :: Take [Double]
takeDoubles xs (Src p c _ (Lens count known ref)) = do
  l <- tick count
  n <- if l < known then readIORef ref >>= \is -> readInts is l else pure (length xs)
  k0 <- tickBy c n
  let go i acc
        | i < k0 = pure acc
        | otherwise = peekElemOff p i >>= \v -> go (i - 1) (v : acc)
  go (k0 + n - 1) []

takeVec :: Take Vec
takeVec (Vec n _) src = Vec n <$> takeArray n src

takeMat :: Take Mat
takeMat (Mat r cl _) src = Mat r cl <$> takeArray (r * cl) src

-- | The memory of the next n scalars: the array written there already, or a
-- copy of the buffer's part.
takeArray :: Int -> Src -> IO (ForeignPtr Double)
takeArray n (Src p c made _) = do
  k0 <- tickBy c n
  ms <- readIORef made
  case ms of
    Lent k _ fp : rest | k == k0 -> fp <$ writeIORef made rest
    _ -> newBuf n (\q -> copyBytes q (p `plusPtr` (8 * k0)) (8 * n))
