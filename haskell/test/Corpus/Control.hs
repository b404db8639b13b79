{-# LANGUAGE TemplateHaskell #-}
-- | Recursion (top-level, local, mutual), higher-order functions, functions
-- returning functions, top-level constants, point-free definitions.
module Corpus.Control where

import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  -- top-level constants
  alpha :: Double
  alpha = 0.3

  weightsP :: Fractional a => [a]
  weightsP = [0.5, 1.5, -2, 3]

  -- top-level recursion
  hornerP :: Num a => [a] -> a -> a
  hornerP [] _ = 0
  hornerP (c : cs) x = c + x * hornerP cs x

  powerRecP :: Num a => Int -> a -> a
  powerRecP 0 _ = 1
  powerRecP n x | even n = let h = powerRecP (n `div` 2) x in h * h
                | otherwise = x * powerRecP (n - 1) x

  recursionP :: Floating a => ([a], a, Int) -> a
  recursionP (cs, x, n) = hornerP cs x + powerRecP n (x / 2) + hornerP weightsP (sin x)

  recursion :: ([Double], Double, Int) -> Double
  recursion t = recursionP t + alpha * let (_, x, _) = t in x

  -- top-level mutual recursion
  evensP :: Floating a => [a] -> a
  evensP [] = 0
  evensP (x : xs) = x * x + oddsP xs

  oddsP :: Floating a => [a] -> a
  oddsP [] = 1
  oddsP (x : xs) = sin x * evensP xs

  mutual :: [Double] -> Double
  mutual xs = evensP xs

  -- local recursion with an accumulator, local mutual recursion
  localRecP :: (Ord a, Floating a) => ([a], a) -> a
  localRecP (xs, y) = go 0 xs + ping 5 y
    where
      go acc [] = acc
      go acc (z : zs) = go (acc * 0.5 + z * y) zs
      ping :: (Ord b, Floating b) => Int -> b -> b
      ping 0 v = v
      ping k v = pong (k - 1) (v * 0.9 + 0.1)
      pong 0 v = v * v
      pong k v = if v > 0 then ping (k - 1) (sin v) else ping (k - 1) (v * v)

  localRec :: ([Double], Double) -> Double
  localRec p = localRecP p

  -- higher-order top-level functions, functions as arguments and results,
  -- polymorphic (unconstrained) higher-order functions
  twiceP :: (a -> a) -> a -> a
  twiceP f = f . f

  applyAllP :: [a -> a] -> a -> a
  applyAllP fs x = foldr (\f acc -> f acc) x fs

  adderP :: Num a => a -> (a -> a)
  adderP k = \v -> v + k

  midpointP :: Fractional a => (a -> a) -> a -> a -> Int -> a
  midpointP f a b n =
    let h = (b - a) / fromIntegral n
    in h * sum [ f (a + h * (fromIntegral i + 0.5)) | i <- [0 .. n - 1] ]

  newtonSqrtP :: Fractional a => Int -> a -> a
  newtonSqrtP steps v = iterate (\g -> 0.5 * (g + v / g)) v !! steps

  higherP :: Floating a => (a, a) -> a
  higherP (x, y) =
    twiceP (* y) x + twiceP sin y + applyAllP [exp, (* 2), adderP y, twiceP (adderP x)] 0.3
    + midpointP (\t -> t * t * x) 0 y 8 + newtonSqrtP 6 (1 + x * x) + (adderP x) y
    + sum (map (adderP y . (* x)) [1, 2, 3])

  higher :: (Double, Double) -> Double
  higher p = higherP p

  -- point-free definitions
  pointFreeP :: (Ord a, Floating a) => [a] -> a
  pointFreeP = sum . map (\v -> v * v) . filter (> (-1.5)) . reverse

  pointFree :: [Double] -> Double
  pointFree = pointFreeP
  |]

spec :: Spec
spec = describe "recursion and higher-order functions" $ do
  checkGradFwd "top-level recursion, constants"
    ((,,) <$> listOf1N 5 dbl <*> dbl <*> choose (0, 7)) recursion
    (\(cs, x, n) -> recursionP (cs, x, n) + 0.3 * x) $(grad 'recursion)
  checkGradFwd "top-level mutual recursion" (listOf1N 7 dbl) mutual evensP $(grad 'mutual)
  checkGradFwd "local recursion and local mutual recursion" ((,) <$> listOf1N 6 dbl <*> dbl) localRec localRecP $(grad 'localRec)
  checkGradFwd "higher-order functions" ((,) <$> dbl <*> pos) higher higherP $(grad 'higher)
  checkGradFwd "point-free definition" (listOf1N 6 dbl) pointFree pointFreeP $(grad 'pointFree)
