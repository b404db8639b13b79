{-# OPTIONS_GHC -Wno-name-shadowing #-}
{-# LANGUAGE TemplateHaskell #-}
-- | @sum (zipWith (*) xs ys)@ recorded as statements (one tape node per
-- batch of products, its partials computed when it is recorded) against
-- the same sum recorded one operation at a time (the lambda @\\a b -> a *
-- b@ is not rewritten): the same values to the bit, gradients equal to
-- rounding and to central differences, with constants among the factors,
-- repeated factors, shared sums, nested sums, empty and unequal lists,
-- lists across the batch boundaries, second order and nesting (where a
-- statement's partials would be wrong: its nodes are linear there), and
-- the node count that makes it a statement.
module Statement (spec) where

import Control.Exception (bracket)
import Data.Int (Int64)
import Foreign.Ptr (Ptr)
import Test.Hspec
import Test.QuickCheck

import Check (closeRel)
import Twins (agrees)
import Numeric.DualRev
import Numeric.DualRev.Internal.Engine.FFI (CTape, c_record0, c_tape_free, c_tape_len, c_tape_new)
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Engine.ScalarFFI (c_fe_dot_chunk)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..), D (..))
import Numeric.DualRev.Internal.Run.Scalar.Ops (sumZipWithTimesD)

differentiable [d|
  dotS, dotO :: ([Double], [Double]) -> Double
  dotS (xs, ys) = sum (zipWith (*) xs ys)
  dotO (xs, ys) = sum (zipWith (\a b -> a * b) xs ys)

  -- constants among the factors: literals, and values chosen by a test
  mixedS, mixedO :: ([Double], [Double]) -> Double
  mixedS (xs, ys) = sum (zipWith (*) (2 : xs) (map clip ys ++ [3, 4])) + 1
    where clip y = if y > 0 then y else 0.5
  mixedO (xs, ys) = sum (zipWith (\a b -> a * b) (2 : xs) (map clip ys ++ [3, 4])) + 1
    where clip y = if y > 0 then y else 0.5

  -- a factor repeated in a product (x * x) and across products
  squaresS, squaresO :: [Double] -> Double
  squaresS xs = sum (zipWith (*) xs xs) + sum (zipWith (*) xs (reverse xs))
  squaresO xs = sum (zipWith (\a b -> a * b) xs xs) + sum (zipWith (\a b -> a * b) xs (reverse xs))

  -- a sum used twice, and inside another
  sharedS, sharedO :: ([Double], [Double]) -> Double
  sharedS (xs, ys) = let s = sum (zipWith (*) xs ys) in s * s + sum (zipWith (*) (map (* s) xs) ys)
  sharedO (xs, ys) =
    let s = sum (zipWith (\a b -> a * b) xs ys) in s * s + sum (zipWith (\a b -> a * b) (map (* s) xs) ys)

  -- sums of products of sums of products
  nestedS, nestedO :: ([[Double]], [Double]) -> Double
  nestedS (m, v) = sum (zipWith (*) v (map (\r -> sum (zipWith (*) r v)) m))
  nestedO (m, v) = sum (zipWith (\a b -> a * b) v (map (\r -> sum (zipWith (\a b -> a * b) r v)) m))

  -- the nonlinear part that second order sees: x . (x * y)
  cubicS, cubicO :: ([Double], [Double]) -> Double
  cubicS (xs, ys) = sum (zipWith (*) xs (zipWith (*) xs ys))
  cubicO (xs, ys) = sum (zipWith (\a b -> a * b) xs (zipWith (\a b -> a * b) xs ys))

  -- a derivative taken inside: d/dy (y^2 x1 + y x2 ...) at y = x1
  innerS, innerO :: [Double] -> Double
  innerS xs = derivative (\y -> sum (zipWith (*) (map (* y) xs) (map (* y) xs))) (head xs)
  innerO xs = derivative (\y -> sum (zipWith (\a b -> a * b) (map (* y) xs) (map (* y) xs))) (head xs)
  |]

-- | Lists whose lengths cross the batches of products (DR_FE_DOT_CHUNK).
genList :: Gen [Double]
genList = do
  let b = fromIntegral c_fe_dot_chunk
  n <- elements ([0 .. 6] ++ [b - 1, b, b + 1, 2 * b, 2 * b + 1, 3 * b + 4])
  vectorOf n (choose (-3, 3))

-- | Two lists of the same length.
genPair :: Gen ([Double], [Double])
genPair = do
  xs <- genList
  ys <- vectorOf (length xs) (choose (-3, 3))
  pure (xs, ys)

spec :: Spec
spec = describe "sums of products as statements" $ do
  it "sum (zipWith (*) xs ys): the op-by-op value to the bit, its gradient, central differences" $
    property $ forAll genPair $ agrees dotS dotO $(grad 'dotS) $(grad 'dotO)
  it "unequal lengths, and empty lists" $ do
    $(grad 'dotS) ([1, 2, 3], [4, 5]) `shouldBe` ([4, 5, 0], [1, 2])
    $(grad 'dotS) ([], [4, 5]) `shouldBe` ([], [0, 0])
    fst ($(differentiate 'dotS) ([], [])) `shouldBe` 0
    fst ($(differentiate 'dotS) ([1, 2, 3], [4, 5])) `shouldBe` 14
  it "constants among the factors" $
    property $ forAll genPair $ agrees mixedS mixedO $(grad 'mixedS) $(grad 'mixedO)
  it "repeated factors (x * x, and x_i * x_(n-1-i))" $
    property $ forAll genList $ \xs ->
      agrees squaresS squaresO $(grad 'squaresS) $(grad 'squaresO) xs
  it "a sum used twice and inside another sum" $
    property $ forAll genPair $ agrees sharedS sharedO $(grad 'sharedS) $(grad 'sharedO)
  it "sums of products of sums of products" $
    property $ forAll (elements [0, 1, 3, 33]) $ \k -> forAll (vectorOf k (vectorOf k (choose (-2, 2)))) $ \m ->
      forAll (vectorOf k (choose (-2, 2))) $ \v ->
        agrees nestedS nestedO $(grad 'nestedS) $(grad 'nestedO) (m, v)
  it "second order: the Hessian of the op-by-op program, and its closed form" $
    property $ forAll genList $ \xs -> forAll (vectorOf (length xs) (choose (-2, 2))) $ \ys ->
      let k = length xs
          hS = $(hessian 'cubicS) (xs, ys)
          hO = $(hessian 'cubicO) (xs, ys)
          flat = concatMap (\(a, b) -> a ++ b)
          -- f = sum x_i^2 y_i: d2f/dx_i^2 = 2 y_i, d2f/dx_i dy_i = 2 x_i
          exact = [ if i == j && i < k then 2 * ys !! i
                    else if i < k && j == i + k || j < k && i == j + k then 2 * xs !! min i j
                    else 0
                  | i <- [0 .. 2 * k - 1], j <- [0 .. 2 * k - 1] ]
      in length hS === 2 * k .&&. flat hS === flat hO .&&. and (zipWith (closeRel 1e-12) (flat hS) exact)
  it "a derivative taken inside: the op-by-op value and gradient" $
    -- (derivative has no value outside differentiable code: the values
    -- come from differentiate)
    property $ forAll genList $ \xs0 ->
      agrees (fst . $(differentiate 'innerS)) (fst . $(differentiate 'innerO))
             $(grad 'innerS) $(grad 'innerO) (1 : xs0)
  it "records one node per batch of products (DR_FE_DOT_CHUNK), whatever the constants" $ do
    let b = fromIntegral c_fe_dot_chunk
    mapM (\n -> nodesWith n (const False) (const False)) [0, 1, b - 1, b, b + 1, 2 * b, 2 * b + 1, 3 * b + 4]
      `shouldReturn` [0, 1, 1, 1, 2, 2, 3, 4]
    -- all constants: no node; constants on one side only: still one node
    nodesWith (b + 8) (const True) (const True) `shouldReturn` 0
    nodesWith (b + 8) (const False) even `shouldReturn` 2
  it "the value of a recorded sum of products is the left fold of the products" $
    property $ forAll genList $ \xs -> forAll (vectorOf (length xs) (choose (-3, 3))) $ \ys ->
      fst ($(differentiate 'dotS) (xs, ys)) === foldl (\s (x, y) -> s + x * y) 0 (zip xs ys)
        .&&. closeRel 1e-12 (dotS (xs, ys)) (foldl (+) 0 (zipWith (*) xs ys))

-- | Nodes that sumZipWithTimesD records for n products of inputs, the
-- left factor i a constant where constA i, the right where constB i.
nodesWith :: Int -> (Int -> Bool) -> (Int -> Bool) -> IO Int
nodesWith n constA constB = bracket c_tape_new c_tape_free $ \t -> do
  _ <- c_tape_set_order t 1
  let input c v = if c then pure (D v (-1)) else D v <$> (c_record0 t :: IO Int64)
  as <- mapM (\i -> input (constA i) (fromIntegral i)) [0 .. n - 1]
  bs <- mapM (\i -> input (constB i) (fromIntegral (2 * i))) [0 .. n - 1]
  before <- c_tape_len t
  _ <- unAD (sumZipWithTimesD as bs :: AD D) (t :: Ptr CTape)
  after <- c_tape_len t
  pure (fromIntegral (after - before))
