{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Taped gradients ('Numeric.DualRev.tapedGrad', and 'Numeric.DualRev.tapedJacobian'
-- and 'Numeric.DualRev.tapedHvp' the same way): a function recorded once,
-- on a tape of its own at order 2, and replayed by the engine at later
-- inputs (include/dualrev.h, \"replay\") instead of running its Haskell
-- code again.  A call replays when its input has the recorded one's
-- discrete structure (the same number of scalars and, the scalars aside,
-- equal to it) and no guard flips (every comparison and discrete result of
-- a dual number the recording computed, "Numeric.DualRev.Internal.Run.Driver.Guard");
-- otherwise it records the function again at the new input and keeps that
-- tape.  A function whose tape cannot be replayed (it holds nodes the
-- engine cannot evaluate: custom rules without a replay, nested
-- derivatives) is recorded at every call, at order 1 (2 for 'tapedHvpRun',
-- whose result is a second derivative).  The input's arrays
-- are array input nodes ('tapedGradRun').
--
-- The state is one tape, with a buffer of the input's scalars that every
-- replay reuses, held in an 'IORef' that a call empties as it takes the
-- state (compare-and-swap) and fills again as it returns.  A call that
-- finds it empty (the function called from another thread at the same
-- moment, or never yet) records on a new tape instead of waiting, and
-- keeps it where no other call has put a state back by then.  A call that
-- an exception interrupts puts nothing back: its state (which the
-- exception may have left half recorded) is dropped, and the next call
-- records afresh.  So no call masks exceptions or installs a handler,
-- which were a fifth of a small taped call's time.
module Numeric.DualRev.Internal.Run.Driver.Taped
  ( tapedGradRun, tapedJacobianRun, tapedHvpRun
    -- * For tests
  , tapedRecordings, countRecording
  ) where

import Control.Exception (bracket)
import Control.Monad (forM, when)
import Data.Int (Int64)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef)
import Foreign.C.Types (CInt, CSize)
import Foreign.ForeignPtr (ForeignPtr, mallocForeignPtrArray, newForeignPtr, touchForeignPtr, withForeignPtr)
import Foreign.ForeignPtr.Unsafe (unsafeForeignPtrToPtr)
import Foreign.Marshal.Alloc (alloca, free)
import Foreign.Marshal.Array (advancePtr, allocaArray, mallocArray, pokeArray, withArray)
import Foreign.Ptr (Ptr, nullPtr, plusPtr)
import Foreign.Storable (peek)
import GHC.Exts (casMutVar#, readMutVar#)
import GHC.IO (IO (..))
import GHC.IORef (IORef (..))
import GHC.STRef (STRef (..))
import System.IO.Unsafe (unsafeDupablePerformIO, unsafePerformIO)

import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Engine.ReplayFFI (c_fe_programs, c_replay_range, c_taped_grad, c_taped_grad_arrays, c_taped_hvp, c_taped_hvp_arrays, c_taped_read_arrays, c_value)
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Driver.Fill (Buf (..), Fill, Lengths, Lent (..), Src (..), Take, lengthsAfter, lensOf, newLengths)
import Numeric.DualRev.Internal.Run.Driver.Flat
import Numeric.DualRev.Internal.Run.Driver.Guard (withGuards)
import Numeric.DualRev.Internal.Run.Control.Parallel (useCapabilities)
import Numeric.DualRev.Internal.Run.Driver.Runners (newTape)

-- | How many recordings taped functions have made (replays do not count):
-- what tests read to tell a replay from a recording.
recordings :: IORef Int
recordings = unsafePerformIO (newIORef 0)
{-# NOINLINE recordings #-}

tapedRecordings :: IO Int
tapedRecordings = readIORef recordings

-- | One more recording (the overloaded mode's taped gradients count too).
countRecording :: IO ()
countRecording = atomicModifyIORef' recordings (\k -> (k + 1, ()))

-- | A recording kept for replay; o is what the splice keeps of its output.
data Recorded a o = Recorded
  { rTape :: !(ForeignPtr CTape)
  , _rRecorded :: a
    -- ^ the input it was recorded at, kept alive with the tape: the tape
    -- borrows the memory of its 'Constant' arrays (constant array nodes),
    -- and reads them at every replay
  , rInput :: a
    -- ^ the input it was recorded at, then the input of the last replay
    -- (the same discrete structure): a part of a new input that is the
    -- object this one holds there needs no comparison ('fillLeaf'), as
    -- when a loop passes the same data at every call
  , rCount :: !Int       -- ^ its scalars, input nodes first .. first + n - 1
  , rFirst :: !Int64
  , rOut :: o            -- ^ the output as recorded
  , rReplays :: !Bool    -- ^ False: the engine cannot replay this function
  , rBuf :: !(ForeignPtr Double)
    -- ^ a replay's scalars (rCount of them), and one more: where a replay
    -- writes the output's value (no allocation of its own a call)
  , rLent :: [Lent]
    -- ^ the arrays of the input of the last replay, whose memory the tape
    -- reads (array input nodes borrow it, 'tapedGradRun'): kept alive with
    -- the tape.  Until the first replay, the recorded input's: rInput's.
  , rLens :: !Lengths
    -- ^ the lengths of rInput's lists of Double, once a replay's walk has
    -- counted them ('Lengths'); none known before
  }

-- | What a taped splice does besides the shared state machine of 'taped':
-- record at an input (on a cleared tape of the right order: the number of
-- scalars, the first input's id, what to keep of the output), compute the
-- result on the tape just recorded, and replay at the scalars in a buffer
-- and compute the result (an engine status where that fails: 7, a guard
-- flipped; another, the tape cannot be replayed), given the lengths of the
-- new input's lists of Double ('Lengths').  A splice whose replay
-- reads the input's arrays in place (sLends) has them lent by the walk of
-- the new input rather than copied into the buffer.  e is a second
-- argument the result takes besides the input (a direction), which plays
-- no part in what is recorded.
data Splice a e o r = Splice
  { sRecord :: Ptr CTape -> a -> IO (Int, Int64, o)
  , sResult :: Ptr CTape -> Recorded a o -> a -> e -> IO r
  , sLends :: o -> Bool
    -- ^ whether the recorded output says the input's arrays are lent
  , sReplay :: Ptr CTape -> Recorded a o -> a -> e -> Ptr Double -> [Lent] -> Lengths -> IO (Either CInt r)
  , sOrder :: CInt
    -- ^ the order a recording that cannot be replayed is made at: 2 where
    -- the result is a second derivative
  }

-- | A taped function (see the module's description).  @fill@ writes a new
-- input's scalars where the recorded input's discrete structure is the new
-- one's ("Numeric.DualRev.Internal.Run.Driver.Fill").  Each application of
-- @taped@ is one taped function with a state of its own.
taped :: Fill a -> Splice a e o r -> a -> e -> r
{-# NOINLINE taped #-}
taped fill sp = unsafePerformIO $ do
  st <- newIORef Nothing
  pure (\x e -> unsafeDupablePerformIO (call st x e))
  where
    call st x e = do
      held <- takeState st
      (s', r) <- step held x e
      putState st s'
      pure r

    step Nothing x e = do
      fp <- tapeOfOwn
      recordAt fp True x e
    step (Just rec) x e
      | not (rReplays rec) = recordAt (rTape rec) False x e
      | otherwise = do
          let n = rCount rec
          lends <- if sLends sp (rOut rec) then Just <$> newIORef [] else pure Nothing
          lens <- lensOf (rLens rec)
          withForeignPtr (rBuf rec) $ \p -> do
            k <- fill (rInput rec) x (Buf p n lends lens) 0
            lent <- maybe (pure []) (fmap reverse . readIORef) lends
            if k /= n
              then recordAt (rTape rec) True x e  -- another shape
              else do
                ls <- lengthsAfter lens
                r <- withForeignPtr (rTape rec) $ \t -> sReplay sp t rec x e p lent ls
                case r of
                  -- (built now: a thunk of it, forced at the next call,
                  -- is one more allocation a call)
                  Right v -> let !rec' = rec { rLent = lent, rInput = x, rLens = ls } in pure (rec', v)
                  Left 7 -> recordAt (rTape rec) True x e   -- a guard flipped
                  Left _ -> recordAt (rTape rec) False x e  -- cannot replay

    -- a tape set up for the capabilities, as a pooled one: the jobs of
    -- (|*|) replay side by side
    tapeOfOwn = do
      t <- newTape
      useCapabilities t
      newForeignPtr p_tape_free t

    -- record at x (for replay: at order 2, guards on)
    recordAt fp replayable x e = withForeignPtr fp $ \t -> do
      countRecording
      engine "dr_tape_clear" (c_tape_clear t)
      engine "dr_tape_set_order" (c_tape_set_order t (if replayable then 2 else sOrder sp))
      -- statements as one node each, which replays (cbits/record/program.h);
      -- not for a second derivative: a sum of products recorded so (one
      -- statement a batch) has no second-order rule, its operations do
      engine "dr_fe_programs" (c_fe_programs t (if replayable && sOrder sp == 1 then 1 else 0))
      (n, first, o) <- (if replayable then withGuards t else id) (sRecord sp t x)
      -- the recorded input is kept, as it is, for the shape of later
      -- ones: a part of a later input that is the same object needs no
      -- comparison ('fillLeaf'; a copy in a compact region, which the
      -- collector would not copy at its major collections, measured no
      -- faster and would make every part another object)
      buf <- mallocForeignPtrArray (if replayable then n + 1 else 1)
      none <- newLengths
      let rec0 = Recorded fp x x n first o replayable buf [] none
      r <- sResult sp t rec0 x e
      pure (rec0, r)

-- | The state, taken out of its reference (left empty) where it is there
-- and no other call takes it at the same moment.
takeState :: IORef (Maybe s) -> IO (Maybe s)
takeState (IORef (STRef ref)) = IO $ \s0 -> case readMutVar# ref s0 of
  (# s1, cur #) -> case cur of
    Nothing -> (# s1, Nothing #)
    Just _ -> case casMutVar# ref cur Nothing s1 of
      (# s2, 0#, _ #) -> (# s2, cur #)
      (# s2, _, _ #) -> (# s2, Nothing #)

-- | A state put back, where the reference is still empty (another call
-- may have put its own back first: that one stays).
putState :: IORef (Maybe s) -> s -> IO ()
putState (IORef (STRef ref)) new = IO $ \s0 -> case readMutVar# ref s0 of
  (# s1, cur #) -> case cur of
    Nothing -> case casMutVar# ref cur (Just new) s1 of
      (# s2, _, _ #) -> (# s2, () #)
    Just _ -> (# s1, () #)

-- | Value and gradient of a function to Double, recorded once and replayed.
-- A @Vec@ or @Mat@ of the input is an array input node that borrows its
-- memory ('recordArrays'); at a replay it borrows the new input's instead
-- (lent by the walk), and its gradient is written into the result's new
-- array (hs_taped.c): no copy of an input array, one of its gradient.
tapedGradRun :: Fill a -> Take a -> Trav a -> (Supply -> a -> IO a') -> (a' -> AD D)
             -> a -> (Double, a)
tapedGradRun fill tk trav ins f = flip (taped fill (Splice rec result (not . null . snd) replay 1)) ()
  where
    rec t x = do
      (n, first, y, arrs) <- recordArrays trav ins f t x
      pure (n, first, (y, arrs))
    result t r x () = (,) (primalD (fst (rOut r))) <$> gradientAt t (rOut r) (rFirst r) x (rCount r) (rLens r)
    replay t r x () p lent lens = do
      let (D y0 yi, arrs) = rOut r
          n = rCount r
          pv = p `advancePtr` n
      grads <- gradArrays arrs
      -- replay and sweep in one call where it may be unsafe
      quick <- if null arrs
        then c_taped_grad t (rFirst r) (fromIntegral n) p yi pv p
        else do
          when ([k | (_, k, _) <- arrs] /= [k | Lent k _ _ <- lent]) $
            ioError (userError "dualrev: internal error: a taped input's arrays are not those recorded")
          withArrayNodes arrs grads $ \m pids poffs _ pouts -> withArray (ptrs lent) $ \pins ->
            c_taped_grad_arrays t (rFirst r) (fromIntegral n) p m pids poffs pins pouts yi pv p
            <* touchLent lent
      if quick == 0
        then do
          yv <- if yi == -1 then pure y0 else peek pv
          Right . (,) yv <$> readBackWith grads lens tk x p
        else if quick /= -1 then pure (Left quick)
        else do
          st <- c_replay_range t (rFirst r) (fromIntegral n) p
          if st /= 0 then pure (Left st) else do
            yv <- valueOf t (fst (rOut r))
            Right . (,) yv <$> gradientAt t (rOut r) (rFirst r) x n lens
    gradientAt t (D _ yi, arrs) first x n lens = do
      engine "dr_adjoints_clear" (c_adjoints_clear t)
      when (yi /= -1) $ do
        engine "dr_seed" (c_seed t yi 1)
        engine "dr_reverse" (c_reverse t)
      grads <- gradArrays arrs
      allocaArray (max 1 n) $ \p -> do
        engine "drhs_taped_read_arrays" $ withArrayNodes arrs grads $ \m pids poffs plens pouts ->
          c_taped_read_arrays t first (fromIntegral n) m pids poffs plens pouts yi p
        readBackWith grads lens tk x p

-- | The new arrays of a gradient, one for each array of the input (node,
-- offset, length), at its offset.
gradArrays :: [(Int64, Int, Int)] -> IO [Lent]
gradArrays arrs = forM arrs $ \(_, k, len) -> Lent k len <$> mallocForeignPtrArray len

-- | The arrays' nodes, offsets and lengths and the gradient arrays'
-- memory, as hs_taped.c takes them (the gradient arrays kept alive).
withArrayNodes :: [(Int64, Int, Int)] -> [Lent]
               -> (CSize -> Ptr Int64 -> Ptr CSize -> Ptr CSize -> Ptr (Ptr Double) -> IO b) -> IO b
withArrayNodes arrs grads act =
  withArray [i | (i, _, _) <- arrs] $ \pids ->
    withArray [fromIntegral k | (_, k, _) <- arrs] $ \poffs ->
      withArray [fromIntegral len | (_, _, len) <- arrs] $ \plens ->
        withArray (ptrs grads) $ \pouts ->
          act (fromIntegral (length arrs)) pids poffs plens pouts <* touchLent grads

ptrs :: [Lent] -> [Ptr Double]
ptrs ls = [unsafeForeignPtrToPtr m | Lent _ _ m <- ls]

touchLent :: [Lent] -> IO ()
touchLent = mapM_ (\(Lent _ _ m) -> touchForeignPtr m)

-- | The Jacobian of a function, one row per scalar of its output, each
-- shaped like the input (as 'Numeric.DualRev.jacobian'), recorded once and
-- replayed.
tapedJacobianRun :: Fill a -> Take a -> Trav a -> (Supply -> a -> IO a')
                 -> (Ptr CTape -> b' -> [R] -> IO [R]) -> (a' -> AD b') -> a -> [a]
tapedJacobianRun fill tk trav ins outs f = flip (taped fill (Splice rec result (const False) replay 1)) ()
  where
    rec t x = do
      (n, first, y') <- record trav ins f t x
      yr <- outs t y' []
      pure (n, first, yr)
    result t r x () = rows t (rOut r) (rFirst r) (rCount r) x (rLens r)
    replay t r x () p _ lens = do
      st <- c_replay_range t (rFirst r) (fromIntegral (rCount r)) p
      if st /= 0 then pure (Left st) else Right <$> rows t (rOut r) (rFirst r) (rCount r) x lens
    rows t yr first n x lens =
      withReals yr $ \cm py -> allocaArray (max 1 (fromIntegral cm * n)) $ \p -> do
        engine "dr_jacobian" $ quickOrSafe (c_jacobian_range_quick t cm py first (fromIntegral n) p)
                                           (c_jacobian_range_safe t cm py first (fromIntegral n) p)
        forM [0 .. fromIntegral cm - 1] $ \k -> readBackWith [] lens tk x (p `plusPtr` (8 * k * n))

-- | The product of the Hessian of a function to Double with a direction,
-- both shaped like the input, recorded once and replayed: one replay and
-- one product (dr_hvp) a call, in one foreign call.  A @Vec@ or @Mat@ of
-- the input is an array input node, as in 'tapedGradRun', whose part of
-- the direction is its tangent seed.  The direction is read by the fill
-- walk against the input where it has the input's discrete parts (as one
-- made from the input has), else by the flat walk, as
-- 'Numeric.DualRev.jvp' reads one.
tapedHvpRun :: Fill a -> Take a -> Trav a -> (Supply -> a -> IO a') -> (a' -> AD D)
            -> a -> a -> a
tapedHvpRun fill tk trav ins f = taped fill (Splice rec result (not . null . snd) replay 2)
  where
    rec t x = do
      (n, first, y, arrs) <- recordArrays trav ins f t x
      pure (n, first, (y, arrs))
    result t r x v = along r x v (rLens r) $ \pv po -> do
      engine "dr_hvp" (hvpAt t r nullPtr [] pv po)
      readBackWith [] (rLens r) tk x po
    replay t r x v p lent lens = along r x v lens $ \pv po -> do
      st <- hvpAt t r p lent pv po
      if st /= 0 then pure (Left st) else Right <$> readBackWith [] lens tk x po
    -- replay at p (null: none) with the arrays lent, and the product
    hvpAt t r p lent pv po = case rOut r of
      (D _ yi, []) -> c_taped_hvp t (rFirst r) (fromIntegral (rCount r)) p yi pv po
      (D _ yi, arrs) -> do
        when (p /= nullPtr && [k | (_, k, _) <- arrs] /= [k | Lent k _ _ <- lent]) $
          ioError (userError "dualrev: internal error: a taped input's arrays are not those recorded")
        withArray [i | (i, _, _) <- arrs] $ \pids ->
          withArray [fromIntegral k | (_, k, _) <- arrs] $ \poffs ->
            withArray (ptrs lent) $ \pins ->
              c_taped_hvp_arrays t (rFirst r) (fromIntegral (rCount r)) p (fromIntegral (length arrs))
                                 pids poffs pins yi pv po
              <* touchLent lent
    -- the direction's scalars in a buffer (its arrays copied in), and
    -- room for the product: C's memory, not the collector's (which a
    -- network's weights, megabytes a call, would make collect at every call)
    along r x v lens act = do
      let n = rCount r
      bracket (mallocArray (2 * max 1 n)) free $ \pv -> let po = pv `advancePtr` max 1 n in do
        l <- lensOf lens
        k <- fill x v (Buf pv n Nothing l) 0
        when (k /= n) $ directionOf trav n v >>= pokeArray pv
        act pv po

-- | A result shaped like x, from the buffer, with its arrays already
-- written (by offset, increasing), given the lengths of x's lists of
-- Double where they are known ('Lengths').
readBackWith :: [Lent] -> Lengths -> Take a -> a -> Ptr Double -> IO a
readBackWith made lens tk x p = do
  c <- newCounter
  ref <- newIORef made
  l <- lensOf lens
  tk x (Src p c ref l)

valueOf :: Ptr CTape -> D -> IO Double
valueOf _ (D v (-1)) = pure v
valueOf t (D _ i) = alloca $ \p -> do
  engine "dr_value" (c_value t i p :: IO CInt)
  peek p
