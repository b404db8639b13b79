{-# LANGUAGE TemplateHaskell #-}
-- | The runners' sweeps: an unsafe call where the engine may run in one
-- (haskell/cbits/hs_quick.c: no checkpointed loop's step alive, a small
-- tape), the safe call otherwise.  Both report a forward pass that failed
-- (the tape's sticky status) as a DualRevError, and both give the same
-- gradients.
module Sweeps (spec) where

import Control.Exception (ErrorCall (..), evaluate, throwIO, try)
import Control.Monad (replicateM_)
import Data.IORef (newIORef, readIORef, writeIORef)
import Data.List (isInfixOf)
import Foreign.Ptr (nullPtr)
import Test.Hspec
import Test.QuickCheck

import Check (dualRevError)
import Numeric.DualRev
import Numeric.DualRev.Internal.Engine.FFI (c_record0, c_record1)
import Numeric.DualRev.Internal.Run.AD (AD (..), D)
import Numeric.DualRev.Internal.Run.Runners (collectD, gradRun, inputD, inputDoubles, notedRanges, withPooledTape)

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

spec :: Spec
spec = describe "sweeps (quick and safe calls)" $ do
  it "a run that fails between its input walk and its read-out leaves no list length noted for its tape" $ do
    tape <- newIORef nullPtr
    r <- try $ withPooledTape $ \t -> do
      writeIORef tape t
      _ <- inputDoubles t (replicate 300 1)
      readIORef tape >>= notedRanges >>= (`shouldBe` 1)
      throwIO (ErrorCall "stop")
    either (\(ErrorCall m) -> m `shouldBe` "stop") (\() -> expectationFailure "no error") r
    readIORef tape >>= notedRanges >>= (`shouldBe` 0)
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
