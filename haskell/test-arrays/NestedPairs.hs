{-# LANGUAGE TemplateHaskell #-}
-- | Derivatives inside differentiable code beside and inside fork-join
-- pairs (|*|), run at two capabilities (the suite's +RTS -N2), where the
-- sides really record on jobs of their own: a nested derivative after a
-- pair, inside either side or both, a gradient inside a side, and a pair
-- inside the inner function of a nested derivative or gradient.  Each
-- against its closed form, and the same, bit for bit, at one capability.
module NestedPairs (spec) where

import Control.Concurrent (getNumCapabilities, setNumCapabilities)
import Control.Exception (evaluate, finally)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev

differentiable [d|
  -- x^2 + sin x + 2 a x with a = x^2: derivative 2 x + cos x + 6 x^2
  afterPair :: Double -> Double
  afterPair x = let (a, b) = (x * x) |*| sin x in a + b + derivative (\y -> a * y * y) x

  -- (2 x^2) (3 x) = 6 x^3: derivative 18 x^2
  insideLeft :: Double -> Double
  insideLeft x = let (l, r) = derivative (\y -> x * y * y) x |*| (x * 3) in l * r

  -- 3 x + x cos (x^2): derivative 3 + cos (x^2) - 2 x^2 sin (x^2)
  insideRight :: Double -> Double
  insideRight x = let (l, r) = (x * 3) |*| derivative (\y -> sin (x * y)) x in l + r

  -- 2 x^2 + x e^x: derivative 4 x + (1 + x) e^x
  bothSides :: Double -> Double
  bothSides x = let (l, r) = derivative (\y -> y * y * x) x |*| derivative (\y -> exp (x * y)) 1 in l + r

  -- sum (3 x^3) + sum x: gradient 9 x^2 + 1
  gradInSide :: [Double] -> Double
  gradInSide xs =
    let (g, s) = gradient (\ys -> sum (map (\y -> y * y * y) ys)) xs |*| sum xs
    in sum (zipWith (*) g xs) + s

  -- h y = y^2 sin (x y), h' x = 2 x sin (x^2) + x^3 cos (x^2): derivative
  -- 2 sin (x^2) + 7 x^2 cos (x^2) - 2 x^4 sin (x^2)
  pairInInner :: Double -> Double
  pairInInner x = derivative (\y -> let (a, b) = (y * y) |*| sin (x * y) in a * b) x

  -- a pair inside a nested derivative inside a side: h y = y^2 sin y,
  -- h' x + x = 2 x sin x + x^2 cos x + x: derivative
  -- 2 sin x + 4 x cos x - x^2 sin x + 1
  pairInInnerInSide :: Double -> Double
  pairInInnerInSide x =
    let (l, r) = derivative (\y -> let (a, b) = (y * y) |*| sin y in a * b) x |*| x in l + r

  -- the gradient of sum (y^2) + sum (sin y), its pair inside: 2 y + cos y,
  -- summed: gradient 2 - sin x
  pairInInnerGrad :: [Double] -> Double
  pairInInnerGrad xs =
    sum (gradient (\ys -> let (a, b) = sum (map (\y -> y * y) ys) |*| sum (map sin ys) in a + b) xs)

  -- a nested derivative after a pair and inside both sides of a later one
  mixed :: [Double] -> Double
  mixed xs =
    let (s, p) = sum xs |*| product xs
        d = derivative (\y -> y * s * p) 1
        (l, r) = derivative (\y -> y * y * d) s |*| sum (gradient (\ys -> sum (map (* d) ys)) xs)
    in l + r
  |]

-- | An action run at c capabilities (NOINLINE, c an argument: the calls
-- are not shared).
at :: Int -> IO a -> IO a
at c io = do
  n <- getNumCapabilities
  (setNumCapabilities c >> io) `finally` setNumCapabilities n
{-# NOINLINE at #-}

-- | The value and derivative at two capabilities are those at one, bit for
-- bit, and close to the closed forms.
scalarCase :: (Double -> (Double, Double)) -> (Double -> Double) -> (Double -> Double) -> Double -> Property
scalarCase run f f' x = ioProperty $ do
  n <- getNumCapabilities
  two <- at (max 2 n) (evaluate' (run x))
  one <- at 1 (evaluate' (run x))
  pure $ counterexample (show (two, one, (f x, f' x))) $
    two === one .&&. close (fst two) (f x) .&&. close (snd two) (f' x)
  where evaluate' r = evaluate (fst r) >> evaluate (snd r) >> pure r

listCase :: ([Double] -> (Double, [Double])) -> ([Double] -> Double) -> ([Double] -> [Double]) -> [Double] -> Property
listCase run f f' xs = ioProperty $ do
  n <- getNumCapabilities
  two <- at (max 2 n) (ev (run xs))
  one <- at 1 (ev (run xs))
  pure $ counterexample (show (two, one, (f xs, f' xs))) $
    two === one .&&. close (fst two) (f xs) .&&. and (zipWith close (snd two) (f' xs))
  where ev r = evaluate (fst r) >> evaluate (sum (snd r)) >> pure r

close :: Double -> Double -> Bool
close a b = abs (a - b) <= 1e-12 * (1 + abs a + abs b)

pt :: Gen Double
pt = choose (-1.5, 1.5)

pts :: Gen [Double]
pts = choose (1, 6) >>= \k -> vectorOf k pt

spec :: Spec
spec = describe "nested derivatives beside and inside pairs (|*|)" $ do
  it "a derivative after a pair" $ forAll pt $
    scalarCase $(grad' 'afterPair) (\x -> x * x + sin x + 2 * x ^ (3 :: Int))
                                   (\x -> 2 * x + cos x + 6 * x * x)
  it "a derivative inside the left side" $ forAll pt $
    scalarCase $(grad' 'insideLeft) (\x -> 6 * x ^ (3 :: Int)) (\x -> 18 * x * x)
  it "a derivative inside the right side" $ forAll pt $
    scalarCase $(grad' 'insideRight) (\x -> 3 * x + x * cos (x * x))
                                     (\x -> 3 + cos (x * x) - 2 * x * x * sin (x * x))
  it "derivatives inside both sides" $ forAll pt $
    scalarCase $(grad' 'bothSides) (\x -> 2 * x * x + x * exp x) (\x -> 4 * x + (1 + x) * exp x)
  it "a gradient inside a side" $ forAll pts $
    listCase $(grad' 'gradInSide) (\xs -> sum (map (\x -> 3 * x ^ (3 :: Int) + x) xs))
                                  (map (\x -> 9 * x * x + 1))
  it "a pair inside the inner function of a nested derivative" $ forAll pt $
    scalarCase $(grad' 'pairInInner)
      (\x -> 2 * x * sin (x * x) + x ^ (3 :: Int) * cos (x * x))
      (\x -> 2 * sin (x * x) + 7 * x * x * cos (x * x) - 2 * x ^ (4 :: Int) * sin (x * x))
  it "a pair inside the inner function of a nested derivative inside a side" $ forAll pt $
    scalarCase $(grad' 'pairInInnerInSide)
      (\x -> 2 * x * sin x + x * x * cos x + x)
      (\x -> 2 * sin x + 4 * x * cos x - x * x * sin x + 1)
  it "a pair inside the inner function of a nested gradient" $ forAll pts $
    listCase $(grad' 'pairInInnerGrad) (\xs -> sum (map (\x -> 2 * x + cos x) xs))
                                       (map (\x -> 2 - sin x))
  it "derivatives after a pair and inside both sides of a later one" $ forAll pts $ \xs ->
    -- s = sum xs, p = product xs, d = s p: l = 2 s d = 2 s^2 p, r = n d
    let n = fromIntegral (length xs)
        f ys = let s = sum ys; p = product ys in 2 * s * s * p + n * s * p
        -- d/dx_i (s^2 p) = 2 s p + s^2 p / x_i, and d/dx_i (s p) = p + s p / x_i
        -- (the product's partial written without division)
        f' ys = [ let s = sum ys; p = product ys
                      pi' = product [y | (j, y) <- zip [0 :: Int ..] ys, j /= i]
                  in 2 * (2 * s * p + s * s * pi') + n * (p + s * pi')
                | i <- [0 .. length ys - 1] ]
    in listCase $(grad' 'mixed) f f' xs
