{-# LANGUAGE BangPatterns #-}
-- | The cost of fdotprod's interface alone, in plain Haskell: two boxed
-- input lists walked once (the dot product, a left fold), and two fresh
-- gradient lists (dx_i = y_i, dy_i = x_i) produced and summed, the way the
-- benchmark harness (DualrevBench.hs) perturbs, calls and reads each
-- repetition.  No tape, no derivative code: what any gradient of
-- @([Double], [Double]) -> Double@ pays per element before it records
-- anything.
--
-- > ghc -O2 -rtsopts bench/hs/ListFloor.hs -outputdir /tmp/lf -o /tmp/list-floor
-- > /tmp/list-floor fdotprod <n> <reps>
module Main (main) where

import Control.Exception (evaluate)
import Data.List (foldl')
import System.Environment (getArgs)

bump :: Double -> [Double] -> [Double]
bump e (x : xs) = x + e : xs
bump _ [] = []

gradient :: ([Double], [Double]) -> (Double, ([Double], [Double]))
gradient (xs, ys) =
  let !v = foldl' (+) 0 (zipWith (*) xs ys)
  in (v, (map (* 1) ys, map (* 1) xs))

main :: IO ()
main = do
  [_, ns, rs] <- getArgs
  let n = read ns :: Int
      reps = read rs :: Int
      xs = [fromIntegral i | i <- [1 .. n]] :: [Double]
      ys = [fromIntegral (2 * i + 1) | i <- [1 .. n]]
  _ <- evaluate (sum xs + sum ys)
  let go !acc i
        | i > reps = acc
        | otherwise = case gradient (bump (fromIntegral i * 1e-9) xs, ys) of
            (v, (gx, gy)) -> let !s = sum gx in go (acc + v + s + sum gy) (i + 1)
  print (go 0 (1 :: Int))
