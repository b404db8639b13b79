{-# LANGUAGE BangPatterns #-}
-- | Dual versions of the higher-order Prelude functions.  A function value in
-- transformed code is a Kleisli arrow per argument (@a -> AD (b -> AD c)@),
-- exactly as the transformation of the function type prescribes.
--
-- Everything is strict (call-by-value), except 'iterateD', whose elements are
-- recorded on the tape when first demanded.
module Numeric.DualRev.Internal.Lists
  ( app2
  , mapD, zipWithD, zipWith3D
  , foldrD, foldlD, foldlD', foldr1D, foldl1D
  , concatMapD, iterateD, filterD, takeWhileD, dropWhileD, anyD, allD
  , scanlD, scanrD
  , flipD, curryD, uncurryD, maybeD, eitherD, composeD, applyD
  , headD, emptyListError, errorAD
  ) where

import Control.Exception (ErrorCall (..), throwIO)
import System.IO.Unsafe (unsafeInterleaveIO)

import Numeric.DualRev.Internal.AD
import Numeric.DualRev.Internal.Parallel (recordingHandle, rootHandle)

-- | Apply a two-argument function value.
app2 :: (a -> AD (b -> AD c)) -> a -> b -> AD c
app2 f x y = f x >>= \g -> g y
{-# INLINE app2 #-}

mapD :: (a -> AD b) -> [a] -> AD [b]
mapD f = go
  where go [] = pure []
        go (x : xs) = do { y <- f x; ys <- go xs; pure (y : ys) }
{-# INLINE mapD #-}

zipWithD :: (a -> AD (b -> AD c)) -> [a] -> [b] -> AD [c]
zipWithD f = go
  where go (x : xs) (y : ys) = do { z <- app2 f x y; zs <- go xs ys; pure (z : zs) }
        go _ _ = pure []
{-# INLINE zipWithD #-}

zipWith3D :: (a -> AD (b -> AD (c -> AD d))) -> [a] -> [b] -> [c] -> AD [d]
zipWith3D f = go
  where go (x : xs) (y : ys) (z : zs) = do
          g <- f x
          h <- g y
          w <- h z
          ws <- go xs ys zs
          pure (w : ws)
        go _ _ _ = pure []
{-# INLINE zipWith3D #-}

foldrD :: (a -> AD (b -> AD b)) -> b -> [a] -> AD b
foldrD f z = go
  where go [] = pure z
        go (x : xs) = go xs >>= app2 f x
{-# INLINE foldrD #-}

foldlD :: (b -> AD (a -> AD b)) -> b -> [a] -> AD b
foldlD f = go
  where go !acc [] = pure acc
        go !acc (x : xs) = app2 f acc x >>= \acc' -> go acc' xs
{-# INLINE foldlD #-}

-- | Under call-by-value foldl and foldl' coincide.
foldlD' :: (b -> AD (a -> AD b)) -> b -> [a] -> AD b
foldlD' = foldlD
{-# INLINE foldlD' #-}

foldr1D :: (a -> AD (a -> AD a)) -> [a] -> AD a
foldr1D f = go
  where go [x] = pure x
        go (x : xs) = go xs >>= app2 f x
        go [] = emptyListError "foldr1"
{-# INLINE foldr1D #-}

foldl1D :: (a -> AD (a -> AD a)) -> [a] -> AD a
foldl1D f (x : xs) = foldlD f x xs
foldl1D _ [] = emptyListError "foldl1"
{-# INLINE foldl1D #-}

concatMapD :: (a -> AD [b]) -> [a] -> AD [b]
concatMapD f xs = concat <$> mapD f xs
{-# INLINE concatMapD #-}

-- | Elements are computed (and recorded) when first demanded, so
-- @take n (iterate f x)@ works; the recording order still follows the data
-- dependencies, which is all the reverse pass needs.  An element records on
-- the handle of the code that demands it, not of the code that made the
-- list: with (|*|) the list may be made on one side and consumed after the
-- join, or made before a fork and consumed on a side.
iterateD :: (a -> AD a) -> a -> AD [a]
iterateD f x0 = AD $ \t -> do
  root <- rootHandle t
  let go x = do
        rest <- unsafeInterleaveIO $ do
          h <- recordingHandle root
          y <- unAD (f x) h
          y `seq` go y
        pure (x : rest)
  go x0

filterD :: (a -> AD Bool) -> [a] -> AD [a]
filterD p = go
  where go [] = pure []
        go (x : xs) = do
          keep <- p x
          rest <- go xs
          pure (if keep then x : rest else rest)
{-# INLINE filterD #-}

takeWhileD :: (a -> AD Bool) -> [a] -> AD [a]
takeWhileD p = go
  where go [] = pure []
        go (x : xs) = do
          ok <- p x
          if ok then (x :) <$> go xs else pure []
{-# INLINE takeWhileD #-}

dropWhileD :: (a -> AD Bool) -> [a] -> AD [a]
dropWhileD p = go
  where go [] = pure []
        go l@(x : xs) = do
          ok <- p x
          if ok then go xs else pure l
{-# INLINE dropWhileD #-}

anyD :: (a -> AD Bool) -> [a] -> AD Bool
anyD p = go
  where go [] = pure False
        go (x : xs) = p x >>= \b -> if b then pure True else go xs
{-# INLINE anyD #-}

allD :: (a -> AD Bool) -> [a] -> AD Bool
allD p = go
  where go [] = pure True
        go (x : xs) = p x >>= \b -> if b then go xs else pure False
{-# INLINE allD #-}

scanlD :: (b -> AD (a -> AD b)) -> b -> [a] -> AD [b]
scanlD f = go
  where go acc [] = pure [acc]
        go acc (x : xs) = do
          acc' <- app2 f acc x
          rest <- go acc' xs
          pure (acc : rest)
{-# INLINE scanlD #-}

scanrD :: (a -> AD (b -> AD b)) -> b -> [a] -> AD [b]
scanrD f z = go
  where go [] = pure [z]
        go (x : xs) = do
          rest <- go xs
          case rest of
            (r : _) -> do { y <- app2 f x r; pure (y : rest) }
            [] -> emptyListError "scanr"
{-# INLINE scanrD #-}

flipD :: (a -> AD (b -> AD c)) -> b -> a -> AD c
flipD f y x = app2 f x y
{-# INLINE flipD #-}

curryD :: ((a, b) -> AD c) -> a -> b -> AD c
curryD f x y = f (x, y)
{-# INLINE curryD #-}

uncurryD :: (a -> AD (b -> AD c)) -> (a, b) -> AD c
uncurryD f (x, y) = app2 f x y
{-# INLINE uncurryD #-}

maybeD :: b -> (a -> AD b) -> Maybe a -> AD b
maybeD d _ Nothing = pure d
maybeD _ f (Just x) = f x
{-# INLINE maybeD #-}

eitherD :: (a -> AD c) -> (b -> AD c) -> Either a b -> AD c
eitherD f _ (Left x) = f x
eitherD _ g (Right y) = g y
{-# INLINE eitherD #-}

-- | (f . g) x
composeD :: (b -> AD c) -> (a -> AD b) -> a -> AD c
composeD f g x = g x >>= f
{-# INLINE composeD #-}

-- | f $ x
applyD :: (a -> AD b) -> a -> AD b
applyD f = f
{-# INLINE applyD #-}

headD :: [a] -> AD a
headD (x : _) = pure x
headD [] = emptyListError "head"

emptyListError :: String -> a
emptyListError f = error ("dualrev: " ++ f ++ ": empty list (note: differentiable code is "
  ++ "evaluated strictly, so a let/where binding is computed even where its branch is not taken)")

-- | 'error' reached in transformed code.
errorAD :: String -> AD a
errorAD msg = AD (\_ -> throwIO (ErrorCall msg))
