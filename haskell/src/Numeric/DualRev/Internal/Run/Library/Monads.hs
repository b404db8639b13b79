{-# LANGUAGE DataKinds #-}
{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE TypeOperators #-}
{-# LANGUAGE UndecidableInstances #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The monads of differentiable code: do-notation and the Control.Monad
-- functions in 'Maybe', 'Either' e, lists and 'Identity'.
--
-- In transformed code a continuation is a Kleisli arrow @a -> AD (m b)@ (the
-- transformed type of @a -> m b@), so binding cannot be the monad's own
-- @(>>=)@: 'bindD' runs the continuation in 'AD' for each value the monad
-- holds.  Functions that only combine finished monadic values (return,
-- guard, when, sequence, ...) need no dual version and are used as they are.
module Numeric.DualRev.Internal.Run.Library.Monads
  ( DMonad (..)
  , bindFlipD, kleisliD, kleisliFlipD, apD, liftA2D
  , mapMD_, forMD_, foldMD, foldMD_, zipWithMD, zipWithMD_
  ) where

import Data.Functor.Identity (Identity (..))
import GHC.TypeLits (ErrorMessage (..), TypeError)

import Numeric.DualRev.Internal.Run.Scalar.AD (AD)
import Numeric.DualRev.Internal.Run.Library.Lists (app2, concatMapD, errorAD)

class Monad m => DMonad m where
  -- | @(>>=)@
  bindD :: m a -> (a -> AD (m b)) -> AD (m b)
  -- | A pattern of a do statement @p <- e@ that did not match: 'fail' for
  -- the monads that have it.  In the others GHC accepts only patterns that
  -- cannot fail (it type-checks the block's own copy of the code, where a
  -- failable pattern needs MonadFail), so there it is never called.
  patFailD :: String -> AD (m a)

instance DMonad Maybe where
  bindD Nothing _ = pure Nothing
  bindD (Just x) k = k x
  {-# INLINE bindD #-}
  patFailD _ = pure Nothing

instance DMonad (Either e) where
  bindD (Left e) _ = pure (Left e)
  bindD (Right x) k = k x
  {-# INLINE bindD #-}
  patFailD = errorAD

instance DMonad [] where
  bindD xs k = concatMapD k xs
  {-# INLINE bindD #-}
  patFailD _ = pure []

instance DMonad Identity where
  bindD (Identity x) k = k x
  {-# INLINE bindD #-}
  patFailD = errorAD

-- | Any other monad: the type error says which ones work.
instance {-# OVERLAPPABLE #-}
  ( Monad m
  , TypeError ('Text "dualrev: do-notation and the Control.Monad functions in differentiable code"
               ':$$: 'Text "  work in Maybe, Either e, lists and Identity; not in the monad "
               ':<>: 'ShowType m
               ':$$: 'Text "  (write the binds of other monads as ordinary functions)")
  ) => DMonad m where
  bindD = error "dualrev: unreachable"
  patFailD = error "dualrev: unreachable"

-- | @(=<<)@
bindFlipD :: DMonad m => (a -> AD (m b)) -> m a -> AD (m b)
bindFlipD k m = bindD m k
{-# INLINE bindFlipD #-}

-- | @(f >=> g) x@
kleisliD :: DMonad m => (a -> AD (m b)) -> (b -> AD (m c)) -> a -> AD (m c)
kleisliD f g x = f x >>= \m -> bindD m g
{-# INLINE kleisliD #-}

-- | @(g <=< f) x@
kleisliFlipD :: DMonad m => (b -> AD (m c)) -> (a -> AD (m b)) -> a -> AD (m c)
kleisliFlipD g f = kleisliD f g
{-# INLINE kleisliFlipD #-}

-- | @(<*>)@: the functions inside are dual functions.
apD :: DMonad m => m (a -> AD b) -> m a -> AD (m b)
apD mf mx = bindD mf (\f -> bindD mx (\x -> return <$> f x))
{-# INLINE apD #-}

-- | @liftA2@, @liftM2@
liftA2D :: DMonad m => (a -> AD (b -> AD c)) -> m a -> m b -> AD (m c)
liftA2D f ma mb = bindD ma (\a -> bindD mb (\b -> return <$> app2 f a b))
{-# INLINE liftA2D #-}

mapMD_ :: DMonad m => (a -> AD (m b)) -> [a] -> AD (m ())
mapMD_ f = go
  where go [] = pure (return ())
        go (x : xs) = f x >>= \m -> bindD m (\_ -> go xs)
{-# INLINE mapMD_ #-}

forMD_ :: DMonad m => [a] -> (a -> AD (m b)) -> AD (m ())
forMD_ xs f = mapMD_ f xs
{-# INLINE forMD_ #-}

foldMD :: DMonad m => (b -> AD (a -> AD (m b))) -> b -> [a] -> AD (m b)
foldMD f = go
  where go acc [] = pure (return acc)
        go acc (x : xs) = app2 f acc x >>= \m -> bindD m (\acc' -> go acc' xs)
{-# INLINE foldMD #-}

foldMD_ :: DMonad m => (b -> AD (a -> AD (m b))) -> b -> [a] -> AD (m ())
foldMD_ f z xs = foldMD f z xs >>= \m -> bindD m (\_ -> pure (return ()))
{-# INLINE foldMD_ #-}

zipWithMD :: DMonad m => (a -> AD (b -> AD (m c))) -> [a] -> [b] -> AD (m [c])
zipWithMD f = go
  where go (x : xs) (y : ys) = app2 f x y >>= \m -> bindD m (\z -> fmap (z :) <$> go xs ys)
        go _ _ = pure (return [])
{-# INLINE zipWithMD #-}

zipWithMD_ :: DMonad m => (a -> AD (b -> AD (m c))) -> [a] -> [b] -> AD (m ())
zipWithMD_ f xs ys = zipWithMD f xs ys >>= \m -> bindD m (\_ -> pure (return ()))
{-# INLINE zipWithMD_ #-}
