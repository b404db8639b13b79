{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE UndecidableInstances #-}
-- | @ad@'s "Numeric.AD.Jet": the derivatives of every order of a function
-- of several variables, level by level.  A 'Cofree' stream (what 'grads'
-- gives) branches once per input at every node; a 'Jet' holds the value,
-- then the whole gradient, then the whole Hessian, ..., each level a
-- container one deeper than the last.
--
-- >>> import Numeric.DualRev.AD (grads)
-- >>> headJet (tailJet (tailJet (jet (grads (\[x, y] -> x * x * y) [3, 2]))))
-- [[4.0,6.0],[6.0,0.0]]
--
-- 'unjet' goes back from levels to a stream, for containers whose
-- positions can be named (@Representable@, from @adjunctions@).
module Numeric.DualRev.AD.Jet
  ( Jet (..)
  , headJet, tailJet
  , jet
  , unjet
  ) where

import Control.Comonad.Cofree (Cofree (..))
import Data.Functor.Rep (Representable, index, tabulate)

infixr 3 :-

-- | A value, then its derivatives one order at a time: the first order
-- in an @f@, the second in an @f (f ...)@, and so on.
data Jet f a = a :- Jet f (f a)

-- | The value.
headJet :: Jet f a -> a
headJet (a :- _) = a

-- | The derivatives, from the first order on.
tailJet :: Jet f a -> Jet f (f a)
tailJet (_ :- as) = as

-- | The levels of a stream of derivatives: the root's value, then the
-- values one step down every branch, and so on.
jet :: Functor f => Cofree f a -> Jet f a
jet (a :< branches) = a :- levels (fmap jet branches)

-- | The stream of derivatives a jet holds level by level, back as one
-- branch per position at every node: 'jet' undone.
--
-- >>> import Control.Comonad.Cofree (Cofree (..))
-- >>> import Numeric.DualRev.AD (grads)
-- >>> import Data.Functor.Identity (Identity (..))
-- >>> let x :< Identity (d :< Identity (dd :< _)) = unjet (jet (grads (\(Identity t) -> t * t * t) (Identity 2)))
-- >>> (x, d, dd)
-- (8.0,12.0,12.0)
unjet :: Representable f => Jet f a -> Cofree f a
unjet (a :- as) = a :< fmap unjet (spread as)

-- | One jet of containers as a container of jets, each position's levels
-- taken from the same position of every level: 'levels' undone.
spread :: Representable f => Jet f (f a) -> f (Jet f a)
spread (fa :- fas) = tabulate (\i -> index fa i :- index (spread fas) i)

-- | A container of jets as one jet of containers: level k of the result
-- holds level k of each.
levels :: Functor f => f (Jet f a) -> Jet f (f a)
levels js = fmap headJet js :- levels (fmap tailJet js)

instance Functor f => Functor (Jet f) where
  fmap g (a :- as) = g a :- fmap (fmap g) as

instance Foldable f => Foldable (Jet f) where
  foldMap g (a :- as) = g a <> foldMap (foldMap g) as

instance Traversable f => Traversable (Jet f) where
  traverse g (a :- as) = (:-) <$> g a <*> traverse (traverse g) as

-- | Level by level, as @a :- (b :- ...)@; a jet is infinite, so 'show'
-- of one never ends ('take' from its levels with 'headJet'/'tailJet').
instance (Show a, Show (f a), Show (Jet f (f a))) => Show (Jet f a) where
  showsPrec d (a :- as) = showParen (d > 3) $
    showsPrec 4 a . showString " :- " . showsPrec 3 as
