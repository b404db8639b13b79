{-# LANGUAGE TemplateHaskell #-}
-- | Compositionality: later blocks (in this module and in another one) use
-- the functions, types, constructors and selectors of earlier blocks by name.
module Corpus.Cross where

import Test.Hspec
import Test.QuickCheck

import Check
import Corpus.Data (P (..), Pair (..), V3 (..), centroid, crossV, dotV, pa, pb)
import Corpus.Numeric (floating1, floating1P)
import Numeric.DualRev

-- a first block in this module
differentiable [d|
  sqP :: Num a => a -> a
  sqP x = x * x

  data Acc = Acc Double Int
    deriving (Eq, Show)

  norm2P :: Num a => [a] -> a
  norm2P xs = sum (map sqP xs)

  bump :: Acc -> Double -> Acc
  bump (Acc s n) x = Acc (s + x) (n + 1)
  |]

-- a later block: this module's first block and Corpus.Data's and
-- Corpus.Numeric's blocks, by name
differentiable [d|
  crossUseP :: Floating a => ([a], V3 a, V3 a) -> a
  crossUseP (xs, u, v) =
    norm2P xs + sqP (dotV u v) + dotV (crossV u v) (crossV v u) + floating1P xs
    + sum (map (\p -> pa p * pb p) [Pair (head xs) (last xs), Pair 2 (sqP (head xs))])

  crossUse :: ([Double], V3 Double, V3 Double) -> Double
  crossUse t = crossUseP t

  crossMono :: ([P], [Double]) -> Double
  crossMono (ps, xs) =
    let P cx cy = centroid (P 1 2 : map (\(P a b) -> P (a * 2) b) ps)
        Acc s n = foldl bump (Acc 0 0) xs
        qs = zipWith P xs (reverse xs)
    in cx * cy + s * s / fromIntegral n + floating1 xs + sum [a * b | P a b <- qs]
  |]

spec :: Spec
spec = describe "compositionality (definitions from earlier blocks and other modules)" $ do
  let genV3 = V3 <$> dbl <*> dbl <*> dbl
  checkGradFwd "polymorphic definitions, types and selectors of other blocks"
    ((,,) <$> listOf1N 5 dbl <*> genV3 <*> genV3) crossUse crossUseP $(grad 'crossUse)
  checkGrad "monomorphic types and functions of other blocks"
    ((,) <$> listOf1N 4 (P <$> dbl <*> dbl) <*> listOf1N 4 dbl) crossMono $(grad 'crossMono)
  it "grad of a function from another module's block" $ property $ forAll (listOf1N 5 dbl) $
    gradProp floating1 $(grad 'floating1)
