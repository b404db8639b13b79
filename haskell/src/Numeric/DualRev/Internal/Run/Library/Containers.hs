{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Dual versions of the library functions beyond lists that take function
-- arguments: Functor, Applicative, Monad and Traversable on the containers
-- of numeric code (lists, Maybe, Either, pairs), Data.Function and
-- Data.Ord; and the Foldable forms of the sums.
--
-- A dual function returns @AD b@, not @b@, so mapping it over a container
-- is traversing the container in the tape monad: every dual fmap here is a
-- traverse in 'AD'.  The monad operations are in
-- "Numeric.DualRev.Internal.Run.Library.Monads".
module Numeric.DualRev.Internal.Run.Library.Containers
  ( fmapD, fmapFlippedD
  , traverseD, forD, mapAccumLD, mapAccumRD
  , sumFD, productFD
  , onD, ampD, comparingD
  , genericLengthD
  ) where

import Control.Applicative.Backwards (Backwards (..))
import Control.Monad.Trans.State.Strict (StateT (..))
import Data.Foldable (toList)
import Data.Tuple (swap)

import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Library.Lists (app2)
import Numeric.DualRev.Internal.Run.Scalar.Ops (DNum (..))

fmapD :: Traversable t => (a -> AD b) -> t a -> AD (t b)
fmapD = traverse
{-# INLINE fmapD #-}

-- | (<&>)
fmapFlippedD :: Traversable t => t a -> (a -> AD b) -> AD (t b)
fmapFlippedD xs f = traverse f xs
{-# INLINE fmapFlippedD #-}

-- | traverse and mapM with a result in Maybe, Either, a list: f is called on
-- every element (differentiable code is evaluated strictly), then the
-- results are combined as the original combines them.
traverseD :: (Traversable t, Applicative m) => (a -> AD (m b)) -> t a -> AD (m (t b))
traverseD f xs = sequenceA <$> traverse f xs
{-# INLINE traverseD #-}

-- | for and forM
forD :: (Traversable t, Applicative m) => t a -> (a -> AD (m b)) -> AD (m (t b))
forD xs f = traverseD f xs
{-# INLINE forD #-}

mapAccumLD :: Traversable t => (s -> AD (a -> AD (s, b))) -> s -> t a -> AD (s, t b)
mapAccumLD f s0 xs = swap <$> runStateT (traverse step xs) s0
  where step x = StateT (\s -> swap <$> app2 f s x)
{-# INLINE mapAccumLD #-}

mapAccumRD :: Traversable t => (s -> AD (a -> AD (s, b))) -> s -> t a -> AD (s, t b)
mapAccumRD f s0 xs = swap <$> runStateT (forwards (traverse (Backwards . step) xs)) s0
  where step x = StateT (\s -> swap <$> app2 f s x)
{-# INLINE mapAccumRD #-}

-- | 'sum' on any Foldable; on a list it is 'sumD' itself (one n-ary tape
-- node for D).
sumFD :: (Foldable t, DNum a) => t a -> AD a
sumFD xs = sumD (toList xs)
{-# INLINE sumFD #-}

productFD :: (Foldable t, DNum a) => t a -> AD a
productFD xs = productD (toList xs)
{-# INLINE productFD #-}

-- | (g `on` f) x y
onD :: (b -> AD (b -> AD c)) -> (a -> AD b) -> a -> a -> AD c
onD g f x y = do
  fx <- f x
  fy <- f y
  app2 g fx fy
{-# INLINE onD #-}

-- | x & f
ampD :: a -> (a -> AD b) -> AD b
ampD x f = f x
{-# INLINE ampD #-}

comparingD :: Ord b => (a -> AD b) -> a -> a -> AD Ordering
comparingD f x y = do
  fx <- f x
  fy <- f y
  pure (compare fx fy)
{-# INLINE comparingD #-}

-- | Data.List's 'genericLength' adds with (+), which the dual scalar has
-- only on the tape; a length is a constant anyway.
genericLengthD :: Num i => [a] -> i
genericLengthD = fromIntegral . length
{-# INLINE genericLengthD #-}
