{-# LANGUAGE FlexibleInstances #-}
{-# OPTIONS_GHC -Wno-simplifiable-class-constraints #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The tape that ordinary Haskell code records on.
--
-- Code inside a differentiable block passes the tape along in 'AD'.  Code
-- outside any block (a polymorphic helper such as @norm :: Floating a => [a]
-- -> a@ called at the dual scalar, or the methods of a standard class
-- instantiated for a user type) sees only values; its arithmetic on dual
-- numbers records on the tape its calling thread has registered here, for
-- as long as the block's code waits for its result.
module Numeric.DualRev.Internal.Run.Driver.Current
  ( recordingOn
  , onTape
  , outsideD
  , Force (..)
  ) where

import Control.Concurrent (ThreadId, myThreadId)
import Control.Exception (evaluate, finally, throwIO)
import Control.Monad (join)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef, writeIORef)
import qualified Data.Map as M
import Foreign.Ptr (Ptr)
import System.IO.Unsafe (unsafeInterleaveIO, unsafePerformIO)

import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..), D (..), DualRevError (..))
import Numeric.DualRev.Internal.Engine.FFI (CTape, c_fe_pause, c_lazy_note)

current :: IORef (M.Map ThreadId (Ptr CTape))
current = unsafePerformIO (newIORef M.empty)
{-# NOINLINE current #-}

-- | Run with the calling thread recording on t (restoring what it recorded
-- on before, so calls nest).
recordingOn :: Ptr CTape -> IO a -> IO a
recordingOn t io = do
  me <- myThreadId
  prev <- atomicModifyIORef' current (\m -> (M.insert me t m, M.lookup me m))
  io `finally` atomicModifyIORef' current (\m -> (M.alter (const prev) me m, ()))

currentTape :: IO (Ptr CTape)
currentTape = do
  me <- myThreadId
  m <- readIORef current
  case M.lookup me m of
    Just t -> pure t
    Nothing -> throwIO (DualRevError
      "dualrev: arithmetic on a dual number outside differentiable code (a lazy result of a \
      \function defined outside any block was demanded after the block's code returned)")

-- | The value of a recording computation, on the calling thread's tape.
-- The tape is looked up only if the computation records (on constants it
-- does not).
--
-- The lookup is a lazy IO action of each call (unsafeInterleaveIO): as a
-- pure @unsafePerformIO currentTape@ it does not depend on @m@, so GHC may
-- float it out and keep the first tape it saw for every later call.  The
-- value may be shared and first demanded inside the operand of a
-- comparison ('unrecordedD'): the lookup resumes recording, and the
-- pause is restored after.
onTape :: AD a -> a
onTape m = unsafePerformIO $ do
  resume <- newIORef (pure ())
  t <- unsafeInterleaveIO $ do
    c_lazy_note
    t <- currentTape
    was <- c_fe_pause t 0
    writeIORef resume (() <$ c_fe_pause t was)
    pure t
  r <- unAD m t
  join (readIORef resume)
  pure r
{-# NOINLINE onTape #-}

-- | The result of code outside any block, recorded on t: evaluated far
-- enough that what it records is on the tape before the block goes on.
outsideD :: Force a => a -> AD a
outsideD x = AD (\t -> recordingOn t (force x >> pure x))

-- | How far a result from outside is evaluated: dual numbers and the lists,
-- tuples and Maybes holding them completely, anything else to weak head
-- normal form.
class Force a where
  force :: a -> IO ()

instance {-# INCOHERENT #-} Force a where
  force x = () <$ evaluate x
instance Force D where
  force x = () <$ evaluate x
instance Force a => Force [a] where
  force = mapM_ force
instance Force a => Force (Maybe a) where
  force = mapM_ force
instance (Force a, Force b) => Force (a, b) where
  force (a, b) = force a >> force b
instance (Force a, Force b, Force c) => Force (a, b, c) where
  force (a, b, c) = force a >> force b >> force c
