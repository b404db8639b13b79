{-# LANGUAGE BangPatterns, ConstrainedClassMethods, FlexibleInstances #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Dual versions of the higher-order list functions of the Prelude and
-- Data.List.  A function value in transformed code is a Kleisli arrow per
-- argument (@a -> AD (b -> AD c)@), exactly as the transformation of the
-- function type prescribes.
--
-- Everything here is strict (call-by-value); the lazily recorded lists
-- (iterate, unfoldr, infinite enumerations) are in
-- "Numeric.DualRev.Internal.Run.Library.Lazy".  The folds take any 'Foldable' (Maybe,
-- Either, pairs), as their Prelude originals do, through 'toList', which is
-- the identity on lists.
module Numeric.DualRev.Internal.Run.Library.Lists
  ( app2
  , mapD, zipWithD, zipWith3D
  , foldrD, foldlD, foldlD', foldr1D, foldl1D
  , concatMapD, SelectD (..), filterD, takeWhileD, dropWhileD, dropWhileEndD, anyD, allD
  , scanlD, scanrD, scanl1D, scanr1D
  , spanD, breakD, partitionD, findD, findIndexD, mapMaybeD, untilD
  , sortByD, sortOnD, insertByD, maximumByD, minimumByD, groupByD, nubByD
  , flipD, curryD, uncurryD, maybeD, eitherD, composeD, applyD
  , headD, emptyListError, errorAD, outsideInstanceError
  ) where

import Control.Exception (ErrorCall (..), throw, throwIO)
import Control.Monad (void, when)
import Data.Foldable (foldl', toList)
import Foreign.Marshal.Alloc (allocaBytes)
import Data.List (sortBy)
import Data.Maybe (catMaybes)
import Data.Ord (comparing)

import Numeric.DualRev.Internal.Engine.FFI (c_lazy_count, c_mark_bytes, c_mark_restore, c_mark_save)
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Driver.Guard (guardingTape)

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

foldrD :: Foldable t => (a -> AD (b -> AD b)) -> b -> t a -> AD b
foldrD f z = go . toList
  where go [] = pure z
        go (x : xs) = go xs >>= app2 f x
{-# INLINE foldrD #-}

foldlD :: Foldable t => (b -> AD (a -> AD b)) -> b -> t a -> AD b
foldlD f z0 = go z0 . toList
  where go !acc [] = pure acc
        go !acc (x : xs) = app2 f acc x >>= \acc' -> go acc' xs
{-# INLINE foldlD #-}

-- | Under call-by-value foldl and foldl' coincide.
foldlD' :: Foldable t => (b -> AD (a -> AD b)) -> b -> t a -> AD b
foldlD' = foldlD
{-# INLINE foldlD' #-}

foldr1D :: Foldable t => (a -> AD (a -> AD a)) -> t a -> AD a
foldr1D f = go . toList
  where go [x] = pure x
        go (x : xs) = go xs >>= app2 f x
        go [] = emptyListError "foldr1"
{-# INLINE foldr1D #-}

foldl1D :: Foldable t => (a -> AD (a -> AD a)) -> t a -> AD a
foldl1D f xs = case toList xs of
  (y : ys) -> foldlD f y ys
  [] -> emptyListError "foldl1"
{-# INLINE foldl1D #-}

concatMapD :: Foldable t => (a -> AD [b]) -> t a -> AD [b]
concatMapD f xs = concat <$> mapD f (toList xs)
{-# INLINE concatMapD #-}

-- | @minimum [e | x <- xs]@ and @maximum@ of it (and of @map f xs@):
-- 'minimum' and 'maximum' of the elements, with the same comparisons in
-- the same order, so the same element wins.  Of dual numbers, each
-- element's nodes are taken off the tape again unless it is the winner so
-- far (cbits/frontend/rewind.c): only the winner's derivative is nonzero,
-- and the losers' nodes would cost memory and a visit in every sweep (at
-- order 2, of a Hessian-vector product, the tangent pass too).  A
-- minimum over k computed elements keeps the nodes of about ln k of them
-- (each new best so far), not k.  Kept whole: in a taped recording (its
-- comparisons are guards that a replay checks), where the element
-- demanded something recorded lazily (which later code may share), and
-- on a tape that cannot be rewound (a side of a fork).
class SelectD a where
  minimumConcatMapD, maximumConcatMapD :: (Foldable t, Ord a) => (b -> AD [a]) -> t b -> AD a
  minimumMapD, maximumMapD :: (Foldable t, Ord a) => (b -> AD a) -> t b -> AD a
  minimumMapD f = minimumConcatMapD (fmap (: []) . f)
  maximumMapD f = maximumConcatMapD (fmap (: []) . f)
  {-# INLINE minimumMapD #-}
  {-# INLINE maximumMapD #-}

instance {-# INCOHERENT #-} SelectD a where
  minimumConcatMapD f xs = minimum <$> concatMapD f xs
  maximumConcatMapD f xs = maximum <$> concatMapD f xs
  {-# INLINE minimumConcatMapD #-}
  {-# INLINE maximumConcatMapD #-}

instance SelectD D where
  minimumConcatMapD = selectRewinding minimum min
  maximumConcatMapD = selectRewinding maximum max
  {-# INLINE minimumConcatMapD #-}
  {-# INLINE maximumConcatMapD #-}

-- | foldl1 pick over the elements (GHC's minimum and maximum of a list,
-- whole, is foldl1' of min and max), rewinding the tape past each element
-- that does not become the best.
selectRewinding :: Foldable t => ([D] -> D) -> (D -> D -> D) -> (b -> AD [D]) -> t b -> AD D
selectRewinding whole pick f xs = AD $ \t -> do
  guarded <- guardingTape
  case guarded of
    Just _ -> whole <$> unAD (concatMapD f xs) t
    Nothing -> allocaBytes (fromIntegral c_mark_bytes) $ \m -> do
      let step Nothing y = Just y
          step (Just b) y = Just $! pick b y
          go best [] = pure best
          go best (x : rest) = do
            lazy0 <- c_lazy_count
            mark <- c_mark_save t m
            ys <- unAD (f x) t
            let best' = foldl' step best ys
            lazy1 <- c_lazy_count
            let older = case best' of
                  Just (D _ i) -> i < mark
                  Nothing -> True
            when (mark >= 0 && lazy0 == lazy1 && older) (void (c_mark_restore t m))
            go best' rest
      r <- go Nothing (toList xs)
      pure (maybe (whole []) id r)

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

anyD :: Foldable t => (a -> AD Bool) -> t a -> AD Bool
anyD p = go . toList
  where go [] = pure False
        go (x : xs) = p x >>= \b -> if b then pure True else go xs
{-# INLINE anyD #-}

allD :: Foldable t => (a -> AD Bool) -> t a -> AD Bool
allD p = go . toList
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

scanl1D :: (a -> AD (a -> AD a)) -> [a] -> AD [a]
scanl1D f (x : xs) = scanlD f x xs
scanl1D _ [] = pure []
{-# INLINE scanl1D #-}

scanr1D :: (a -> AD (a -> AD a)) -> [a] -> AD [a]
scanr1D f = go
  where go [] = pure []
        go [x] = pure [x]
        go (x : xs) = do
          rest <- go xs
          case rest of
            (r : _) -> do { y <- app2 f x r; pure (y : rest) }
            [] -> emptyListError "scanr1"
{-# INLINE scanr1D #-}

-- | As Data.List's: p is called on every element, last to first.
dropWhileEndD :: (a -> AD Bool) -> [a] -> AD [a]
dropWhileEndD p = go
  where go [] = pure []
        go (x : xs) = do
          rest <- go xs
          drop' <- p x
          pure (if drop' && null rest then [] else x : rest)
{-# INLINE dropWhileEndD #-}

spanD :: (a -> AD Bool) -> [a] -> AD ([a], [a])
spanD p = go
  where go [] = pure ([], [])
        go l@(x : xs) = do
          ok <- p x
          if ok then (\(ys, zs) -> (x : ys, zs)) <$> go xs else pure ([], l)
{-# INLINE spanD #-}

breakD :: (a -> AD Bool) -> [a] -> AD ([a], [a])
breakD p = spanD (fmap not . p)
{-# INLINE breakD #-}

partitionD :: (a -> AD Bool) -> [a] -> AD ([a], [a])
partitionD p = go
  where go [] = pure ([], [])
        go (x : xs) = do
          ok <- p x
          (ys, ns) <- go xs
          pure (if ok then (x : ys, ns) else (ys, x : ns))
{-# INLINE partitionD #-}

findD :: Foldable t => (a -> AD Bool) -> t a -> AD (Maybe a)
findD p = go . toList
  where go [] = pure Nothing
        go (x : xs) = p x >>= \ok -> if ok then pure (Just x) else go xs
{-# INLINE findD #-}

findIndexD :: (a -> AD Bool) -> [a] -> AD (Maybe Int)
findIndexD p = go 0
  where go !_ [] = pure Nothing
        go !k (x : xs) = p x >>= \ok -> if ok then pure (Just k) else go (k + 1) xs
{-# INLINE findIndexD #-}

mapMaybeD :: (a -> AD (Maybe b)) -> [a] -> AD [b]
mapMaybeD f xs = catMaybes <$> mapD f xs
{-# INLINE mapMaybeD #-}

untilD :: (a -> AD Bool) -> (a -> AD a) -> a -> AD a
untilD p f = go
  where go x = p x >>= \done -> if done then pure x else f x >>= go
{-# INLINE untilD #-}

-- | A stable merge sort, as Data.List's 'sortBy': equal elements keep their
-- order, so the result is Data.List's whatever pairs get compared.  The
-- elements themselves are moved, so the derivative follows them.
sortByD :: (a -> AD (a -> AD Ordering)) -> [a] -> AD [a]
sortByD cmp = mergeAll . map (: [])
  where
    mergeAll [] = pure []
    mergeAll [xs] = pure xs
    mergeAll xss = mergePairs xss >>= mergeAll
    mergePairs (xs : ys : rest) = do
      m <- merge xs ys
      ms <- mergePairs rest
      pure (m : ms)
    mergePairs xss = pure xss
    merge xs@(x : xs') ys@(y : ys') = do
      o <- app2 cmp x y
      if o == GT then (y :) <$> merge xs ys' else (x :) <$> merge xs' ys
    merge [] ys = pure ys
    merge xs [] = pure xs

-- | Each key is computed once, as Data.List's 'sortOn' does.
sortOnD :: Ord b => (a -> AD b) -> [a] -> AD [a]
sortOnD f xs = do
  ks <- mapD f xs
  pure (map snd (sortBy (comparing fst) (zip ks xs)))
{-# INLINE sortOnD #-}

insertByD :: (a -> AD (a -> AD Ordering)) -> a -> [a] -> AD [a]
insertByD cmp x = go
  where go [] = pure [x]
        go ys@(y : ys') = do
          o <- app2 cmp x y
          if o == GT then (y :) <$> go ys' else pure (x : ys)
{-# INLINE insertByD #-}

-- | Of equal elements, the last (as Data.List's).
maximumByD :: Foldable t => (a -> AD (a -> AD Ordering)) -> t a -> AD a
maximumByD = selectBy "maximumBy" (\x y o -> if o == GT then x else y)
{-# INLINE maximumByD #-}

-- | Of equal elements, the first (as Data.List's).
minimumByD :: Foldable t => (a -> AD (a -> AD Ordering)) -> t a -> AD a
minimumByD = selectBy "minimumBy" (\x y o -> if o == GT then y else x)
{-# INLINE minimumByD #-}

selectBy :: Foldable t => String -> (a -> a -> Ordering -> a) -> (a -> AD (a -> AD Ordering)) -> t a -> AD a
selectBy name pick cmp xs = case toList xs of
  (y : ys) -> go y ys
  [] -> emptyListError name
  where go acc [] = pure acc
        go acc (x : rest) = app2 cmp acc x >>= \o -> go (pick acc x o) rest
{-# INLINE selectBy #-}

-- | Each group is the longest run equal to its first element, as
-- Data.List's 'groupBy'.
groupByD :: (a -> AD (a -> AD Bool)) -> [a] -> AD [[a]]
groupByD eq = go
  where go [] = pure []
        go (x : xs) = do
          eqx <- eq x
          (ys, zs) <- spanD eqx xs
          rest <- go zs
          pure ((x : ys) : rest)
{-# INLINE groupByD #-}

-- | Calls eq with an element kept so far first, as Data.List's 'nubBy'.
nubByD :: (a -> AD (a -> AD Bool)) -> [a] -> AD [a]
nubByD eq = go []
  where go _ [] = pure []
        go seen (y : ys) = do
          dup <- anyD (\x -> app2 eq x y) seen
          if dup then go seen ys else (y :) <$> go (y : seen) ys
{-# INLINE nubByD #-}

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

-- | A method of a standard class at a dual twin whose instance was declared
-- outside every block ("Numeric.DualRev.Internal.Compile.Transform",
-- @outsideInstances@).
outsideInstanceError :: String -> a
outsideInstanceError msg = throw (DualRevError msg)

-- | 'error' reached in transformed code.
errorAD :: String -> AD a
errorAD msg = AD (\_ -> throwIO (ErrorCall msg))
