{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE FunctionalDependencies #-}
{-# LANGUAGE UndecidableInstances #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- @ad@'s variadic gradients: 'vgrad' of a function of any number of
-- scalar arguments, curried, giving its partials as a list.  The arguments
-- are the differentiable scalar at one fixed differentiation ('Variadic'):
-- a curried function's type cannot quantify it the way 'grad''s argument
-- does, so, as with @ad@, values of nested variadic gradients are not kept
-- apart by type.
module Numeric.DualRev.Internal.Overloaded.Variadic
  ( Variadic, Grad (..), vgrad, vgrad'
  , Grads (..), vgrads
  ) where

import Control.Comonad.Cofree (Cofree)

import Numeric.DualRev.Internal.Overloaded.Drivers (grad, grad')
import Numeric.DualRev.Internal.Overloaded.Higher (grads)
import Numeric.DualRev.Internal.Overloaded.Value

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.AD

-- | The differentiation that variadic functions' arguments belong to.
data VariadicS

-- | The scalar of a variadic function's arguments and result.
type Variadic a = Reverse VariadicS a

-- | A curried function @i@ of scalars to a scalar, its gradient's type @o@
-- (the same arguments as numbers, the partials as a list) and its value
-- and gradient's type @o'@.
class Element a => Grad i o o' a | i -> a o o', o -> a i o', o' -> a i o where
  -- | The function applied to a list of arguments, one per parameter.
  pack :: i -> [Variadic a] -> Variadic a
  -- | The gradient of a function of a list, curried.
  unpack :: ([a] -> [a]) -> o
  -- | The value and gradient of a function of a list, curried.
  unpack' :: ([a] -> (a, [a])) -> o'

instance Element a => Grad (Reverse VariadicS a) [a] (a, [a]) a where
  pack y _ = y
  unpack f = f []
  unpack' f = f []

instance Grad i o o' a => Grad (Reverse VariadicS a -> i) (a -> o) (a -> o') a where
  pack f (x : xs) = pack (f x) xs
  pack _ [] = error "Numeric.DualRev.AD.vgrad: fewer arguments than parameters"
  unpack f x = unpack (f . (x :))
  unpack' f x = unpack' (f . (x :))

-- | The gradient of a curried function of scalars, as a list.
--
-- >>> vgrad (\x y -> x * y + sin x) 1 2 :: [Double]
-- [2.5403023058681398,1.0]
vgrad :: Grad i o o' a => i -> o
vgrad i = unpack (grad (\vs -> recast (pack i (map recast vs))))

-- | The value and the gradient of a curried function of scalars.
vgrad' :: Grad i o o' a => i -> o'
vgrad' i = unpack' (grad' (\vs -> recast (pack i (map recast vs))))

-- | A curried function @i@ of scalars to a scalar and the type @o@ of its
-- derivatives of every order (the same arguments as numbers, then a
-- 'Cofree' stream branching once per argument, as 'grads' gives).
class Element a => Grads i o a | i -> a o, o -> a i where
  -- | The function applied to a list of arguments, one per parameter.
  packs :: i -> [Variadic a] -> Variadic a
  -- | The stream of a function of a list, curried.
  unpacks :: ([a] -> Cofree [] a) -> o

instance Element a => Grads (Reverse VariadicS a) (Cofree [] a) a where
  packs y _ = y
  unpacks f = f []

instance Grads i o a => Grads (Reverse VariadicS a -> i) (a -> o) a where
  packs f (x : xs) = packs (f x) xs
  packs _ [] = error "Numeric.DualRev.AD.vgrads: fewer arguments than parameters"
  unpacks f x = unpacks (f . (x :))

-- | Every derivative of a curried function of scalars, as 'grads' gives
-- them for the function of the list of its arguments.
vgrads :: Grads i o a => i -> o
vgrads i = unpacks (grads (\vs -> recast (packs i (map recast vs))))
