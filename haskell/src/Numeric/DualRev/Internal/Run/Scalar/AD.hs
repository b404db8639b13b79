{-# LANGUAGE BangPatterns #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The forward-pass monad and the dual scalar.
--
-- 'AD' is a reader over 'IO' holding the C tape, so GHC compiles it to plain
-- state-token passing.  'D' is a dual number: a value and the id of the tape
-- node that produced it (-1 for constants, which are not on the tape).
module Numeric.DualRev.Internal.Run.Scalar.AD
  ( AD (..)
  , D (..)
  , constD, primalD, idD, maxBy, minBy, isNaND
  , rec1, rec2, recordN
  , DualRevError (..)
  , checkTape
  , unrecordedD, recordingResumed
  ) where

import Control.Exception (Exception, throwIO)
import Control.Monad (ap, liftM)
import Data.Int (Int64)
import Foreign.C.String (peekCString)
import Foreign.Marshal.Alloc (allocaBytes)
import Foreign.Ptr (Ptr, plusPtr)
import Foreign.Storable (pokeByteOff)

import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Run.Driver.Guard

-- | The forward pass: reads the tape, performs the recording in 'IO'.
newtype AD a = AD { unAD :: Ptr CTape -> IO a }

instance Functor AD where
  fmap = liftM
  {-# INLINE fmap #-}

instance Applicative AD where
  pure x = AD (\_ -> pure x)
  {-# INLINE pure #-}
  (<*>) = ap
  {-# INLINE (<*>) #-}

instance Monad AD where
  AD m >>= k = AD (\t -> m t >>= \x -> unAD (k x) t)
  {-# INLINE (>>=) #-}

-- | A dual number: primal value and tape node id (-1: a constant).
data D = D {-# UNPACK #-} !Double {-# UNPACK #-} !Int64

constD :: Double -> D
constD x = D x (-1)
{-# INLINE constD #-}

primalD :: D -> Double
primalD (D x _) = x
{-# INLINE primalD #-}

idD :: D -> Int64
idD (D _ i) = i
{-# INLINE idD #-}

-- | Result v of a one-argument operation with partial d.
rec1 :: Double -> D -> Double -> AD D
rec1 !v (D _ i) d
  | i == -1 = pure (D v (-1))
  | otherwise = AD (\t -> D v <$> c_record1 t i d)
{-# INLINE rec1 #-}

-- | Result v of a two-argument operation with partials di, dj.
rec2 :: Double -> D -> Double -> D -> Double -> AD D
rec2 !v (D _ i) di (D _ j) dj
  | i == -1 = if j == -1 then pure (D v (-1)) else AD (\t -> D v <$> c_record1 t j dj)
  | j == -1 = AD (\t -> D v <$> c_record1 t i di)
  | otherwise = AD (\t -> D v <$> c_record2 t i di j dj)
{-# INLINE rec2 #-}

-- | Result v of an operation on many arguments: (argument, partial) pairs;
-- constants among them are dropped.  One tape node however many there are.
recordN :: Double -> [(D, Double)] -> AD D
recordN !v args = case [(i, d) | (D _ i, d) <- args, i /= -1] of
  [] -> pure (D v (-1))
  [(i, d)] -> AD (\t -> D v <$> c_record1 t i d)
  [(i, di), (j, dj)] -> AD (\t -> D v <$> c_record2 t i di j dj)
  act -> AD $ \t -> do
    let n = length act
    allocaBytes (16 * n) $ \buf -> do
      let ids = buf
          ps = buf `plusPtr` (8 * n) :: Ptr Double
          fill !_ [] = pure ()
          fill !k ((i, d) : rest) = do
            pokeByteOff ids (8 * k) i
            pokeByteOff ps (8 * k) d
            fill (k + 1) rest
      fill 0 act
      D v <$> c_recordn t (fromIntegral n) ids ps

-- | Comparisons look at values only (in a taped recording each is also a
-- guard, "Numeric.DualRev.Internal.Run.Driver.Guard").
instance Eq D where
  D x i == D y j = guardRaw gEq x i y j (x == y)
  D x i /= D y j = guardRaw gNe x i y j (x /= y)
  {-# INLINE (==) #-}
  {-# INLINE (/=) #-}

-- | Comparisons look at values only; 'max' and 'min' return one of their
-- arguments whole, so the derivative goes to the one chosen.  They choose
-- as the C engine's dr_max and dr_min do (C's fmax and fmin; a tie chooses
-- the first argument, a NaN the other one), so that both give a program
-- the same derivative.  'compare' asks what Double's asks, in its order
-- (less, then equal), so a taped recording guards just those.
instance Ord D where
  compare a b
    | a < b = LT
    | a == b = EQ
    | otherwise = GT
  D x i < D y j = guardRaw gLt x i y j (x < y)
  D x i <= D y j = guardRaw gLe x i y j (x <= y)
  D x i > D y j = guardRaw gGt x i y j (x > y)
  D x i >= D y j = guardRaw gGe x i y j (x >= y)
  max a b = if b > a || isNaND a then b else a
  min a b = if b < a || isNaND a then b else a
  {-# INLINE compare #-}
  {-# INLINE (<) #-}
  {-# INLINE (<=) #-}
  {-# INLINE (>) #-}
  {-# INLINE (>=) #-}
  {-# INLINE max #-}
  {-# INLINE min #-}

-- | Whether a dual number is a NaN (a guard in a taped recording).
isNaND :: D -> Bool
isNaND (D x i) = guardRaw gIsNaN x i 0 (-1) (isNaN x)
{-# INLINE isNaND #-}

-- | 'max' and 'min' of a differentiable scalar with the given value: one
-- argument whole, chosen as dr_max and dr_min choose (C's fmax and fmin; a
-- tie the first argument, a NaN the other one), so that the derivative goes
-- where the engine sends it.
maxBy, minBy :: (a -> Double) -> a -> a -> a
maxBy value a b = if value b > value a || isNaN (value a) then b else a
minBy value a b = if value b < value a || isNaN (value a) then b else a
{-# INLINE maxBy #-}
{-# INLINE minBy #-}

instance Show D where
  showsPrec p (D x _) = showsPrec p x

-- | An error reported by the C engine (out of memory, arrays of mismatched
-- shapes, ...) or found by the wrappers (a cotangent shaped unlike the
-- output).  The message starts with @dualrev:@.
--
-- > r <- try (evaluate (vsum (vadd (vfromList [1, 2]) (vfromList [1, 2, 3]))))
-- > case r of
-- >   Left (DualRevError msg) -> putStrLn msg   -- names the shape mismatch
-- >   Right x -> print x
newtype DualRevError = DualRevError String
  deriving Show

instance Exception DualRevError

-- | Throw if the tape's sticky status is not OK.
checkTape :: Ptr CTape -> IO ()
checkTape t = do
  st <- c_tape_status t
  if st == 0
    then pure ()
    else do
      msg <- c_strerror st >>= peekCString
      throwIO (DualRevError ("dualrev: the tape reported: " ++ msg))

-- | An operand of a comparison, computed without recording its operations
-- (dr_fe_pause) where no guard is recorded: the comparison takes only its
-- value, and no replay checks the outcome again, so a convergence test's
-- norm or a line search's compared values need no nodes.  While any thread
-- records guards (a taped function's first call), it records as usual, so
-- that its guards have the nodes a replay checks them on.  What must be
-- recorded whatever the operand is (a nested derivative, a value computed
-- when first demanded, which other code may share) resumes recording
-- itself ('recordingResumed').
unrecordedD :: AD a -> AD a
unrecordedD m = AD $ \t -> do
  g <- guardsAnywhere
  if g then unAD m t else do
    was <- c_fe_pause t 1
    r <- unAD m t
    _ <- c_fe_pause t was
    pure r

-- | Run with the front end's recording on handle t resumed, paused again
-- after where it was ('unrecordedD').
recordingResumed :: Ptr CTape -> IO a -> IO a
recordingResumed t io = do
  was <- c_fe_pause t 0
  r <- io
  _ <- c_fe_pause t was
  pure r
{-# INLINE recordingResumed #-}
