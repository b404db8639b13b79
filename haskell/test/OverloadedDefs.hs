{-# LANGUAGE TemplateHaskell #-}
-- | The functions the overloaded API's tests differentiate, written once,
-- polymorphically: "Overloaded" takes them through Numeric.DualRev.AD and
-- the splices, haskell/test-ad/AdCompare.hs through Numeric.DualRev.AD and
-- ad.  They are defined in a block (so the splices see them) and are still
-- ordinary polymorphic functions outside it.
module OverloadedDefs where

import Numeric.DualRev (differentiable)

-- | Integer coefficients times monomials (one exponent per variable).
type Poly = [(Integer, [Int])]

-- | A helper outside any block, which the block's outsideAtanD calls.
outsideAtan :: Floating a => [a] -> a
outsideAtan xs = atan (sum xs)

differentiable [d|
  -- | Integer coefficients times monomials (one exponent per variable).
  evalPoly :: Num a => [(Integer, [Int])] -> [a] -> a
  evalPoly p xs = sum [fromInteger c * product (zipWith (^) xs ks) | (c, ks) <- p]

  -- | Shifted by the maximum: a comparison, and a term whose derivative
  -- cancels, so the gradient is the softmax whichever element is largest.
  logSumExp :: (Ord a, Floating a) => [a] -> a
  logSumExp xs = let m = maximum xs in m + log (sum [exp (x - m) | x <- xs])

  -- | Mean squared error of a 3-4-1 tanh network on three fixed samples; the
  -- 21 parameters are the input.
  mlp :: Floating a => [a] -> a
  mlp ps = sum [(predict x - y) ^ (2 :: Int) | (x, y) <- samples] / 3
    where
      (w1, r1) = splitAt 12 ps
      (b1, r2) = splitAt 4 r1
      (w2, r3) = splitAt 4 r2
      b2 = sum (take 1 r3)
      hidden x = [tanh (sum (zipWith (*) row x) + b) | (row, b) <- zip (chunks w1) b1]
      predict x = sum (zipWith (*) w2 (hidden x)) + b2
      chunks [] = []
      chunks zs = let (h, t) = splitAt 3 zs in h : chunks t
      samples = [([0.5, -1, 2], 1), ([1.5, 0.25, -0.5], -0.5), ([-2, 1, 0.75], 0.25)]

  -- | Two inputs, five outputs.
  tall :: Floating a => [a] -> [a]
  tall v = [x * y, sin x, exp (y / 3), x * x - y, sqrt (1 + x * x + y * y)]
    where x = v !! 0
          y = v !! 1

  -- | Any number of inputs, two outputs.
  wide :: Floating a => [a] -> [a]
  wide xs = [sum (zipWith (*) xs (drop 1 xs)), product (map (\x -> 1 + x * x / 10) xs)]

  scalar :: Floating a => a -> a
  scalar x = sin (x * x) * exp (x / 3) + x ^ (3 :: Int) / (1 + x * x)

  curve :: Floating a => a -> [a]
  curve x = [cos x, x * sin x, exp (negate (x * x))]

  trig :: Floating a => [a] -> a
  trig xs =
    sum (zipWith (\a b -> sin a * cos (2 * b) + tanh (a - b)) xs (drop 1 xs ++ take 1 xs))
    + atan (sum xs) / 2 + sum (map (exp . sin) xs)

  polyD :: ([(Integer, [Int])], [Double]) -> Double
  polyD (p, xs) = evalPoly p xs

  trigD :: [Double] -> Double
  trigD xs = trig xs

  lseD :: [Double] -> Double
  lseD xs = logSumExp xs

  mlpD :: [Double] -> Double
  mlpD ps = mlp ps

  tallD :: [Double] -> [Double]
  tallD xs = tall xs

  wideD :: [Double] -> [Double]
  wideD xs = wide xs

  scalarD :: Double -> Double
  scalarD x = scalar x

  curveD :: Double -> [Double]
  curveD x = curve x

  outsideAtanD :: [Double] -> Double
  outsideAtanD xs = outsideAtan xs
  |]
