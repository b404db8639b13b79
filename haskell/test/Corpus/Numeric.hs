{-# LANGUAGE TemplateHaskell #-}
-- | Numbers: the Num, Fractional, Floating (log1p and expm1 included) and
-- RealFloat methods, min, max, abs, signum, powers, fromIntegral,
-- realToFrac, comparisons, integer arithmetic left alone, literals.
module Corpus.Numeric where

import Test.Hspec
import Test.QuickCheck

import Numeric (expm1, log1p)

import Check
import Numeric.DualRev
import qualified Numeric.DualRev.Functions as F

differentiable [d|
  -- Numeric.DualRev.Functions inside a block
  functions :: [Double] -> Double
  functions xs = sum [ F.softplus x * F.sigmoid (2 * x) + F.relu x + F.erf (x / 3)
                       + F.cbrt (x * x + 1) + F.hypot x 2 | x <- xs ]

  -- Num and Fractional methods; integer and rational literals used as Double
  arithP :: Fractional a => (a, a, a) -> a
  arithP (x, y, z) =
    (x + y) * z - x / y + negate z - subtract x y + recip (y * y + 1) + 3 * x - 2 + 0.5 * z * z

  arith :: (Double, Double, Double) -> Double
  arith t = arithP t

  -- Floating: exp log sqrt sin cos tan pi
  floating1P :: Floating a => [a] -> a
  floating1P xs = sum [ exp (x / 2) + log (x * x + 1) + sqrt (x * x + 0.5) + sin x * cos x
                        + tan (x / 3) + pi * x | x <- xs ]

  floating1 :: [Double] -> Double
  floating1 xs = floating1P xs

  -- Floating: inverse trigonometric and hyperbolic functions, logBase, (**)
  floating2P :: Floating a => (a, a) -> a
  floating2P (u, v) =
    asin u + acos (u * v) + atan (3 * v) + sinh u * cosh v + tanh (u - v)
    + asinh (2 * v) + acosh (1.5 + u * u) + atanh (v / 2) + logBase (2 + u * u) (3 + v * v)
    + (2 + u) ** v + (1.5 + v * v) ** (1.5 + u)

  floating2 :: (Double, Double) -> Double
  floating2 p = floating2P p

  -- log1p and expm1, Floating methods exported by Numeric
  floating3P :: Floating a => (a, a) -> a
  floating3P (u, v) = log1p (u * u) * expm1 (v / 2) + expm1 (log1p (0.5 * v))

  floating3 :: (Double, Double) -> Double
  floating3 p = floating3P p

  -- atan2 (RealFloat)
  angleP :: RealFloat a => (a, a, a) -> a
  angleP (x, y, z) = atan2 y x + atan2 (x * z) (y * y + 1) * atan2 z (negate 2)

  angle :: (Double, Double, Double) -> Double
  angle p = angleP p

  -- min max abs signum
  minMaxP :: (Ord a, Num a) => [a] -> a
  minMaxP xs = foldr (\x acc -> max x acc * 2 + min x (x * x) + abs x * signum x - signum acc) 0 xs

  minMax :: [Double] -> Double
  minMax xs = minMaxP xs

  -- (^) with an Int exponent, (^^) with negative exponents, (**)
  powersP :: Floating a => (a, a) -> a
  powersP (x, y) = x ^ (3 :: Int) + y ^ (0 :: Int) + (x * y) ^ (2 :: Integer)
                   + (1 + x * x) ^^ negate (2 :: Int) + y ^^ (3 :: Int) + (1 + y * y) ** x

  powers :: (Double, Double) -> Double
  powers p = powersP p

  -- integer arithmetic untouched: div mod quot rem even odd gcd, fromIntegral, realToFrac
  integral :: ((Int, Integer), Double) -> Double
  integral ((n, m), x) =
    let k = n `div` 3 + n `mod` 4 + n `quot` 2 - n `rem` 5
        j = fromIntegral (gcd m 12) + fromIntegral (m `mod` 7) :: Double
        e = if even n then 1 else if odd n then 2 else 3
    in fromIntegral k * x + j * x * x + e * realToFrac x + realToFrac (length [n, k]) * x
       + fromIntegral (fromEnum (n > 3)) * sin x + fromIntegral (round x + truncate (2 * x) :: Int)

  -- comparisons on Double choose branches (values only)
  comparesP :: (Ord a, Floating a) => (a, a) -> a
  comparesP (x, y)
    | x == y = 0
    | x /= y && x < y = case compare (x * x) y of
        LT -> x * y
        EQ -> x
        GT -> sin (x + y)
    | x <= 2 * y = exp y - x
    | x > 1 && y >= 0 = x * x
    | otherwise = y / (x * x + 1)

  compares :: (Double, Double) -> Double
  compares p = comparesP p
  |]

spec :: Spec
spec = describe "numbers" $ do
  checkGradFwd "arith" ((,,) <$> dbl <*> (choose (0.5, 2)) <*> dbl) arith arithP $(grad 'arith)
  checkGradFwd "floating1" (listOf1N 5 dbl) floating1 floating1P $(grad 'floating1)
  checkGradFwd "floating2" ((,) <$> choose (-0.6, 0.6) <*> choose (-0.6, 0.6)) floating2 floating2P $(grad 'floating2)
  checkGradFwd "log1p expm1" ((,) <$> dbl <*> choose (-1.5, 1.5)) floating3 floating3P $(grad 'floating3)
  checkGradFwd "atan2" ((,,) <$> pos <*> dbl <*> dbl) angle angleP $(grad 'angle)
  checkGradFwd "min max abs signum" (listOf1N 6 dbl) minMax minMaxP $(grad 'minMax)
  checkGradFwd "powers" ((,) <$> dbl <*> dbl) powers powersP $(grad 'powers)
  checkGrad "Numeric.DualRev.Functions (softplus sigmoid relu erf cbrt hypot)"
    (listOf1N 5 dbl) functions $(grad 'functions)
  checkGrad "integer arithmetic, fromIntegral, realToFrac"
    ((,) <$> ((,) <$> choose (-20, 20) <*> choose (-30, 30)) <*> choose (0.1, 0.4)) integral $(grad 'integral)
  checkGradFwd "comparisons" ((,) <$> dbl <*> dbl) compares comparesP $(grad 'compares)
  it "grad' gives the value" $ property $ forAll ((,) <$> dbl <*> dbl) $ \p ->
    -- (^) and (^^) are C's pow there: the last bit of a term may differ,
    -- and the sum cancels terms about 20 times its size
    let (v, g) = $(grad' 'powers) p in closeRel 1e-13 v (powers p) .&&. g == $(grad 'powers) p
