{-# LANGUAGE TemplateHaskell #-}
-- | checkpointedIterate: loops recorded with binomial checkpointing, against
-- the same loops written with iterate (the same operations in the same
-- order: equal gradients to the bit) and central differences; tuple, list
-- and scalar states; lambdas and local steps with constants from around the
-- loop; zero steps; plain (not differentiated) use; and the errors: a
-- differentiated value captured from outside the state, a step that
-- changes the state's shape.
module Checkpoint (spec) where

import Control.Exception (bracket)
import Data.List (isInfixOf)
import Test.Hspec
import Test.QuickCheck

import Check (closeFD, dualRevError, fdGrad)
import Numeric.DualRev
import Numeric.DualRev.Internal.Engine.FFI (c_record0, c_tape_free, c_tape_len, c_tape_new)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..), D (..), constD)
import Numeric.DualRev.Internal.Run.Control.Checkpoint (checkpointedIterateD)
import Numeric.DualRev.Internal.Run.Scalar.Ops (timesD)

differentiable [d|
  -- a damped pendulum whose stiffness k rides along in the state
  pendulum :: ((Double, Double), Double) -> ((Double, Double), Double)
  pendulum ((p, v), k) = ((p + 0.05 * v, v - 0.05 * (k * sin p + 0.1 * v)), k)

  pendC, pendP :: (Double, Double, Double) -> Double
  pendC (p, v, k) = let ((p', v'), _) = checkpointedIterateWith 3 300 pendulum ((p, v), k)
                    in p' * v' + p' * p'
  pendP (p, v, k) = let ((p', v'), _) = iterate pendulum ((p, v), k) !! 300
                    in p' * v' + p' * p'

  -- a list state, a lambda step, a constant from around the loop
  ringC, ringP :: [Double] -> Double
  ringC xs = let c = 0.01 in sum (checkpointedIterate 400 (\s -> zipWith (\a b -> a + c * sin b) s (tail s ++ [head s])) xs)
  ringP xs = let c = 0.01 in sum (iterate (\s -> zipWith (\a b -> a + c * sin b) s (tail s ++ [head s])) xs !! 400)

  -- a scalar state, a local step, no steps at all
  decay :: Double -> Double
  decay x = checkpointedIterate 50 step x + checkpointedIterate 0 step x
    where step y = y - 0.1 * y * y

  -- a differentiated value from outside the state
  captured :: (Double, Double) -> Double
  captured (x, k) = checkpointedIterate 10 (\s -> s * k) x

  -- a step that grows the state
  growing :: [Double] -> Double
  growing xs = sum (checkpointedIterate 3 (\s -> 1 : s) xs)
  |]


spec :: Spec
spec = describe "checkpointedIterate" $ do
  it "gives the gradient of the plain loop, to the bit (tuple state)" $ property $
    forAll ((,,) <$> choose (-1, 1) <*> choose (-1, 1) <*> choose (0.5, 2)) $ \x ->
      $(grad 'pendC) x === $(grad 'pendP) x
  it "agrees with central differences" $ property $
    forAll ((,,) <$> choose (-1, 1) <*> choose (-1, 1) <*> choose (0.5, 2)) $ \x@(p, v, k) ->
      let (gp, gv, gk) = $(grad 'pendC) x
      in and (zipWith (closeFD (pendC x)) [gp, gv, gk] (fdGrad pendC (p, v, k)))
  it "takes a list state and a lambda with a constant from around it" $ property $
    forAll (vectorOf 5 (choose (-2, 2))) $ \xs ->
      let g = $(grad 'ringC) xs
      in g === $(grad 'ringP) xs .&&. and (zipWith (closeFD (ringC xs)) g (fdGrad ringC xs))
  it "takes a scalar state, a local step, and zero steps" $ property $
    forAll (choose (0.1, 2)) $ \x -> and (zipWith (closeFD (decay x)) [$(grad 'decay) x] (fdGrad decay x))
  it "records the loop as one node and its output, whatever the steps" $ do
    len <- bracket c_tape_new c_tape_free $ \t -> do
      x <- D 0.5 <$> c_record0 t
      _ <- unAD (checkpointedIterateD 1000 (\y -> timesD y (constD 0.999)) x) t
      c_tape_len t
    len `shouldBe` 3
  it "is iterate's n-th element outside differentiable code" $ do
    checkpointedIterate 5 (* 2) (1 :: Double) `shouldBe` 32
    checkpointedIterateWith 0 3 (map (+ 1)) [1, 2 :: Int] `shouldBe` [4, 5]
  it "reports a differentiated value the step captured from outside its state" $ do
    m <- dualRevError ($(grad 'captured) (1.5, 0.9))
    m `shouldSatisfy` ("pass it in the state" `isInfixOf`)
  it "reports a step that changes the state's shape" $ do
    m <- dualRevError ($(grad 'growing) [1, 2])
    m `shouldSatisfy` ("every step must keep the state's shape" `isInfixOf`)
