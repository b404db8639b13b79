{-# LANGUAGE FlexibleContexts #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Inputs that are data, not parameters: no derivative is taken with
-- respect to them, and they are put on the tape as constants.
module Numeric.DualRev.Internal.Run.Driver.Constant
  ( Constant (..)
  , constant
  , constantD
  ) where

import Control.DeepSeq (NFData (..))

import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..))
import Numeric.DualRev.Internal.Run.Array.Carrier (Carrier (..))

-- | A part of a differentiated function's input that is data (a training
-- batch, a fixed matrix): the gradient returns it unchanged, and inside
-- differentiable code 'constant' gives its value as a constant, so the
-- reverse pass does no work for it.
--
-- > differentiable [d|
-- >   fit :: (Double, Constant [(Double, Double)]) -> Double
-- >   fit (a, pts) = sum [ (a * x - y) ^ (2 :: Int) | (x, y) <- constant pts ]
-- >   |]
-- >
-- > $(grad 'fit) (1, Constant [(1, 2), (2, 3)])  ==  (-6.0, Constant [(1.0, 2.0), (2.0, 3.0)])
newtype Constant a = Constant a
  deriving (Eq, Show)

-- | As its value (a benchmark harness forces inputs and results whole).
instance NFData a => NFData (Constant a) where
  rnf (Constant a) = rnf a

-- | The value of a 'Constant'.  In differentiable code, use this instead of
-- matching on the constructor.
constant :: Constant a -> a
constant (Constant a) = a

-- | 'constant' in transformed code: the value moved onto the tape.
constantD :: Carrier a d => Constant a -> AD d
constantD (Constant a) = AD (\t -> toDual t a)
