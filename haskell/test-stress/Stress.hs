{-# LANGUAGE TemplateHaskell #-}
-- Every repetition must compute afresh: no binding floated out of a
-- function may share a result between two calls.  (With -fno-cse as well,
-- GHC 9.0.2 at -O2 panics on this module.)
{-# OPTIONS_GHC -fno-full-laziness #-}
-- | A stress test of the Haskell front end on several capabilities (run
-- with +RTS -N2, set in the cabal file): 8 Haskell threads at once, each
-- computing, over and over, second derivatives ($(hvp), $(hessian)),
-- derivatives nested inside differentiable code (beside and inside
-- fork-join pairs too), fork-join gradients, checkpointed loops, custom
-- rules, and the overloaded API (Numeric.DualRev.AD: grad, hessian, diff,
-- jacobian).
--
-- Each work item's results at a few inputs are computed once first, on
-- the main thread alone, and checked there against references that share
-- no code with the engine (closed forms, central differences of first
-- derivatives, the same loop without checkpoints).  Then every result the
-- threads compute must be those, bit for bit: the engine computes the same
-- operations in the same order whatever the thread, the capability, or
-- whether the two sides of a pair ran in parallel.  A quarter of the calls
-- are first interrupted by a short timeout, then forced again (a gradient
-- interrupted by an asynchronous exception is computed again from the
-- start).
--
-- Deadlocks: every call runs under 'timeout' (30 s, for calls that take
-- milliseconds); a thread stuck where that cannot reach it is caught by the
-- main thread, which waits for the workers no longer than the run's length
-- plus that timeout, then names what each unfinished thread was computing
-- and exits with a failure; and should the whole runtime stop (a thread
-- stuck in C keeps its capability, so the next garbage collection waits
-- for ever), a C thread ends the process later still (watchdog.c).
--
-- The run lasts DUALREV_STRESS_SECONDS seconds (3 by default: the short
-- mode of make test-hs); DUALREV_STRESS_THREADS sets the number of threads
-- (8), DUALREV_STRESS_ONLY=text keeps the work items whose name contains
-- the text.
module Main (main) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar, tryReadMVar)
import Control.Exception (SomeException, displayException, evaluate, try)
import Control.Monad (forM, forM_, unless, when)
import Data.IORef (IORef, atomicModifyIORef', newIORef, readIORef, writeIORef)
import Data.List (isInfixOf, transpose)
import Data.Maybe (catMaybes, fromMaybe)
import Foreign.C.Types (CInt (..))
import GHC.Clock (getMonotonicTime)
import GHC.Conc (getNumCapabilities)
import GHC.Float (castDoubleToWord64)
import Numeric (showHex)
import System.Environment (lookupEnv)
import System.Exit (exitFailure)
import System.IO (hFlush, stdout)
import System.Timeout (timeout)
import Text.Read (readMaybe)

import Numeric.DualRev
import qualified Numeric.DualRev.AD as AD

------------------------------------------------------------------------------
-- A custom rule (the README's soft clip)

softclip :: Double -> Double -> Double
softclip c x = c * tanh (x / c)

softclipVJP :: Double -> Double -> (Double, Double -> (Double, Double))
softclipVJP c x =
  let t = tanh (x / c)
  in (c * t, \ybar -> (ybar * (t - x / c * (1 - t * t)), ybar * (1 - t * t)))

primitive 'softclip 'softclipVJP

------------------------------------------------------------------------------
-- The programs

differentiable [d|
  -- second order: sums over the argument twice (n-ary nodes), products,
  -- a sum of products, transcendental functions
  rich :: [Double] -> Double
  rich xs = sum [a * sin b | a <- xs, b <- xs]
            + product (map (\x -> 1 + 0.1 * x * x) xs)
            + sum (zipWith (*) xs (map tanh xs))

  -- nested: the gradient of a function walking its argument twice
  twice :: [Double] -> Double
  twice ys = sum [a * b | a <- ys, b <- ys]

  twiceOuter :: [Double] -> Double
  twiceOuter xs = sum (zipWith (*) xs (gradient twice xs))

  -- nested: a Hessian-vector product as a gradient of a gradient
  psF :: [Double] -> Double
  psF [x, y] = 2 * x * x + 3 * x * y + 4 * y * y
  psF _ = 0

  psDirectional :: ([Double], Constant [Double]) -> Double
  psDirectional (x, v) = sum (zipWith (*) (constant v) (gradient psF x))

  -- nested three deep: the third derivative of sin (x^2), and its gradient
  cubeSin :: Double -> Double
  cubeSin x = sin (x * x)

  third :: Double -> Double
  third x = derivative (\a -> derivative (\b -> derivative cubeSin b) a) x

  -- fork-join: a tree of pairs over small simulations, and the same summed
  sim :: Double -> (Double, Double) -> Double
  sim c (p, v) = go (40 :: Int) p v
    where go n q w | n == 0 = q * w
                   | otherwise = go (n - 1) (q + 0.05 * w) (w - 0.05 * (c * q + 0.2 * w))

  simsFork :: (Double, [(Double, Double)]) -> Double
  simsFork (_, []) = 0
  simsFork (c, [p]) = sim c p
  simsFork (c, ps) =
    let (l, r) = splitAt (length ps `div` 2) ps
        (a, b) = simsFork (c, l) |*| simsFork (c, r)
    in a + b

  simsSeq :: (Double, [(Double, Double)]) -> Double
  simsSeq (c, ps) = sum (map (sim c) ps)

  -- checkpointed: a pendulum whose stiffness rides in the state, with and
  -- without checkpoints (equal gradients, to the bit)
  pendulum :: ((Double, Double), Double) -> ((Double, Double), Double)
  pendulum ((p, v), k) = ((p + 0.05 * v, v - 0.05 * (k * sin p + 0.1 * v)), k)

  pendC :: (Double, Double, Double) -> Double
  pendC (p, v, k) = let ((p', v'), _) = checkpointedIterateWith 3 200 pendulum ((p, v), k)
                    in p' * v' + p' * p'

  pendP :: (Double, Double, Double) -> Double
  pendP (p, v, k) = let ((p', v'), _) = iterate pendulum ((p, v), k) !! 200
                    in p' * v' + p' * p'

  -- a custom rule, mapped and called
  clipped :: [Double] -> Double
  clipped xs = sum (map (softclip 2) xs) + softclip 1.5 (sum xs)

  -- a custom rule in a checkpointed loop inside a pair
  clippedLoop :: (Double, Double) -> Double
  clippedLoop (a, b) =
    let (u, w) = checkpointedIterate 30 (softclip 2 . (* 1.01)) a |*| softclip 1 b
    in u * w
  |]

-- | Nested derivatives beside and inside pairs.
differentiable [d|
  -- x^2 + sin x + 2 x^3
  afterPair :: Double -> Double
  afterPair x = let (a, b) = (x * x) |*| sin x in a + b + derivative (\y -> a * y * y) x

  -- 6 x^3
  insideLeft :: Double -> Double
  insideLeft x = let (l, r) = derivative (\y -> x * y * y) x |*| (x * 3) in l * r

  -- sum (3 x^3) + sum x
  gradInSide :: [Double] -> Double
  gradInSide xs =
    let (g, s) = gradient (\ys -> sum (map (\y -> y * y * y) ys)) xs |*| sum xs
    in sum (zipWith (*) g xs) + s

  -- second derivatives of a function with a pair (its sides record in
  -- order: a tape of order 2 does not fork)
  pairF :: [Double] -> Double
  pairF xs = let (a, b) = sum [x * x | x <- xs] |*| product (map (\x -> 1 + 0.1 * x) xs) in a * b

  -- 2 x sin (x^2) + x^3 cos (x^2)
  pairInInner :: Double -> Double
  pairInInner x = derivative (\y -> let (a, b) = (y * y) |*| sin (x * y) in a * b) x
  |]

-- | Functions for the overloaded API, polymorphic as ad's users write them.
adF :: Floating a => [a] -> a
adF [x, y, z] = x * y * sin z + exp (x / 3) * y + z * z * z
adF _ = 0

adV :: Floating a => [a] -> [a]
adV [x, y] = [x * y, exp x, sin (x + y)]
adV _ = []

------------------------------------------------------------------------------
-- Work items

-- | A work item: its name, its inputs' count, the computation at input i
-- (the results, flattened), and the reference check of those results
-- (Nothing: right).
data Work = Work
  { wName :: String
  , wInputs :: Int
  , wRun :: Int -> [Double]
  , wCheck :: Int -> [Double] -> Maybe String
  }

-- | Deterministic inputs: the k-th of n numbers in [lo, hi].
pts :: Int -> Int -> Double -> Double -> [Double]
pts seed n lo hi = [ lo + (hi - lo) * frac (sin (fromIntegral (seed * 7919 + j * 104729) * 12.9898) * 43758.5453)
                   | j <- [1 .. n] ]
  where frac v = v - fromIntegral (floor v :: Integer)

-- | Central differences of a vector function (an exact gradient): the
-- Jacobian's columns, one per input.
fdJac :: ([Double] -> [Double]) -> [Double] -> [[Double]]
fdJac f xs =
  [ zipWith (\a b -> (a - b) / (2 * h)) (f (at (xi + h))) (f (at (xi - h)))
  | (i, xi) <- zip [0 :: Int ..] xs
  , let h = 1e-5 * max 1 (abs xi)
        at v = [if j == i then v else xj | (j, xj) <- zip [0 ..] xs] ]

near :: Double -> Double -> Double -> Bool
near tol a b = abs (a - b) <= tol * (1 + abs a + abs b)

-- | Nothing if every pair is near, else a message.
expect :: Double -> String -> [Double] -> [Double] -> Maybe String
expect tol what got want
  | length got == length want && and (zipWith (near tol) got want) = Nothing
  | otherwise = Just (what ++ ": got " ++ show got ++ ", want " ++ show want)

firstJust :: [Maybe String] -> Maybe String
firstJust = foldr (\m r -> maybe r Just m) Nothing

richX :: Int -> [Double]
richX i = pts i (2 + i) (-1.2) 1.2

richV :: Int -> [Double]
richV i = pts (100 + i) (2 + i) (-1) 1

works :: [Work]
works =
  [ Work "hvp (n-ary sums, products)" 4
      (\i -> $(hvp 'rich) (richX i) (richV i))
      (\i r -> let x = richX i; v = richV i
                   fd = fdJac (\z -> $(grad 'rich) z) x   -- columns of H
               in expect 1e-6 "H v against differences of the gradient" r
                    (foldr1 (zipWith (+)) (zipWith (\vi col -> map (* vi) col) v fd)))
  , Work "hessian" 4
      (\i -> concat ($(hessian 'rich) (richX i)))
      (\i r -> let x = richX i
                   fd = transpose (fdJac (\z -> $(grad 'rich) z) x)
               in expect 1e-6 "Hessian against differences of the gradient" r (concat fd))
  , Work "nested gradient of a twice-walked list" 4
      (\i -> let (v, g) = $(grad' 'twiceOuter) (richX i) in v : g)
      (\i r -> let x = richX i; s = sum x
               in expect 1e-12 "2 (sum x)^2 and 4 sum x" r (2 * s * s : map (const (4 * s)) x))
  , Work "nested Hessian-vector product" 4
      (\i -> let [a, b, c, d] = pts (200 + i) 4 (-3) 3
                 (g, _) = $(grad 'psDirectional) ([a, b], Constant [c, d])
             in g)
      (\i r -> let [_, _, c, d] = pts (200 + i) 4 (-3) 3
               in expect 1e-12 "[[4, 3], [3, 8]] v" r [4 * c + 3 * d, 3 * c + 8 * d])
  , Work "three and four nested derivatives" 4
      (\i -> let x = head (pts (300 + i) 1 (-1) 1) in [fst ($(grad' 'third) x), $(grad 'third) x])
      (\i r -> let x = head (pts (300 + i) 1 (-1) 1); s = sin (x * x); c = cos (x * x)
               in expect 1e-10 "third and fourth derivatives of sin (x^2)" r
                    [ -12 * x * s - 8 * x ^ (3 :: Int) * c
                    , -12 * s - 48 * x * x * c + 16 * x ^ (4 :: Int) * s ])
  , Work "fork-join tree of simulations" 4
      (\i -> let (c, ps) = simsInput i; (gc, gps) = $(grad 'simsFork) (c, ps)
             in gc : concat [[a, b] | (a, b) <- gps])
      (\i r -> let (gc, gps) = $(grad 'simsSeq) (simsInput i)
               in expect 1e-12 "the unforked gradient" r (gc : concat [[a, b] | (a, b) <- gps]))
  , Work "checkpointed loop" 4
      (\i -> let (a, b, c) = $(grad 'pendC) (pendInput i) in [a, b, c])
      (\i r -> let (a, b, c) = $(grad 'pendP) (pendInput i)
               in if map castDoubleToWord64 r == map castDoubleToWord64 [a, b, c] then Nothing
                  else Just ("not the plain loop's gradient to the bit: " ++ show (r, [a, b, c])))
  , Work "custom rule" 4
      (\i -> $(grad 'clipped) (richX i))
      (\i r -> let x = richX i; t k u = tanh (u / k); s = sum x
               in expect 1e-12 "1 - tanh^2 (x / 2) + 1 - tanh^2 (sum x / 1.5)" r
                    [1 - t 2 xi ^ (2 :: Int) + 1 - t 1.5 s ^ (2 :: Int) | xi <- x])
  , Work "custom rule in a checkpointed loop in a pair" 4
      (\i -> let [a, b] = pts (400 + i) 2 (-2) 2; (ga, gb) = $(grad 'clippedLoop) (a, b) in [ga, gb])
      (\i r -> let [a, b] = pts (400 + i) 2 (-2) 2
                   f (u, w) = clippedLoop (u, w)
                   h = 1e-5
               in expect 1e-6 "central differences" r
                    [ (f (a + h, b) - f (a - h, b)) / (2 * h), (f (a, b + h) - f (a, b - h)) / (2 * h) ])
  , Work "Numeric.DualRev.AD grad and hessian" 4
      (\i -> let x = pts (500 + i) 3 (-1.5) 1.5 in AD.grad adF x ++ concat (AD.hessian adF x))
      (\i r -> let x@[a, b, c] = pts (500 + i) 3 (-1.5) 1.5
                   g = [b * sin c + exp (a / 3) * b / 3, a * sin c + exp (a / 3), a * b * cos c + 3 * c * c]
                   h = concat (transpose (fdJac (AD.grad adF) x))
               in firstJust [ expect 1e-12 "grad" (take 3 r) g, expect 1e-6 "hessian" (drop 3 r) h ])
  , Work "Numeric.DualRev.AD diff (nested) and jacobian" 4
      (\i -> let [x, y] = pts (600 + i) 2 (-1.5) 1.5
             in AD.diff (\u -> u * AD.diff (\w -> AD.auto u * w * w + sin w) u) x : concat (AD.jacobian adV [x, y]))
      (\i r -> let [x, y] = pts (600 + i) 2 (-1.5) 1.5
               -- u (2 u u + cos u) = 2 u^3 + u cos u: derivative 6 u^2 + cos u - u sin u
               in expect 1e-12 "closed forms" r
                    [ 6 * x * x + cos x - x * sin x
                    , y, x, exp x, 0, cos (x + y), cos (x + y) ])
  , Work "derivative after a pair" 4
      (\i -> let x = head (pts (700 + i) 1 (-1.5) 1.5); (v, d) = $(grad' 'afterPair) x in [v, d])
      (\i r -> let x = head (pts (700 + i) 1 (-1.5) 1.5)
               in expect 1e-12 "closed form" r [x * x + sin x + 2 * x ^ (3 :: Int), 2 * x + cos x + 6 * x * x])
  , Work "derivative inside a side" 4
      (\i -> let x = head (pts (800 + i) 1 (-1.5) 1.5); (v, d) = $(grad' 'insideLeft) x in [v, d])
      (\i r -> let x = head (pts (800 + i) 1 (-1.5) 1.5)
               in expect 1e-12 "closed form" r [6 * x ^ (3 :: Int), 18 * x * x])
  , Work "gradient inside a side" 4
      (\i -> let (v, g) = $(grad' 'gradInSide) (richX i) in v : g)
      (\i r -> let x = richX i
               in expect 1e-12 "closed form" r (sum (map (\u -> 3 * u ^ (3 :: Int) + u) x) : map (\u -> 9 * u * u + 1) x))
  , Work "hessian of a function with a pair" 4
      (\i -> concat ($(hessian 'pairF) (richX i)))
      (\i r -> let x = richX i
                   fd = transpose (fdJac (\z -> $(grad 'pairF) z) x)
               in expect 1e-6 "Hessian against differences of the gradient" r (concat fd))
  , Work "pair inside a nested derivative" 4
      (\i -> let x = head (pts (900 + i) 1 (-1.5) 1.5); (v, d) = $(grad' 'pairInInner) x in [v, d])
      (\i r -> let x = head (pts (900 + i) 1 (-1.5) 1.5); s = sin (x * x); c = cos (x * x)
               in expect 1e-12 "closed form" r
                    [2 * x * s + x ^ (3 :: Int) * c, 2 * s + 7 * x * x * c - 2 * x ^ (4 :: Int) * s])
  ]

simsInput :: Int -> (Double, [(Double, Double)])
simsInput i = let k = 3 + 2 * i; xs = pts (1000 + i) (2 * k) (-1) 1
                  pairs (a : b : rest) = (a, b) : pairs rest
                  pairs _ = []
              in (0.3 + 0.1 * fromIntegral i, pairs xs)

pendInput :: Int -> (Double, Double, Double)
pendInput i = let [p, v, k] = pts (1100 + i) 3 (-1) 1 in (p, v, 1.5 + k)

------------------------------------------------------------------------------
-- The run

-- | The results of a call, forced (an exception, or the results).
force :: [Double] -> IO [Double]
force r = do
  _ <- evaluate (length r)
  mapM_ evaluate r
  pure r

bits :: [Double] -> [String]
bits = map (\d -> showHex (castDoubleToWord64 d) "")

foreign import ccall unsafe "_exit" c_exit :: CInt -> IO ()

-- | Ends the process with status 2 after the given seconds (watchdog.c).
foreign import ccall unsafe "stress_watchdog" c_watchdog :: Double -> IO CInt

main :: IO ()
main = do
  seconds <- fromMaybe 3 . (>>= readMaybe) <$> lookupEnv "DUALREV_STRESS_SECONDS"
  nThreads <- fromMaybe (8 :: Int) . (>>= readMaybe) <$> lookupEnv "DUALREV_STRESS_THREADS"
  caps <- getNumCapabilities
  only <- lookupEnv "DUALREV_STRESS_ONLY"
  let ws = filter (\w -> maybe True (`isInfixOf` wName w) only) works
      -- the longest a call may take before it counts as a deadlock: the
      -- slowest call takes milliseconds
      callLimit = 30 :: Int
  putStrLn ("stress: " ++ show nThreads ++ " threads, " ++ show caps ++ " capabilities, "
            ++ show (seconds :: Double) ++ " s, " ++ show (length ws) ++ " work items")
  hFlush stdout
  -- the last resort, should this runtime itself stop (a thread stuck in
  -- C holds its capability, and nothing else runs after the next garbage
  -- collection starts): later than the check below
  _ <- c_watchdog (seconds + 2 * fromIntegral callLimit + 30)
  -- the references, on this thread alone
  refs <- forM ws $ \w -> forM [0 .. wInputs w - 1] $ \i -> do
    r <- try (timeout (callLimit * 1000000) (force (wRun w i)))
    case r of
      Left e -> fail' (wName w ++ " at input " ++ show i ++ " raised " ++ displayException (e :: SomeException))
      Right Nothing -> fail' (wName w ++ " at input " ++ show i ++ " did not finish in " ++ show callLimit ++ " s")
      Right (Just v) -> do
        forM_ (wCheck w i v) $ \m -> fail' (wName w ++ " at input " ++ show i ++ ": " ++ m)
        pure v
  -- the threads
  failures <- newIORef ([] :: [String])
  counts <- newIORef (0 :: Int, 0 :: Int)   -- calls, of which interrupted first
  start <- getMonotonicTime
  let deadline = start + seconds
      items = concat [ [(w, i, ref) | (i, ref) <- zip [0 ..] rs] | (w, rs) <- zip ws refs ]
      nItems = length items
  current <- forM [1 .. nThreads] $ \_ -> newIORef "starting"
  dones <- forM (zip [0 ..] current) $ \(k, cur) -> do
    done <- newEmptyMVar
    _ <- forkIO $ do
      worker k cur nItems items deadline callLimit failures counts
      putMVar done ()
    pure done
  -- wait for every thread, at most the run's length and a call limit more
  let waitAll = forM_ dones takeMVar
  finished <- timeout (round ((seconds + fromIntegral callLimit + 10) * 1000000)) waitAll
  case finished of
    Nothing -> do
      stuck <- forM (zip3 [0 :: Int ..] dones current) $ \(k, d, cur) -> do
        fin <- tryReadMVar d
        c <- readIORef cur
        pure (if fin == Nothing then Just ("thread " ++ show k ++ " stuck in " ++ c) else Nothing)
      putStrLn ("FAIL: threads did not finish (deadlock?):\n  " ++ unlinesI (catMaybes stuck))
      hFlush stdout
      c_exit 2
    Just () -> pure ()
  fs <- reverse <$> readIORef failures
  (n, nInt) <- readIORef counts
  end <- getMonotonicTime
  putStrLn ("stress: " ++ show n ++ " calls (" ++ show nInt ++ " interrupted first) in "
            ++ show (fromIntegral (round ((end - start) * 10) :: Int) / 10 :: Double) ++ " s, "
            ++ show (length fs) ++ " failures")
  unless (null fs) $ do
    putStrLn ("FAIL:\n  " ++ unlinesI (take 20 fs))
    hFlush stdout
    exitFailure
  where
    fail' m = putStrLn ("FAIL (reference): " ++ m) >> hFlush stdout >> exitFailure
    unlinesI = foldr1 (\a b -> a ++ "\n  " ++ b)

-- | One thread: item after item, each compared to its reference, until
-- the deadline.  Thread k starts at item k and strides through them
-- differently from the others; every fourth call is first interrupted by
-- a timeout of a few microseconds, then forced again.
worker :: Int -> IORef String -> Int -> [(Work, Int, [Double])] -> Double -> Int
       -> IORef [String] -> IORef (Int, Int) -> IO ()
worker k cur nItems items deadline callLimit failures counts = go (0 :: Int)
  where
    go rep = do
      now <- getMonotonicTime
      when (now < deadline) $ do
        let (w, i, ref) = items !! ((k + rep * (2 * k + 1)) `mod` nItems)
            what = wName w ++ " at input " ++ show i ++ " (thread " ++ show k ++ ", call " ++ show rep ++ ")"
            interrupt = (rep + k) `mod` 4 == 3
        writeIORef cur what
        let r = wRun w i
        when interrupt $ () <$ try' (timeout (10 + 37 * (rep `mod` 7)) (force r))
        res <- try' (timeout (callLimit * 1000000) (force r))
        atomicModifyIORef' counts (\(n, m) -> ((n + 1, if interrupt then m + 1 else m), ()))
        case res of
          Left e -> failWith (what ++ " raised " ++ displayException e)
          Right Nothing -> failWith (what ++ " did not finish in " ++ show callLimit ++ " s (deadlock?)")
          Right (Just v)
            | bits v == bits ref -> pure ()
            | otherwise -> failWith (what ++ ": " ++ show v ++ " is not the reference " ++ show ref)
        go (rep + 1)
    failWith m = atomicModifyIORef' failures (\fs -> (m : fs, ()))
    try' :: IO a -> IO (Either SomeException a)
    try' = try
