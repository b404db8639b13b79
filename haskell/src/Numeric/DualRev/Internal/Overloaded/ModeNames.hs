{-# LANGUAGE KindSignatures #-}
{-# LANGUAGE TypeFamilies #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- The names @ad@'s type signatures use for its modes, so that they read
-- the same here: @AD s (Forward Double)@, @AD s (Sparse a)@, ... in a
-- signature written for @ad@ are the differentiable scalar of this library
-- ('Reverse', which serves every mode; 'Derivatives' for the tower mode).
-- @ad@'s 'AD' is a newtype over its modes; here it is a type family, so a
-- signature works unchanged but @AD@ is no constructor to apply or match
-- (@ad@ programs rarely do either: 'auto' makes constants).
module Numeric.DualRev.Internal.Overloaded.ModeNames
  ( AD, Forward, Kahn, Sparse, Dense, Tower, Repr
  ) where

import Data.Kind (Type)

import Numeric.DualRev.Internal.Overloaded.Representable (Repr)
import Numeric.DualRev.Internal.Overloaded.Tower (Derivatives)
import Numeric.DualRev.Internal.Overloaded.Value (Reverse)

-- | @ad@'s forward mode, by name.
data Forward a

-- | @ad@'s Kahn (tape) mode, by name.
data Kahn a

-- | @ad@'s sparse mode, by name.
data Sparse a

-- | @ad@'s dense mode, by name.
data Dense (f :: Type -> Type) a

-- | @ad@'s tower mode, by name.
data Tower a

-- | The differentiable scalar of a differentiation @s@ in a mode of
-- @ad@'s: @AD s (Forward a)@, @AD s (Kahn a)@, @AD s (Sparse a)@ and
-- @AD s (Dense f a)@ are @'Reverse' s a@; @AD s (Tower a)@ is
-- @'Derivatives' s a@; @AD s (Repr f a)@ (dense forward mode over a
-- 'Data.Functor.Rep.Representable' container) is 'Repr' itself.
type family AD s m where
  AD s (Forward a) = Reverse s a
  AD s (Kahn a) = Reverse s a
  AD s (Sparse a) = Reverse s a
  AD s (Dense f a) = Reverse s a
  AD s (Tower a) = Derivatives s a
  AD s (Repr f a) = Repr f a
