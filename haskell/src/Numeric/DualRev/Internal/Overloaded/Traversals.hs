{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- The walks over a user's container that a differentiation of the
-- overloaded mode makes: counting its scalars, numbering them (the inputs,
-- the gradient put back) and filling a shape with results.  They run on
-- every call, over every scalar, so each is a traversal with an applicative
-- that GHC compiles to a loop (no thunk, no boxed counter per element).
module Numeric.DualRev.Internal.Overloaded.Traversals
  ( count, mapIndexed, fill
  ) where

import Control.Applicative (liftA2)
import Control.Exception (throwIO)
import Data.IORef (newIORef, readIORef, writeIORef)
import GHC.Exts (Int (..), Int#, (+#))
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Run.Scalar.AD (DualRevError (..))


-- | The values put back into the shape of a container (as many as it has
-- elements, left to right).
fill :: Traversable f => f b -> [c] -> f c
fill shape xs = unsafeDupablePerformIO $ do
  ref <- newIORef xs
  traverse (\_ -> do
              r <- readIORef ref
              case r of
                y : ys -> writeIORef ref ys >> pure y
                [] -> throwIO (DualRevError "dualrev: a container has more elements than its results"))
           shape
{-# INLINE fill #-}

-- | A container mapped with each element's index (left to right), each
-- result evaluated as the traversal reaches it.  The counter is an unboxed
-- state threaded through the traversal: mapAccumL's lazy state costs a few
-- thunks per element and an IORef a boxed Int per element, which for
-- inputs of thousands of scalars was most of a gradient's allocation.
mapIndexed :: Traversable f => f b -> (Int -> b -> c) -> f c
mapIndexed xs h = case traverse step xs of
  Indexed run -> case run 0# of (# _, ys #) -> ys
  where
    step x = Indexed (\j -> case h (I# j) x of !y -> (# j +# 1#, y #))
{-# INLINE mapIndexed #-}

-- | The number of elements: a traversal that only counts, which GHC turns
-- into a loop without allocation ('length' goes through foldr, a thunk and
-- an unknown call per element).
count :: Traversable f => f b -> Int
count xs = case traverse (\_ -> Count (+# 1#)) xs of Count run -> I# (run 0#)
{-# INLINE count #-}

-- | A count threaded through a traversal (no results).
newtype Count a = Count (Int# -> Int#)

instance Functor Count where
  fmap _ (Count m) = Count m
  {-# INLINE fmap #-}

instance Applicative Count where
  pure _ = Count (\i -> i)
  Count a <*> Count b = Count (\i -> b (a i))
  liftA2 _ (Count a) (Count b) = Count (\i -> b (a i))
  {-# INLINE pure #-}
  {-# INLINE (<*>) #-}
  {-# INLINE liftA2 #-}

-- | A state of one unboxed counter.
newtype Indexed a = Indexed (Int# -> (# Int#, a #))

instance Functor Indexed where
  fmap f (Indexed m) = Indexed (\i -> case m i of (# j, a #) -> (# j, f a #))
  {-# INLINE fmap #-}

instance Applicative Indexed where
  pure a = Indexed (\i -> (# i, a #))
  Indexed mf <*> Indexed ma = Indexed (\i -> case mf i of
    (# j, f #) -> case ma j of (# k, a #) -> (# k, f a #))
  liftA2 f (Indexed ma) (Indexed mb) = Indexed (\i -> case ma i of
    (# j, a #) -> case mb j of (# k, b #) -> (# k, f a b #))
  {-# INLINE pure #-}
  {-# INLINE (<*>) #-}
  {-# INLINE liftA2 #-}
