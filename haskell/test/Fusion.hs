{-# OPTIONS_GHC -Wno-name-shadowing #-}
{-# LANGUAGE TemplateHaskell #-}
-- | Sums fused with the list they sum (@sum (map f xs)@, @sum (zipWith f xs
-- ys)@ run as one loop, with no list in between) give the value and the
-- gradient of the unfused program to the bit; long input lists (whose
-- read-out learns its length from the input walk) give exact gradients.
module Fusion (spec) where

import Control.Exception (ErrorCall (..), evaluate, try)
import Test.Hspec
import Test.QuickCheck

import Check (closeFD, fdGrad)
import Numeric.DualRev
import Numeric.DualRev.Internal.Run.Scalar.AD (constD)
import Twins (nodesOf, sameGrad)

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

  -- the square of a sum of products, fused and op by op: on a tape of
  -- order 2 each batch of the fused sum is recorded from the sum before it
  dotSquared :: [Double] -> Double
  dotSquared xs = let d = sum (zipWith (*) xs (reverse xs)) in d * d

  dotSquaredLoop :: [Double] -> Double
  dotSquaredLoop xs = let d = go 0 xs (reverse xs) in d * d
    where
      go acc (a : as) (b : bs) = go (acc + a * b) as bs
      go acc _ _ = acc

  -- a matrix given as rows
  rowSquares :: [[Double]] -> Double
  rowSquares m = sum (map (\r -> sum (map (\x -> x * x) r)) m)

  -- products whose factors are themselves recorded when first used
  dotOfSquares :: [Double] -> Double
  dotOfSquares xs = sum (zipWith (*) (map (\x -> x * x) xs) xs)

  -- a minimum or maximum over computed elements (each winner's nodes
  -- kept, each loser's taken back) against the same over a list kept apart
  nearest :: ([[Double]], [[Double]]) -> Double
  nearest (cs, ps) = sum [ minimum [ dist2 p c | c <- cs ] | p <- ps ]

  nearestApart :: ([[Double]], [[Double]]) -> Double
  nearestApart (cs, ps) = sum [ let ds = [ dist2 p c | c <- cs ] in minimum ds | p <- ps ]

  dist2 :: [Double] -> [Double] -> Double
  dist2 a b = sum (zipWith (\u v -> (u - v) * (u - v)) a b)

  -- maximum of map, and of a comprehension of two generators with a filter
  -- and a let, ties included (integer-valued inputs)
  widest :: [Double] -> Double
  widest xs = maximum (map (\x -> x * x - x) xs)
              + maximum [ a * b + c | a <- xs, b <- xs, a /= b, let c = sin a ]

  widestApart :: [Double] -> Double
  widestApart xs = let ws = map (\x -> x * x - x) xs
                       ps = [ a * b + c | a <- xs, b <- xs, a /= b, let c = sin a ]
                   in maximum ws + maximum ps

  -- elements that demand a lazily recorded list made outside them (its
  -- cells recorded by whichever element first reaches them)
  powersMin :: [Double] -> Double
  powersMin xs = let ps = iterate (* head xs) 1
                 in minimum [ x * sum (take k ps) | (k, x) <- zip [1 ..] xs ] + sum (take 4 ps)
  |]

-- k centroids and n points in d dimensions
genNearest :: Gen ([[Double]], [[Double]])
genNearest = do
  d <- choose (1, 4)
  k <- choose (1, 8)
  n <- choose (0, 6)
  (,) <$> vectorOf k (vectorOf d (choose (-2, 2))) <*> vectorOf n (vectorOf d (choose (-2, 2)))

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
  it "the Hessian of a fused sum of products over several batches: the op-by-op program's" $
    property $ forAll (choose (0, 100)) $ \n -> forAll (vectorOf n (choose (-2, 2))) $ \xs ->
      let hF = $(hessian 'dotSquared) xs
          hL = $(hessian 'dotSquaredLoop) xs
      in counterexample (show (hF, hL)) $
           fst ($(differentiate 'dotSquared) xs) === fst ($(differentiate 'dotSquaredLoop) xs)
             .&&. length hF === n
             .&&. and (zipWith (sameGrad 1e-12) hF hL)
  it "a sum of products whose factors record their own nodes: central differences agree" $
    property $ forAll (choose (0, 80)) $ \n -> forAll (vectorOf n (choose (-2, 2))) $ \xs ->
      and (zipWith (closeFD (dotOfSquares xs)) ($(grad 'dotOfSquares) xs) (fdGrad dotOfSquares xs))
  it "an element that raises inside a sum of products: that error, and the next gradient is right" $ do
    let xs = map fromIntegral [1 .. 50 :: Int]
        bad = take 40 xs ++ [error "element 41"] ++ drop 41 xs
    r <- try (evaluate (sum (fst ($(grad 'dotFused) (bad, xs)))))
    case r of
      Left (ErrorCall m) -> m `shouldBe` "element 41"
      Right v -> expectationFailure ("no error, " ++ show v)
    $(grad 'dotFused) (xs, reverse xs) `shouldBe` (reverse xs, xs)
  it "rows of many lengths (read out by the length the tape noted): exact gradients, also after a failed run" $ do
    let rowsOf lens = [[fromIntegral (i + j) / 7 | j <- [1 .. len]] | (i, len) <- zip [1 :: Int ..] lens]
        twice = map (map (* 2))
        -- lengths on both sides of where the input walk's copy of a row
        -- first grows (64), of the longest row copied to the heap (4096)
        -- and of the longest read-out in a pinned array (128)
        m1 = rowsOf [300, 129, 128, 1, 5000, 0, 200, 64, 65, 4096, 4097]
    $(grad 'rowSquares) m1 `shouldBe` twice m1
    -- a run whose input walk fails after its tape noted the first rows'
    -- lengths, then rows of other lengths: the failed run's notes go with
    -- its tape and must not size the later run's read-out
    let broken = rowsOf [300, 200] ++ [[1, 2] ++ error "a row's spine"]
    r <- try (evaluate (length (concat ($(grad 'rowSquares) broken))))
    either (\(ErrorCall m) -> m `shouldBe` "a row's spine") (\v -> expectationFailure (show v)) r
    let m2 = rowsOf [150, 400, 3]
    $(grad 'rowSquares) m2 `shouldBe` twice m2
    -- a long row whose spine raises after the input walk's buffer has
    -- grown several times: that error, the buffer freed once, and the
    -- next gradient right
    let longBroken = [map fromIntegral [1 .. 20000 :: Int] ++ error "a long row's spine"]
    r2 <- try (evaluate (length (concat ($(grad 'rowSquares) longBroken))))
    either (\(ErrorCall m) -> m `shouldBe` "a long row's spine") (\v -> expectationFailure (show v)) r2
    $(grad 'rowSquares) m2 `shouldBe` twice m2
  -- (second order to rounding: the Hessian's driver chooses its method by
  -- the tape's size, which the rewound nodes change)
  it "minimum over a comprehension: value and gradient of the unfused program to the bit, its Hessian-vector product" $
    property $ forAll genNearest $ \(cs, ps) ->
      let ones = map (map (const 1)) cs
      in $(grad 'nearest) (cs, ps) === $(grad 'nearestApart) (cs, ps)
           .&&. sameGrad 1e-12 (concat (fst ($(hvp 'nearest) (cs, ps) (ones, ps))))
                               (concat (fst ($(hvp 'nearestApart) (cs, ps) (ones, ps))))
           .&&. and (zipWith (closeFD (nearest (cs, ps))) (concat (fst ($(grad 'nearest) (cs, ps))))
                                (fdGrad (\c -> nearest (c, ps)) cs))
  it "minimum over a comprehension records the nodes of the winners so far, not of every element" $ do
    -- the centroids nearest first: one element kept a point, the others
    -- rewound; farthest first: every element a new best, all kept
    let cs = [[fromIntegral i, 0] | i <- [0 .. 9 :: Int]]
        ps = [[constD (-1), constD 0], [constD (-2), constD 0]]
        run xs = nearest'drw (chunk xs, ps)
        chunk (a : b : rest) = [a, b] : chunk rest
        chunk _ = []
    nearFirst <- nodesOf 1 run (concat cs)
    farFirst <- nodesOf 1 run (concat (reverse cs))
    apart <- nodesOf 1 (\xs -> nearestApart'drw (chunk xs, ps)) (concat cs)
    (nearFirst < farFirst, farFirst <= apart, 5 * nearFirst < apart) `shouldBe` (True, True, True)
  -- (an input's adjoint may gather its terms in another order: to rounding)
  it "maximum of map and of a comprehension with two generators, a filter and ties: the unfused program's gradient and Hessian" $
    property $ forAll (choose (1, 7)) $ \n -> forAll (vectorOf n (fromIntegral <$> (choose (-3, 3) :: Gen Int))) $ \xs ->
      let ok = length xs >= 2 && any (/= head xs) xs
      in ok ==> fst ($(differentiate 'widest) xs) === fst ($(differentiate 'widestApart) xs)
                  .&&. sameGrad 1e-12 ($(grad 'widest) xs) ($(grad 'widestApart) xs)
                  .&&. and (zipWith (sameGrad 1e-12) ($(hessian 'widest) xs) ($(hessian 'widestApart) xs))
  it "a minimum whose elements demand a lazily recorded list: central differences agree" $
    property $ forAll (choose (1, 6)) $ \n -> forAll (vectorOf n (choose (-1.5, 1.5))) $ \xs ->
      and (zipWith (closeFD (powersMin xs)) ($(grad 'powersMin) xs) (fdGrad powersMin xs))
  it "minimum of an empty comprehension: the Prelude's error" $ do
    r <- try (evaluate (fst ($(grad 'nearest) ([], [[1]]))))
    either (\(ErrorCall m) -> m `shouldBe` "Prelude.minimum: empty list") (\v -> expectationFailure (show v)) r
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
