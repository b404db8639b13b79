{-# LANGUAGE TemplateHaskell #-}
-- | The Prelude list functions, used directly.
module Corpus.Lists where

import Data.List (foldl')
import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  -- map zipWith zipWith3 zip zip3 unzip unzip3
  zipsP :: Floating a => ([a], [a], [a]) -> a
  zipsP (xs, ys, zs) =
    let (as, bs) = unzip (zip xs ys)
        (cs, ds, es) = unzip3 (zip3 zs ys xs)
    in sum (map sin xs) + sum (zipWith (*) as bs) + sum (zipWith3 (\a b c -> a * b + c) cs ds es)
       + sum (map (\(p, q) -> p - q) (zip ys zs))

  zips :: ([Double], [Double], [Double]) -> Double
  zips t = zipsP t

  -- foldr foldl foldl' foldr1 foldl1 sum product
  foldsP :: Floating a => [a] -> a
  foldsP xs =
    foldr (\x acc -> x + 0.5 * acc) 1 xs + foldl (\acc x -> acc * 0.9 + sin x) 0 xs
    + foldl' (+) 0 (map (* 2) xs) + foldr1 (\x acc -> x * acc + 1) xs
    + foldl1 (\acc x -> acc - x * x) xs + sum xs + product (map (\x -> 1 + x / 4) xs)

  folds :: [Double] -> Double
  folds xs = foldsP xs

  -- maximum minimum length null
  extremaP :: (Ord a, Floating a) => [a] -> a
  extremaP xs = maximum xs * minimum xs + fromIntegral (length xs) * maximum (map (\x -> x * x) xs)
                + (if null xs then 0 else minimum (map negate xs)) + (if null (tail xs) then 1 else 2)

  extrema :: [Double] -> Double
  extrema xs = extremaP xs

  -- head tail last init (!!) take drop splitAt
  indexingP :: Floating a => [a] -> a
  indexingP xs =
    let n = length xs
        (l, r) = splitAt (n `div` 2) xs
    in head xs * last xs + sum (tail xs) + sum (init xs) * (xs !! (n - 1)) + xs !! 0
       + sum (take 2 xs) * sum (drop 1 xs) + sum l - 2 * sum r

  indexing :: [Double] -> Double
  indexing xs = indexingP xs

  -- replicate reverse (++) concat concatMap
  buildingP :: Floating a => [a] -> a
  buildingP xs =
    let ys = reverse xs ++ replicate 3 (head xs) ++ concat [xs, [1, 2], reverse xs]
        zs = concatMap (\x -> [x, x * x, sin x]) xs
    in sum (zipWith (*) ys (map fromIntegral [1 .. length ys])) + sum zs

  building :: [Double] -> Double
  building xs = buildingP xs

  -- iterate, lazily: take n (iterate f x) and (iterate f x !! n)
  iteratingP :: Floating a => (a, a) -> a
  iteratingP (x, r) =
    let logistic v = r * v * (1 - v)
    in sum (take 6 (iterate logistic x)) + iterate (\v -> v * 0.5 + sin v) x !! 4
       + head (iterate (* 2) r)

  iterating :: (Double, Double) -> Double
  iterating p = iteratingP p

  -- filter takeWhile dropWhile
  filteringP :: (Ord a, Floating a) => [a] -> a
  filteringP xs =
    sum (filter (> 0) xs) * 2 + sum (map (\x -> x * x) (filter (\x -> x < 0.5) xs))
    + sum (takeWhile (> (-1)) xs) + product (dropWhile (< 1) xs)

  filtering :: [Double] -> Double
  filtering xs = filteringP xs

  -- and or any all elem notElem
  boolsP :: (Ord a, Floating a) => ([a], [Int]) -> a
  boolsP (xs, ks) =
    (if and (map (> (-1.5)) xs) then sum xs else 0)
    + (if or [x > 1 | x <- xs] then product xs else 1)
    + (if any (< 0) xs then maximum xs else minimum xs)
    + (if all (\x -> x * x < 1) xs then sum (map sin xs) else 0)
    + (if 2 `elem` ks || 1.5 `notElem` xs then 3 * head xs else 2 * last xs)
    + (if elem (head xs) (tail xs) then 0 else sum xs)

  bools :: ([Double], [Int]) -> Double
  bools p = boolsP p

  -- lookup with maybe
  lookingP :: Floating a => ([(Int, a)], [Int]) -> a
  lookingP (table, keys) =
    sum [ maybe 1 (\v -> v * v) (lookup k table) | k <- keys ]
    + maybe 0 sin (lookup 0 table)

  looking :: ([(Int, Double)], [Int]) -> Double
  looking p = lookingP p

  -- scanl scanr
  scansP :: Floating a => [a] -> a
  scansP xs = sum (scanl (\acc x -> acc * x + 1) 0.5 xs) + sum (scanr (\x acc -> sin x + acc * 0.5) 1 xs)
              + last (scanl (+) 0 xs)

  scans :: [Double] -> Double
  scans xs = scansP xs

  -- fst snd id const flip curry uncurry maybe either
  combinatorsP :: Floating a => ((a, a), Maybe a, Either a (a, a)) -> a
  combinatorsP (p, m, e) =
    fst p * snd p + id (fst p) + const (snd p) (fst p) + flip (-) (fst p) (snd p)
    + curry (\(a, b) -> a * b * b) (fst p) (snd p) + uncurry (\a b -> a / (1 + b * b)) p
    + maybe (fst p) (\v -> v * snd p) m + either sin (uncurry (*)) e
    + sum (zipWith (flip (/)) [1, 2] [fst p, 3]) + sum (map (const 2) [p])

  combinators :: ((Double, Double), Maybe Double, Either Double (Double, Double)) -> Double
  combinators t = combinatorsP t

  -- Prelude functions passed as values and partially applied
  asValuesP :: (Ord a, Floating a) => [[a]] -> a
  asValuesP xss =
    sum (map sum xss) + sum (map (foldr (+) 0) xss) + sum (map product xss)
    + fromIntegral (sum (map length xss)) + sum (concatMap (take 1) xss)
    + sum (uncurry (zipWith (*)) (head xss, last xss)) + sum (foldr (++) [] xss)
    + sum (concatMap (replicate 2) (head xss)) + sum (map fst (zip (head xss) xss))
    + sum (map (\ys -> ys !! 1) (map (iterate (* 2)) (head xss)))
    + sum (map maximum xss) + sum (zipWith3 (\a b c -> a * b * c) (head xss) (last xss) (head xss))
    + sum (map (uncurry (+)) (zip (head xss) (last xss))) + sum (map (flip (-) 1) (head xss))
    + sum (map (curry fst 2) (head xss)) + sum (map (either id negate) [Left (head (head xss)), Right 3])
    + sum (map (maybe 0 (* 2)) [Just (last (last xss)), Nothing]) + sum (map (foldl1 max) xss)

  asValues :: [[Double]] -> Double
  asValues xss = asValuesP xss
  |]

spec :: Spec
spec = describe "Prelude list functions" $ do
  checkGradFwd "map zipWith zipWith3 zip zip3 unzip unzip3"
    (choose (1, 5) >>= \n -> (,,) <$> vecOf n dbl <*> vecOf n dbl <*> vecOf (n + 1) dbl) zips zipsP $(grad 'zips)
  checkGradFwd "foldr foldl foldl' foldr1 foldl1 sum product" (listOf1N 6 dbl) folds foldsP $(grad 'folds)
  checkGradFwd "maximum minimum length null" (listOf1N 6 dbl) extrema extremaP $(grad 'extrema)
  checkGradFwd "head tail last init (!!) take drop splitAt" (listOf1N 7 dbl) indexing indexingP $(grad 'indexing)
  checkGradFwd "replicate reverse (++) concat concatMap" (listOf1N 5 dbl) building buildingP $(grad 'building)
  checkGradFwd "iterate" ((,) <$> choose (0.1, 0.9) <*> choose (1, 3.5)) iterating iteratingP $(grad 'iterating)
  checkGradFwd "filter takeWhile dropWhile" (listOf1N 7 dbl) filtering filteringP $(grad 'filtering)
  checkGradFwd "and or any all elem notElem" ((,) <$> listOf1N 5 dbl <*> listOf1N 3 (choose (0, 3))) bools boolsP $(grad 'bools)
  checkGradFwd "lookup maybe"
    ((,) <$> listOf1N 4 ((,) <$> choose (0, 4) <*> dbl) <*> listOf1N 5 (choose (0, 5))) looking lookingP $(grad 'looking)
  checkGradFwd "scanl scanr" (listOf1N 6 dbl) scans scansP $(grad 'scans)
  checkGradFwd "fst snd id const flip curry uncurry maybe either"
    ((,,) <$> ((,) <$> dbl <*> dbl) <*> oneof [pure Nothing, Just <$> dbl]
          <*> oneof [Left <$> dbl, (\a b -> Right (a, b)) <$> dbl <*> dbl])
    combinators combinatorsP $(grad 'combinators)
  checkGradFwd "Prelude functions as values, partially applied"
    (choose (1, 4) >>= \n -> listOf1N 3 (vecOf n dbl)) asValues asValuesP $(grad 'asValues)
