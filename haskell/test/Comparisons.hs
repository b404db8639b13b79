{-# LANGUAGE TemplateHaskell #-}
-- | The operands of a comparison are computed for their values alone (no
-- nodes) where no guard is recorded: the same values, branches and
-- gradients; the operands recorded where a taped function records its
-- guards, so that a replay still checks them; and what must be recorded
-- whatever the operand is records there too: a nested derivative, and an
-- element of a lazy list first demanded inside the operand and used again
-- outside it.
module Comparisons (spec) where

import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev
import Numeric.DualRev.Internal.Run.Driver.Taped (tapedRecordings)
import Twins (nodesOf)

differentiable [d|
  -- a norm that only decides the branch
  clipped :: [Double] -> Double
  clipped xs = if sqrt (sum (map (\x -> x * x) xs)) > 1 then sum xs / 2 else sum xs * 3

  -- clipped's first branch alone
  halfSum :: [Double] -> Double
  halfSum xs = sum xs / 2

  -- the norm bound to a name, compared and used
  clippedShared :: [Double] -> Double
  clippedShared xs =
    let n = sqrt (sum (map (\x -> x * x) xs))
    in if n > 1 then n * sum xs else sum xs

  -- an element of a lazy list first demanded inside the comparison
  lazyFirst :: Double -> Double
  lazyFirst x =
    let ys = iterate (\y -> y * y + x) x
    in if ys !! 3 * 2 > 0 then ys !! 3 else negate (ys !! 3)

  -- a nested derivative inside the operand decides the branch
  nestedOperand :: Double -> Double
  nestedOperand x = if derivative (\y -> y * y * x) x > 0 then x * x else x * x * x

  -- compare and (==) on computed values
  ordered :: (Double, Double) -> Double
  ordered (a, b) = case compare (a * a) (b + 1) of
    LT -> a * b
    EQ -> 0
    GT -> if a * 2 == b * 3 then a else a - b
  |]

spec :: Spec
spec = describe "comparisons' operands" $ do
  it "record no nodes where no guard is recorded" $ do
    -- at (1, 2) the norm is above 1: clipped records halfSum's nodes alone
    n <- nodesOf 1 clipped'drw [1, 2]
    m <- nodesOf 1 halfSum'drw [1, 2]
    m `shouldSatisfy` (> 0)
    n `shouldBe` m
  checkGrad "a norm that only decides the branch" (vecOf 2 dbl) clipped $(grad 'clipped)
  checkGrad "the norm bound to a name, compared and used" (vecOf 2 dbl) clippedShared $(grad 'clippedShared)
  checkGrad "a lazy list's element first demanded inside the operand" (choose (-0.9, 0.9)) lazyFirst $(grad 'lazyFirst)
  -- (against closed forms: called directly, the block's function runs
  -- its differentiable version, the same operand)
  it "a nested derivative inside the operand" $ property $ forAll (dbl `suchThat` ((> 1e-3) . abs)) $ \x ->
    -- d/dy (y y x) at y = x is 2 x^2 > 0: the first branch
    (nestedOperand x, $(grad 'nestedOperand) x) === (x * x, 2 * x)
  checkGrad "compare and (==)" ((,) <$> dbl <*> dbl) ordered $(grad 'ordered)
  it "are recorded for a taped function's guards: a flipped branch records again" $ do
    let g = $(tapedGrad 'clipped)
    r0 <- tapedRecordings
    g [1, 2] `shouldBe` [0.5, 0.5]
    g [2, 1] `shouldBe` [0.5, 0.5]     -- replayed: the norm still above 1
    r1 <- tapedRecordings
    g [0.1, 0.2] `shouldBe` [3, 3]     -- below 1: the guard flips
    r2 <- tapedRecordings
    (r1 - r0, r2 - r1) `shouldBe` (1, 1)
