{-# LANGUAGE TemplateHaskell #-}
-- | The runners' sweeps: an unsafe call where the engine may run in one
-- (haskell/cbits/hs_quick.c: no checkpointed loop's step alive, a small
-- tape), the safe call otherwise.  Both report a forward pass that failed
-- (the tape's sticky status) as a DualRevError, and both give the same
-- gradients.
module Sweeps (spec) where

import Control.Exception (evaluate)
import Control.Monad (forM_, replicateM_)
import Foreign.Ptr (Ptr)
import Data.List (isInfixOf)
import Test.Hspec
import Test.QuickCheck

import Check (dualRevError)
import Numeric.DualRev
import Numeric.DualRev.Internal.Engine.FFI (CTape, c_input_first, c_record0, c_record1)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..), D (..))
import Numeric.DualRev.Internal.Run.Driver.Runners (collectD, collectDoubles, gradRun, inputD, inputDoubles)

differentiable [d|
  poly :: (Double, Double) -> Double
  poly (x, y) = x * x * y + sin (x * y) - y / (1 + x * x)

  -- a tape holding a checkpointed loop, whose step is Haskell code
  looped :: Double -> Double
  looped x = checkpointedIterate 5 (\s -> s * 1.1 + 0.1 * sin s) x
  |]

-- | The gradient of the identity, after n input nodes and then a node with
-- an argument that is not on the tape, which sets the sticky status.
failedAfter :: Int -> Double -> (Double, Double)
failedAfter n = gradRun inputD collectD f
  where
    f :: D -> AD D
    f x = AD $ \t -> do
      replicateM_ n (c_record0 t)
      _ <- c_record1 t 123456789 1
      pure x

-- | The input walk of 'inputDoubles' on a range the tape notes no length
-- of (dr_input_range): the read-out then counts the list.
unnoted :: Ptr CTape -> [Double] -> IO [D]
unnoted t xs = do
  first <- c_input_first t (fromIntegral (length xs))
  pure [D x (first + i) | (x, i) <- zip xs [0 ..]]

spec :: Spec
spec = describe "sweeps (quick and safe calls)" $ do
  it "a list's gradient is read out whole whether or not the tape noted its length" $
    forM_ [1, 5, 128, 129, 300, 5000] $ \n -> do
      let xs = map fromIntegral [1 .. n]
          k = n `div` 2
          -- y = 3 * x_k: its gradient is 3 at k, 0 elsewhere
          f ds = AD $ \t -> case ds !! k of D v i -> D (3 * v) <$> c_record1 t i 3
          want = [if i == k then 3 else 0 | i <- [0 .. n - 1]]
      snd (gradRun inputDoubles collectDoubles f xs) `shouldBe` want
      snd (gradRun unnoted collectDoubles f xs) `shouldBe` want
  it "a failed forward pass is an error on a small tape (the quick call)" $ do
    m <- dualRevError (failedAfter 0 2)
    m `shouldSatisfy` ("dualrev: the tape reported" `isInfixOf`)
  it "a failed forward pass is an error on a long tape (the safe call)" $ do
    m <- dualRevError (failedAfter 9000 2)
    m `shouldSatisfy` ("dualrev: the tape reported" `isInfixOf`)
  it "a failed forward pass is an error while a loop's step is alive (the safe call)" $ do
    let r = $(differentiate 'looped) 0.5
    _ <- evaluate (fst r) -- the forward pass: the loop is on its tape now
    m <- dualRevError (failedAfter 0 2)
    m `shouldSatisfy` ("dualrev: the tape reported" `isInfixOf`)
    g <- evaluate (snd r 1)
    g `shouldSatisfy` (not . isNaN)
  it "gives the same gradients with a loop's step alive (safe) and without (quick)" $ property $
    forAll ((,) <$> choose (-2, 2) <*> choose (-2, 2)) $ \x -> ioProperty $ do
      quick <- evaluate ($(grad 'poly) x)
      let r = $(differentiate 'looped) 0.5
      _ <- evaluate (fst r)
      safe <- evaluate ($(grad 'poly) x)
      g <- evaluate (snd r 1)
      pure (quick === safe .&&. not (isNaN g))
