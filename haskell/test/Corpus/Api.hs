{-# LANGUAGE TemplateHaskell #-}
-- | differentiate (backpropagators called many times, linearity), jacobian
-- rows, grad', structured and discrete outputs, long runs.
module Corpus.Api where

import Control.Concurrent (forkIO, forkOS, getNumCapabilities, newEmptyMVar, putMVar, setNumCapabilities, takeMVar)
import Control.Exception (ErrorCall (..), SomeException, evaluate, try)
import Control.Monad (forM)
import Data.List (foldl')
import System.Mem (performGC)
import Test.Hspec
import Test.QuickCheck

import Check
import Corpus.Data (P (..), Tree (..), V3 (..), genTree)
import Numeric.DualRev

differentiable [d|
  polar :: (Double, Double) -> (Double, Double)
  polar (x, y) = (sqrt (x * x + y * y), atan2 y x)

  softmax :: [Double] -> [Double]
  softmax xs = let es = map exp xs; s = sum es in map (/ s) es

  cumulative :: [Double] -> ([Double], Int)
  cumulative xs = (tail (scanl (+) 0 (map (\x -> x * x) xs)), length xs)

  normalize :: V3 Double -> V3 Double
  normalize (V3 a b c) = let n = sqrt (a * a + b * b + c * c) in V3 (a / n) (b / n) (c / n)

  rotP :: (P, Double) -> P
  rotP (P x y, t) = P (x * cos t - y * sin t) (x * sin t + y * cos t)

  mirror :: Tree -> Tree
  mirror (Leaf x) = Leaf (x * x)
  mirror (Node l r) = Node (mirror r) (mirror l)

  safeLog :: (Int, Double) -> (Maybe Double, Either Double Int)
  safeLog (k, x) = (if x > 0 then Just (log x) else Nothing, if k > 0 then Left (x * fromIntegral k) else Right k)

  energy :: [Double] -> Double
  energy xs = sum (map (\x -> x * x * x) xs) / 3

  small :: (Double, Double) -> Double
  small (x, y) = x * y + sin x

  -- outputs sharing a node, the input itself, constants
  shared :: (Double, [Double]) -> ((Double, Double), (Double, Double, Double), [Double])
  shared (x, xs) = let y = x * 2 in ((y, y), (x, x, 3), xs ++ map (* x) xs ++ xs)

  -- discrete output parts computed lazily from elements of iterate
  lazyOut :: Double -> (Double, (Bool, Int, [Int]))
  lazyOut x = let ys = iterate (\v -> v * 2 + 1) x
              in (x * 2, (head (drop 3 ys) > 10, length (take 4 ys), map round (take 3 (drop 5 ys))))

  failing :: Double -> Double
  failing x = if x > 100 then error "failing: too large" else x * x
  |]

-- | Resident set size in bytes (Linux).
rss :: IO Integer
rss = do
  s <- readFile "/proc/self/statm"
  let pages = read (words s !! 1) :: Integer
  length s `seq` pure (pages * 4096)

spec :: Spec
spec = describe "differentiate, jacobian, grad'" $ do
  let pair = (,) <$> dbl <*> dbl
  checkDiff "tuple output" pair polar $(differentiate 'polar)
  checkJac "tuple output" pair polar $(jacobian 'polar)
  checkDiff "list output" (listOf1N 5 dbl) softmax $(differentiate 'softmax)
  checkJac "list output" (listOf1N 5 dbl) softmax $(jacobian 'softmax)
  checkDiff "list and Int output" (listOf1N 5 dbl) cumulative $(differentiate 'cumulative)
  checkJac "list and Int output" (listOf1N 5 dbl) cumulative $(jacobian 'cumulative)
  checkDiff "parametrised type output" (V3 <$> dbl <*> dbl <*> dbl) normalize $(differentiate 'normalize)
  checkJac "parametrised type output" (V3 <$> dbl <*> dbl <*> dbl) normalize $(jacobian 'normalize)
  checkDiff "monomorphic type output" ((,) <$> (P <$> dbl <*> dbl) <*> dbl) rotP $(differentiate 'rotP)
  checkJac "monomorphic type output" ((,) <$> (P <$> dbl <*> dbl) <*> dbl) rotP $(jacobian 'rotP)
  checkDiff "recursive type output" (genTree 3) mirror $(differentiate 'mirror)
  checkJac "recursive type output" (genTree 3) mirror $(jacobian 'mirror)
  checkDiff "Maybe and Either output" ((,) <$> choose (-2, 2) <*> dbl) safeLog $(differentiate 'safeLog)
  checkJac "Maybe and Either output" ((,) <$> choose (-2, 2) <*> dbl) safeLog $(jacobian 'safeLog)
  checkDiff "scalar output" (listOf1N 5 dbl) energy $(differentiate 'energy)
  it "differentiate of a scalar function: back 1 is the gradient, grad' the value" $
    property $ forAll (listOf1N 5 dbl) $ \xs ->
      let (v, back) = $(differentiate 'energy) xs
          (v', g) = $(grad' 'energy) xs
      in v == energy xs .&&. v' == v .&&. back 1 == g .&&. g == $(grad 'energy) xs
         .&&. $(jacobian 'energy) xs == [g]
  checkDiff "outputs sharing nodes, the input as output, constant outputs" ((,) <$> dbl <*> listOf1N 3 dbl) shared $(differentiate 'shared)
  checkJac "outputs sharing nodes, the input as output, constant outputs" ((,) <$> dbl <*> listOf1N 3 dbl) shared $(jacobian 'shared)
  it "discrete outputs computed lazily from iterate are evaluated before the tape goes" $ do
    let (y, back) = $(differentiate 'lazyOut) 1
    back (1, (True, 0, [])) `shouldBe` 2
    performGC
    _ <- evaluate (sum [ fst (fst ($(differentiate 'lazyOut) k)) | k <- [1 .. 100] ])
    performGC
    y `shouldBe` (2, (True, 4, [63, 127, 255]))
  it "an error in the forward pass leaves later gradients intact" $ do
    r <- try (evaluate ($(grad 'failing) 1000))
    r `shouldBe` Left (ErrorCall "failing: too large")
    mapM_ (\x -> $(grad 'failing) x `shouldBe` 2 * x) [1 .. 20]
  it "gradients and backpropagators on several threads at once" $ do
    n0 <- getNumCapabilities
    setNumCapabilities 4
    let expected k = (2 + cos (fromIntegral k), fromIntegral k)   -- small (x, y) = x * y + sin x
        (_, back) = $(differentiate 'softmax) [1, 2, 3]
        cot t = [1, fromIntegral t, 0]
        refs = map (back . cot) [1 .. 8 :: Int]
    _ <- evaluate (sum (map sum refs))
    dones <- forM [1 .. 8 :: Int] $ \t -> do
      done <- newEmptyMVar
      _ <- forkIO $ do
        ok <- try (evaluate (and [ $(grad 'small) (fromIntegral k, 2) == expected k
                                   && back (cot t) == refs !! (t - 1)
                                 | k <- [t * 1000 .. t * 1000 + 999 :: Int] ]))
        putMVar done (ok :: Either SomeException Bool)
      pure done
    rs <- mapM takeMVar dones
    setNumCapabilities n0
    map (either (const False) id) rs `shouldBe` replicate 8 True
  it "lists of Double: the empty list, and lists longer than a tape chunk (2^17 nodes)" $ do
    $(grad 'energy) [] `shouldBe` []
    let xs = [fromIntegral (k `mod` 1000) / 250 - 2 | k <- [1 .. 200000 :: Int]]
        g = $(grad 'energy) xs
    length g `shouldBe` 200000
    and (zipWith (\x d -> abs (d - x * x) <= 1e-12 * (1 + x * x)) xs g) `shouldBe` True
  it "gradients of lists read lazily stay right after their tape is reused" $ do
    let xs k = [fromIntegral k, 2, 3 + fromIntegral k]
        gs = [ $(grad 'energy) (xs k) | k <- [1 .. 20 :: Int] ]
        (ys, back) = $(differentiate 'softmax) [1, 2, 3]
        b1 = back [1, 0, 0]
        b2 = back [0, 0, 1]
    -- force in the reverse order of creation, with other gradients between
    _ <- evaluate (sum (map sum (reverse gs)))
    _ <- evaluate (sum b2)
    performGC
    and [ abs (d - x * x) <= 1e-12 * x * x | k <- [1 .. 20 :: Int], (x, d) <- zip (xs k) (gs !! (k - 1)) ]
      `shouldBe` True
    -- the same sweeps again give the same bits (the engine is deterministic)
    r1 <- evaluate (sum (back [1, 0, 0])) >> pure (back [1, 0, 0])
    b1 `shouldBe` r1
    b2 `shouldBe` back [0, 0, 1]
    -- and they are the softmax Jacobian's rows: y_i (delta_ij - y_j)
    let close a b = abs (a - b) <= 1e-12
        row i = [ (if j == i then yi else 0) - yi * yj | (j, yj) <- zip [0 :: Int ..] ys ] where yi = ys !! i
    and (zipWith close b1 (row 0) ++ zipWith close b2 (row 2)) `shouldBe` True
  it "jacobian of a function with no Double output has no rows" $
    $(jacobian 'cumulative) [] `shouldBe` []
  it "a backpropagator outlives many others and can be called in any order" $ do
    let runs = [ $(differentiate 'softmax) [fromIntegral k, 1, 2] | k <- [1 .. 50 :: Int] ]
        backs = map snd runs
        first = head backs
    r1 <- evaluate (first [1, 0, 0])
    _ <- evaluate (sum (map (\b -> sum (b [0, 1, 0])) backs))
    performGC
    r2 <- evaluate (first [1, 0, 0])
    r2 `shouldBe` r1
  it "10^5 calls of a small grad in a row" $ do
    let total = foldl' (\acc k -> let (gx, gy) = $(grad 'small) (fromIntegral k * 1e-5, 2) in acc + gx + gy) 0
                       [1 .. 100000 :: Int]
    _ <- evaluate total
    total `shouldSatisfy` (\t -> not (isNaN t))
  it "gradients on 4000 short-lived OS threads free the tapes those threads kept" $ do
    -- each OS thread keeps the tape of its last gradient for the next one
    -- (haskell/cbits/hs_tapes.c); a bound thread's OS thread exits with it
    let gradOn :: Int -> IO Double
        gradOn k = do
          v <- newEmptyMVar
          _ <- forkOS (evaluate (fst ($(grad 'small) (fromIntegral k, 2))) >>= putMVar v)
          takeMVar v
    _ <- mapM gradOn [1 .. 300]
    performGC
    before <- rss
    gs <- mapM gradOn [1 .. 4000]
    sum gs `shouldSatisfy` (not . isNaN)
    performGC
    after <- rss
    -- a kept tape is about 7 KB: without the exit handler 4000 threads
    -- leave 27 MB behind, with it 0.2 MB
    (after - before) `shouldSatisfy` (< 8 * 1024 * 1024)
  it "10^5 differentiate + backpropagator calls free their tapes" $ do
    let loop :: Int -> Double -> IO Double
        loop 0 acc = pure acc
        loop k acc = do
          let (y, back) = $(differentiate 'softmax) [fromIntegral k * 1e-5, 1, 2, 3]
              g = back [1, 2, 3, 4]
          s <- evaluate (sum y + sum g)
          loop (k - 1) (acc + s)
    _ <- loop 10000 0
    performGC
    before <- rss
    _ <- loop 100000 0
    performGC
    after <- rss
    (after - before) `shouldSatisfy` (< 64 * 1024 * 1024)
