-- | Test helpers for programs checked against a twin that records the same
-- arithmetic another way (operation by operation, or through calls): values
-- to the bit, gradients to rounding and to central differences, and the
-- nodes a transformed worker records.
module Twins
  ( sameGrad
  , agrees
  , nodesOf
  ) where

import Control.Exception (bracket)
import Data.Int (Int64)
import Foreign.C.Types (CInt)
import Foreign.Ptr (Ptr)
import Test.QuickCheck

import Check (Vec (..), closeFD, fdGrad)
import Numeric.DualRev.Internal.Engine.FFI (CTape, c_record0, c_tape_free, c_tape_len, c_tape_new)
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..), D (..))

-- | Gradients equal to rounding, entry by entry: relative tolerance tol, or
-- tol absolutely for entries near 0 (the twins add in different orders).
sameGrad :: Double -> [Double] -> [Double] -> Bool
sameGrad tol a b =
  length a == length b && and (zipWith (\x y -> abs (x - y) <= tol * max 1 (max (abs x) (abs y))) a b)

-- | The value to the bit and the gradient to 1e-12, of a program against its
-- twin, and the gradient against central differences.
agrees :: (Vec x, Show x) => (x -> Double) -> (x -> Double) -> (x -> x) -> (x -> x) -> x -> Property
agrees valS valO gradS gradO x =
  let gS = toVec (gradS x)
      gO = toVec (gradO x)
  in counterexample (show (x, valS x, valO x, gS, gO)) $
       valS x == valO x
         .&&. sameGrad 1e-12 gS gO
         .&&. and (zipWith (closeFD (valS x)) gS (fdGrad valS x))

-- | The nodes a transformed worker records for inputs of these values (each
-- an input node of its own), on a fresh tape of the given order.
nodesOf :: CInt -> ([D] -> AD D) -> [Double] -> IO Int
nodesOf order f xs = bracket c_tape_new c_tape_free $ \t -> do
  _ <- c_tape_set_order t order
  ds <- mapM (\v -> D v <$> (c_record0 t :: IO Int64)) xs
  before <- c_tape_len t
  _ <- unAD (f ds) (t :: Ptr CTape)
  after <- c_tape_len t
  pure (fromIntegral (after - before))
