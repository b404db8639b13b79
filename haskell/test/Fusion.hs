{-# OPTIONS_GHC -Wno-name-shadowing #-}
{-# LANGUAGE TemplateHaskell #-}
-- | Sums fused with the list they sum (@sum (map f xs)@, @sum (zipWith f xs
-- ys)@ run as one loop, with no list in between) give the value and the
-- gradient of the unfused program to the bit; long input lists (whose
-- read-out learns its length from the input walk) give exact gradients.
module Fusion (spec) where

import Test.Hspec
import Test.QuickCheck

import Check (closeFD, fdGrad)
import Numeric.DualRev

differentiable [d|
  dotFused :: ([Double], [Double]) -> Double
  dotFused (xs, ys) = sum (zipWith (*) xs ys)

  -- the same sum of the same list, kept apart: not fused
  dotApart :: ([Double], [Double]) -> Double
  dotApart (xs, ys) = let ps = zipWith (*) xs ys in sum ps

  -- terms that are constants (no node) between active ones
  mixedFused :: [Double] -> Double
  mixedFused xs = sum (map (\x -> if x > 0 then x * x else 3) xs)

  mixedApart :: [Double] -> Double
  mixedApart xs = let ts = map (\x -> if x > 0 then x * x else 3) xs in sum ts

  -- a fused sum of fused sums
  matVecFused :: ([[Double]], [Double]) -> Double
  matVecFused (m, v) = sum (map (\row -> sum (zipWith (*) row v)) m)

  matVecApart :: ([[Double]], [Double]) -> Double
  matVecApart (m, v) = let rs = map (\row -> let ps = zipWith (*) row v in sum ps) m in sum rs

  -- a sum of the block's own is not the Prelude's: nothing to fuse
  ownSum :: [Double] -> Double
  ownSum xs = sum (map sin xs)
    where sum = foldr (+) 1  -- (shadows the Prelude's on purpose)

  -- two long lists and a scalar
  longPair :: (([Double], Double), [Double]) -> Double
  longPair ((xs, s), ys) = s * sum (zipWith (*) xs ys)
  |]

genList :: Gen [Double]
genList = do
  n <- choose (0, 40)
  vectorOf n (choose (-3, 3))

spec :: Spec
spec = describe "fused sums" $ do
  it "sum (zipWith (*) xs ys): value and gradient of the unfused program, to the bit" $
    property $ forAll genList $ \xs -> forAll genList $ \ys ->
      $(grad 'dotFused) (xs, ys) === $(grad 'dotApart) (xs, ys)
        .&&. fst ($(differentiate 'dotFused) (xs, ys)) === fst ($(differentiate 'dotApart) (xs, ys))
  it "sum (map f xs) with constant terms: the same to the bit" $
    property $ forAll genList $ \xs ->
      $(grad 'mixedFused) xs === $(grad 'mixedApart) xs
        .&&. fst ($(differentiate 'mixedFused) xs) === fst ($(differentiate 'mixedApart) xs)
  it "a sum over rows of row sums: the same to the bit, and central differences agree" $
    property $ forAll (choose (0, 6)) $ \k -> forAll (vectorOf k (vectorOf k (choose (-2, 2)))) $ \m ->
      forAll (vectorOf k (choose (-2, 2))) $ \v ->
        $(grad 'matVecFused) (m, v) === $(grad 'matVecApart) (m, v)
          .&&. and (zipWith (closeFD (matVecFused (m, v))) (snd ($(grad 'matVecFused) (m, v)))
                                (fdGrad (\w -> matVecFused (m, w)) v))
  it "an empty sum is 0 with an empty gradient" $ do
    $(grad 'dotFused) ([], []) `shouldBe` ([], [])
    fst ($(differentiate 'dotFused) ([], [])) `shouldBe` 0
  it "a sum the block defines itself is used as defined" $
    property $ forAll genList $ \xs ->
      fst ($(differentiate 'ownSum) xs) === foldr (+) 1 (map sin xs)
  it "long input lists: exact gradients (ys, xs) of a dot product, every time" $ do
    let n = 20000 :: Int
        xs = map fromIntegral [1 .. n]
        ys = map (\i -> fromIntegral (2 * i + 1)) [1 .. n]
        ((gxs, gs), gys) = $(grad 'longPair) ((xs, 2), ys)
    gxs `shouldBe` map (* 2) ys
    gys `shouldBe` map (* 2) xs
    gs `shouldBe` sum (zipWith (*) xs ys)
    -- the backpropagator of a long list, applied twice
    let (_, back) = $(differentiate 'longPair) ((xs, 2), ys)
    map (fst . fst . back) [1, 3] `shouldBe` [map (* 2) ys, map (* 6) ys]
