{-# LANGUAGE TemplateHaskell #-}
-- The interrupted-run tests force one thunk several times; common
-- subexpression elimination or floating a binding out of a loop would make
-- two tests share a value (already computed, so nothing is interrupted).
{-# OPTIONS_GHC -fno-cse -fno-full-laziness #-}
-- | The Haskell side under stress, with +RTS -N2: asynchronous exceptions
-- (timeout, killThread) reaching gradients that fork with (|*|), lazily
-- recorded lists ('iterate', infinite ranges) crossing pairs, exceptions
-- inside differentiated code, gradients on many threads at once, and memory
-- over 10^5 calls.
module Robust (spec) where

import Control.Concurrent (forkIO, killThread, newEmptyMVar, putMVar, takeMVar, threadDelay)
import Control.Exception (AsyncException (..), ErrorCall (..), PatternMatchFail, SomeException, catch, evaluate, throwTo, try)
import Control.Monad (forM, forM_, replicateM_, void)
import Data.IORef (newIORef, readIORef, writeIORef)
import Data.List (foldl')
import GHC.Stats (gcdetails_live_bytes, gc, getRTSStats, getRTSStatsEnabled)
import System.Mem (performMajorGC)
import System.Timeout (timeout)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev
import qualified Numeric.DualRev.AD.Newton as N

differentiable [d|
  -- long enough (a few hundred ms) that a timeout of a few ms lands in the
  -- middle of it: in a side, or while one side waits for the other
  spin :: Double -> Double
  spin p = go (10000 :: Int) p
    where go n q | n == 0 = q
                 | otherwise = go (n - 1) (q + 0.001 * sin q)

  spinFork :: [Double] -> Double
  spinFork [] = 0
  spinFork [p] = spin p
  spinFork ps =
    let (l, r) = splitAt (length ps `div` 2) ps
        (a, b) = spinFork l |*| spinFork r
    in a + b

  spinSeq :: [Double] -> Double
  spinSeq ps = sum (map spin ps)

  -- iterate made on one side of a pair and consumed after it:
  -- d/da a^3 = 3 a^2 = 6.75 at a = 1.5
  iterAfter :: Double -> Double
  iterAfter a = let (xs, _) = iterate (* a) 1 |*| a in xs !! 3

  -- made before the pair, consumed on one side: d/da (a^3 + a^2) = 3 a^2 + 2 a
  iterInside :: Double -> Double
  iterInside a =
    let xs = iterate (* a) 1
        (p, q) = xs !! 3 |*| a * a
    in p + q

  -- made on a side, consumed on the other side of a later pair and after
  -- it: d/da (a^4 + a^3 + a^2) = 4 a^3 + 3 a^2 + 2 a
  iterAcross :: Double -> Double
  iterAcross a =
    let (xs, s) = iterate (* a) 1 |*| a * a
        (q, p) = s * a |*| xs !! 4
    in p + q + xs !! 2

  -- nested pairs, iterate made in the inner one, consumed at the top
  iterNested :: Double -> Double
  iterNested a =
    let ((xs, b), c) = (iterate (* a) 1 |*| a * 3) |*| a * a
    in xs !! 3 + b + c

  -- the same for infinite ranges from an active start, whose elements are
  -- recorded as iterate's are: element 3 of [a, a * a ..] is a + 3 (a^2 - a)
  rangeAfter :: Double -> Double
  rangeAfter a = let (xs, _) = [a, a * a ..] |*| a in xs !! 3

  rangeInside :: Double -> Double
  rangeInside a =
    let xs = [a ..]
        (p, q) = xs !! 3 * a |*| a * a
    in p + q

  rangeAcross :: Double -> Double
  rangeAcross a =
    let (xs, s) = [a, 2 * a ..] |*| a * a
        (q, p) = s * a |*| xs !! 4
    in p + q + sum (take 3 xs)

  -- exceptions in differentiated code
  boom :: [Double] -> Double
  boom xs = if sum xs > 100 then error "boom: too large" else sum (map (\x -> x * x) xs)

  partial :: Maybe Double -> Double
  partial (Just x) = x * x

  boomFork :: [Double] -> Double
  boomFork xs =
    let (a, b) = spinFork xs |*| (if head xs > 100 then error "boomFork: too large" else product xs)
    in a + b

  smallFork :: (Double, Double) -> Double
  smallFork (x, y) = let (a, b) = x * y |*| sin x in a + b
  |]

close :: Double -> [Double] -> [Double] -> Bool
close tol as bs = length as == length bs
  && and (zipWith (\a b -> abs (a - b) <= tol * (1 + abs a + abs b)) as bs)

-- | Fresh inputs (built at run time, so no two tests share a gradient thunk).
spinInput :: Int -> IO [Double]
spinInput k = do
  r <- newIORef [ 0.5 + 0.01 * fromIntegral (i + k) | i <- [1 .. 128 :: Int] ]
  readIORef r

-- | Catch one asynchronous exception (a thread the tests interrupt).
quietly :: IO () -> IO ()
quietly act = act `catch` \e -> const (pure ()) (e :: AsyncException)

-- | Live heap bytes after a major collection (needs +RTS -T).
liveBytes :: IO Integer
liveBytes = do
  performMajorGC
  s <- getRTSStats
  pure (fromIntegral (gcdetails_live_bytes (gc s)))

-- | Resident set size in bytes (Linux): the C tapes are not on the heap.
rss :: IO Integer
rss = do
  s <- readFile "/proc/self/statm"
  let pages = read (words s !! 1) :: Integer
  length s `seq` pure (pages * 4096)

spec :: Spec
spec = do
  describe "asynchronous exceptions" $ do
    -- the same thunk interrupted at several points and forced again: it
    -- must not rethrow a stale timeout, and a forked side must not record
    -- on a tape freed under it
    it "a forked grad interrupted by timeout is forced again: right, no crash" $ do
      xs <- spinInput 0
      let ref = $(grad 'spinSeq) xs
          g = $(grad 'spinFork) xs
      _ <- evaluate (sum ref)
      -- fresh gradients, each dropped once interrupted: the tape of one must
      -- not be freed while its forked side still records
      forM_ (zip [20 ..] [200, 1000, 3000, 10000]) $ \(k, us) -> do
        ys <- spinInput k
        void (timeout us (evaluate (sum ($(grad 'spinFork) ys))))
      forM_ [200, 1000, 3000, 10000, 30000] $ \us -> void (timeout us (evaluate (sum g)))
      r <- evaluate (sum g) >> pure g
      close 1e-10 r ref `shouldBe` True
    it "an unforked grad interrupted by timeout is forced again: right" $ do
      xs <- spinInput 1
      let ref = $(grad 'spinFork) xs
          g = $(grad 'spinSeq) xs
      _ <- evaluate (sum ref)
      forM_ [200, 3000, 10000] $ \us -> void (timeout us (evaluate (sum g)))
      r <- evaluate (sum g) >> pure g
      close 1e-10 r ref `shouldBe` True
    it "killThread during a forked grad: another thread forces the same value" $ do
      xs <- spinInput 2
      let ref = $(grad 'spinSeq) xs
          g = $(grad 'spinFork) xs
      _ <- evaluate (sum ref)
      forM_ [0, 2000, 20000] $ \us -> do
        started <- newEmptyMVar
        tid <- forkIO (quietly (quietly (putMVar started () >> void (evaluate (sum g)))))
        takeMVar started
        threadDelay us
        -- two exceptions at once: the second may come while the first is
        -- being handled, and must not leave the value raising the first
        _ <- forkIO (throwTo tid UserInterrupt)
        killThread tid
      r <- evaluate (sum g) >> pure g
      close 1e-10 r ref `shouldBe` True
    it "differentiate interrupted by timeout: dropped results free their tapes safely" $ do
      xs <- spinInput 3
      let ref = $(grad 'spinSeq) xs
      _ <- evaluate (sum ref)
      forM_ (zip [4 ..] [200, 1000, 3000, 10000, 30000]) $ \(k, us) -> do
        ys <- spinInput k
        let (y, _) = $(differentiate 'spinFork) ys
        _ <- timeout us (evaluate y)
        -- the dropped tape's finalizer runs here
        performMajorGC
      let (y, back) = $(differentiate 'spinFork) xs
      forM_ [200, 3000, 10000] $ \us -> void (timeout us (evaluate y))
      _ <- evaluate y
      v <- timeout 10000 (evaluate (sum (back 1)))
      performMajorGC
      r <- maybe (evaluate (back 1)) (const (pure (back 1))) v
      y `shouldSatisfy` (\v' -> abs (v' - spinSeq xs) <= 1e-10 * abs v')
      close 1e-10 r ref `shouldBe` True

  describe "iterate with (|*|)" $ do
    it "made on a side, consumed after the pair: d/da a^3 at 1.5 is 6.75" $
      $(grad 'iterAfter) 1.5 `shouldSatisfy` (\d -> abs (d - 6.75) < 1e-12)
    it "made before the pair, consumed on a side" $
      property $ forAll (choose (-2, 2)) $ \a ->
        close 1e-12 [$(grad 'iterInside) a] [3 * a * a + 2 * a]
    it "made on a side, consumed on the other side of a later pair and after it" $
      property $ forAll (choose (-2, 2)) $ \a ->
        close 1e-12 [$(grad 'iterAcross) a] [4 * a ^ (3 :: Int) + 3 * a * a + 2 * a]
    it "made in a nested pair, consumed at the top" $
      property $ forAll (choose (-2, 2)) $ \a ->
        close 1e-12 [$(grad 'iterNested) a] [3 * a * a + 3 + 2 * a]

  describe "infinite ranges with (|*|)" $ do
    it "made on a side, consumed after the pair: d/da (a + 3 (a^2 - a)) = 6 a - 2" $
      property $ forAll (choose (-2, 2)) $ \a -> close 1e-12 [$(grad 'rangeAfter) a] [6 * a - 2]
    it "made before the pair, consumed on a side: d/da ((a + 3) a + a^2) = 4 a + 3" $
      property $ forAll (choose (-2, 2)) $ \a -> close 1e-12 [$(grad 'rangeInside) a] [4 * a + 3]
    it "made on a side, consumed on the other side of a later pair and after it" $
      property $ forAll (choose (-2, 2)) $ \a ->
        close 1e-12 [$(grad 'rangeAcross) a] [3 * a * a + 5 + 6]

  describe "under stress" $ do
    it "an exception inside differentiated code: the tape is released, the next call works" $ do
      r <- try (evaluate ($(grad 'boom) [50, 60]))
      r `shouldBe` Left (ErrorCall "boom: too large")
      p <- try (evaluate ($(grad 'partial) Nothing))
      either (\e -> pure (const () (e :: PatternMatchFail))) (const (expectationFailure "no error")) p
      $(grad 'partial) (Just 3) `shouldBe` Just 6
      q <- try (evaluate (sum ($(grad 'boomFork) [200, 1, 2])))
      either (\e -> show (e :: ErrorCall) `shouldContain` "boomFork") (const (expectationFailure "no error")) q
      -- failing runs on tapes of ~1 MB each: 200 of them would show in the
      -- resident memory if their tapes were not released
      let big = replicate 20000 1
      _ <- try (evaluate ($(grad 'boom) big)) :: IO (Either ErrorCall [Double])
      rss0 <- rss
      replicateM_ 200 (try (evaluate ($(grad 'boom) (200 : big))) :: IO (Either ErrorCall [Double]))
      rss1 <- rss
      (rss1 - rss0) `shouldSatisfy` (< 64 * 1024 * 1024)
      $(grad 'boom) [1, 2, 3] `shouldBe` [2, 4, 6]
      close 1e-12 ($(grad 'boomFork) [0.5, 0.25]) ($(grad 'spinSeq) [0.5, 0.25] `plus` [0.25, 0.5]) `shouldBe` True
    it "grad from 8 threads at once, with forks: every result right" $ do
      xs <- spinInput 10
      let refs = [ $(grad 'spinSeq) (map (* (1 + 0.01 * fromIntegral t)) (take 8 xs)) | t <- [1 .. 8 :: Int] ]
      _ <- evaluate (sum (map sum refs))
      dones <- forM [1 .. 8 :: Int] $ \t -> do
        done <- newEmptyMVar
        _ <- forkIO $ do
          let ins = map (* (1 + 0.01 * fromIntegral t)) (take 8 xs)
          ok <- try (evaluate (and [ close 1e-10 ($(grad 'spinFork) ins) (refs !! (t - 1))
                                     && $(grad 'smallFork) (fromIntegral k, 2) == (2 + cos (fromIntegral k), fromIntegral k)
                                   | k <- [1 .. 20 :: Int] ]))
          putMVar done (ok :: Either SomeException Bool)
        pure done
      rs <- mapM takeMVar dones
      map (either show show) rs `shouldBe` replicate 8 "True"
    it "constrainedDescent read 30,000 points far keeps the heap bounded (no stage holds the points after it)" $ do
      let objective :: Floating a => [a] -> a
          objective v = let [x, y] = v in (x - 3) * (x - 3) + (y + 1) * (y + 1)
          disc = [N.CC (\v -> let [x, y] = v in x * x + y * y - 1)]
          walk :: Int -> [(Double, [Double])] -> IO [(Double, [Double])]
          walk 0 ps = pure ps
          walk k ((v, _) : ps) = evaluate v >> walk (k - 1) ps
          walk _ [] = pure []
      -- the last stage starts before point 1,300 (63 stages of at most 20)
      rest <- walk 10000 (N.constrainedDescent objective disc [0, 0])
      live1 <- liveBytes
      rest' <- walk 20000 rest
      live2 <- liveBytes
      length (take 1 rest') `shouldBe` 1
      (live2 - live1) `shouldSatisfy` (< 1024 * 1024)
    it "10^5 calls keep the heap and the resident memory bounded" $ do
      enabled <- getRTSStatsEnabled
      enabled `shouldBe` True
      let run :: Int -> Int -> IO ()
          run from n = do
            let acc0 = foldl' (\acc k -> let (gx, gy) = $(grad 'smallFork) (fromIntegral k * 1e-5, 2) in acc + gx + gy)
                               0 [from .. from + n - 1]
            ok <- newIORef False
            _ <- evaluate acc0
            writeIORef ok (not (isNaN acc0))
            readIORef ok >>= (`shouldBe` True)
      run 1 10000
      live1 <- liveBytes
      rss1 <- rss
      run 10001 90000
      live2 <- liveBytes
      rss2 <- rss
      (live2 - live1) `shouldSatisfy` (< max (1024 * 1024) (live1 `div` 2))
      (rss2 - rss1) `shouldSatisfy` (< 64 * 1024 * 1024)
  where
    plus = zipWith (+)
