{-# LANGUAGE TemplateHaskell #-}
-- | Taped gradients ('tapedGrad'): a function recorded once and replayed.
-- At every point the result must be, bit for bit, what 'grad' gives; the
-- recordings counted tell a replay from a recording, so each test also
-- checks that replays happen where the path is the recorded one, and that
-- a path that changes (a comparison, a discrete result, a loop's trip
-- count, a list's length, an Int part of the input) is recorded again.
module Taped (spec) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (ErrorCall (..), evaluate, try)
import Control.Monad (forM, forM_, replicateM)
import Data.IORef (IORef, modifyIORef', newIORef, readIORef)
import Data.List (isInfixOf, sort)
import System.IO.Unsafe (unsafePerformIO)
import System.Mem (performGC)
import System.Timeout (timeout)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev
import Numeric.DualRev.Array
import Numeric.DualRev.Internal.Run.Driver.Taped (tapedRecordings)

-- | Data whose comparisons are counted: a taped call compares its input's
-- data with the last call's only when it is another object.
newtype Counted = Counted [Int]

instance Eq Counted where
  Counted a == Counted b = unsafePerformIO (modifyIORef' comparisons (+ 1) >> pure (a == b))

comparisons :: IORef Int
comparisons = unsafePerformIO (newIORef 0)
{-# NOINLINE comparisons #-}

differentiable [d|
  -- two jobs, one of them forking again: on more than one capability the
  -- recording forks at order 2 and the replay runs the jobs side by side
  forked :: [Double] -> Double
  forked xs =
    let (a, (b, c)) = sum (map sin xs) |*| (product (map cos xs) |*| sum (zipWith (*) xs xs))
    in a * b + c

  -- a branch inside a side: its guard belongs to that side's job
  forkedBranch :: [Double] -> Double
  forkedBranch xs =
    let (a, b) = (if sum xs > 0 then sum (map (\x -> x * x) xs) else product xs) |*| sum (map sin xs)
    in a * b

  -- smooth: replays everywhere
  smooth :: ([Double], Double) -> Double
  smooth (xs, s) = s * sum (zipWith (*) xs (map sin xs)) + exp (s / 4)

  -- a branch on a comparison
  branchy :: (Double, Double) -> Double
  branchy (x, y) = if x < y then x * y * y else sin x + y

  -- comparisons inside library functions and discrete results
  library :: [Double] -> Double
  library xs =
    let ys = sort xs
        m = maximum xs
        k = fromIntegral (floor (2 * head xs) :: Int)
        r = fromIntegral (round (last xs) :: Int)
    in sum (zipWith (*) ys [1 ..]) * m + k * r + signum (head xs) * abs (last xs)
       + max (head xs) (last xs) - min 0.25 (head ys)

  -- a function of two inputs that throws at any other number
  partial :: [Double] -> Double
  partial [x, y] = x * y + sin x
  partial _ = error "partial: two inputs"

  -- a loop whose trip count depends on the value: halve until below 1
  halvings :: Double -> Double
  halvings x = go x
    where go y = if y < 1 then y * y else go (y / 2)

  -- an Int part of the input, used as a number
  scaled :: (Int, Double) -> Double
  scaled (k, x) = fromIntegral k * x * x + x

  -- a Maybe: the constructor decides the program
  optional :: (Maybe Double, Double) -> Double
  optional (m, x) = case m of
    Just a -> a * x
    Nothing -> x * x * x

  -- a nested derivative: the engine cannot replay it
  nestedD :: Double -> Double
  nestedD x = x * derivative (\y -> x * y * y) x

  -- a checkpointed loop: its steps, Haskell code, run again at replay
  pendTaped :: (Double, Double, Double) -> Double
  pendTaped (p, v, k) =
    let step ((a, b), c) = ((a + 0.05 * b, b - 0.05 * (c * sin a + 0.1 * b)), c)
        ((p', v'), _) = checkpointedIterateWith 3 100 step ((p, v), k)
    in p' * v' + p' * p'

  -- a function to a pair, with a branch: its Jacobian
  polarish :: (Double, Double) -> (Double, Double)
  polarish (r, t) = if r > 1 then (r * cos t, r * sin t) else (r * r, t * r)

  -- statements whose partials are constants (dt and the literals): on a
  -- tape kept for replay each is one node with its program, which replay
  -- evaluates again; x occurs three times in v's statement (the order its
  -- partials are added in shows)
  particles :: [(Double, Double)] -> Double
  particles ps = sum [x * v | (x, v) <- map (sim (50 :: Int)) ps]
    where
      dt = 0.05
      sim k s@(x, v)
        | k == 0 = s
        | otherwise = sim (k - 1) (x + dt * v, v + dt * (-0.5 * x - 0.2 * v - 0.5 * x + 0.11 * x))

  -- arrays among the input, scalars before, between and after them, and
  -- an array of data: the arrays are array inputs of their own, given
  -- their new elements at each replay
  arrayed :: (Double, Mat, [Double], Vec, Constant Vec) -> Double
  arrayed (s, w, xs, b, c) =
    let h = vtanh (vadd (matVec w (vfromList xs)) b)
    in s * vdot h (constant c) + vsum (vrelu (vscale s b)) + sum xs * msumAll w

  -- a value that does not depend on the arrays: their gradients are zero,
  -- and a constant value has no node at all
  arrayFree :: (Vec, Double, Mat) -> Double
  arrayFree (_, s, _) = s * s

  arrayConst :: (Vec, Double, Mat) -> Double
  arrayConst _ = 2

  -- a discrete part that the value does not read, checked at every call
  withData :: (Double, Counted) -> Double
  withData (x, _) = x * x

  -- data with a NaN, which '==' finds unequal to itself
  withNaN :: (Double, Constant ([Double], [Double])) -> Double
  withNaN (x, c) = let (_, ys) = constant c in x * x * sum ys

  -- rows of the input: the inner lists' lengths are part of its shape
  rowProducts :: [[Double]] -> Double
  rowProducts rs = sum [product (map sin r) | r <- rs]

  rowSums :: [[Double]] -> (Double, Double)
  rowSums rs = (sum (map product rs), sum (map sum rs))

  -- data in arrays: the tape reads the recorded data's memory at every
  -- replay (a constant array borrows it)
  matData :: (Vec, Constant Mat) -> Double
  matData (x, m) = vsum (vtanh (matVec (constant m) x))

  -- array data the value does not read, compared at every call
  withVecData :: (Double, Constant Vec) -> Double
  withVecData (x, _) = x * x

  -- data whose sign of zero the gradient reads: atan2 0 (-1) = pi,
  -- atan2 (-0) (-1) = -pi
  signedScalar :: (Double, Constant Double) -> Double
  signedScalar (x, c) = x * atan2 (constant c) (-1)

  signedPair :: (Double, Constant (Int, Double)) -> Double
  signedPair (x, c) = let (n, a) = constant c in x * atan2 a (fromIntegral n)

  signedRows :: (Double, Constant [[Double]]) -> Double
  signedRows (x, c) = x * sum [atan2 v (-1) | r <- constant c, v <- r]

  -- the README's example: a Huber-loss line fit
  huber :: ([Double], [(Double, Double)]) -> Double
  huber ([a, b], pts) = sum [ if abs e <= 1 then e * e / 2 else abs e - 0.5
                            | (x, y) <- pts, let e = a * x + b - y ]
                        / fromIntegral (length pts)
  huber _ = 0
  |]

-- inputs of 'arrayed', moved by k, and their data
arrayedAt :: Double -> (Double, Mat, [Double], Vec, Constant Vec)
arrayedAt k = ( 0.7 + 0.1 * k
              , fromRows [[0.1 * k, 0.2, -0.3], [0.4, -0.5 + k, 0.6], [0.7, 0.8, -0.9 * k]]
              , [1 - k, 2, 0.5 * k]
              , vfromList [0.3, -0.2 * k, 0.1]
              , arrayedData )

arrayedData :: Constant Vec
arrayedData = Constant (vfromList [0.5, -1, 2])

-- a taped function of data whose sign of zero its gradient reads (pi at 0,
-- -pi at -0): recorded at 0, replayed there, recorded again at -0
signedData :: IORef Double -> ((Double, c) -> (Double, (Double, c))) -> (Double -> c) -> Expectation
signedData zero g c = do
  r0 <- tapedRecordings
  forM_ [0.5, 0.6] $ \x -> fst (g (x, c 0)) `shouldBe` x * pi
  r1 <- tapedRecordings
  z <- negate <$> readIORef zero  -- -0, not a constant the compiler folds
  isNegativeZero z `shouldBe` True
  -- (== finds -0 equal to 0: a replay would answer pi)
  fst (snd (g (0.7, c z))) `shouldBe` (-pi)
  r2 <- tapedRecordings
  (r1 - r0, r2 - r1) `shouldBe` (1, 1)

-- the README's fit, and the same descent with grad
fitWith :: (([Double], [(Double, Double)]) -> ([Double], [(Double, Double)])) -> [(Double, Double)] -> [Double]
fitWith g pts = iterate step [0, 0] !! 200
  where step w = zipWith (\p d -> p - 0.1 * d) w (fst (g (w, pts)))

instance Arbitrary Coord where
  arbitrary = Coord <$> choose (-2, 2)
newtype Coord = Coord Double deriving Show

-- | f at each point: the taped result against grad's, bit for bit (as
-- their Show), and the recordings it made
agree :: (Show a, Eq a) => (a -> (Double, a)) -> (a -> (Double, a)) -> [a] -> IO Int
agree taped plain xs = do
  r0 <- tapedRecordings
  forM_ xs $ \x -> show (taped x) `shouldBe` show (plain x)
  r1 <- tapedRecordings
  pure (r1 - r0)

spec :: Spec
spec = describe "tapedGrad" $ do
  it "replays a smooth function at every point: one recording, grad's result" $ do
    let g = $(tapedGrad' 'smooth)
    pts <- generate (replicateM 50 (do xs <- vectorOf 5 (choose (-2, 2)); s <- choose (-1, 1); pure (xs, s)))
    n <- agree g $(grad' 'smooth) pts
    n `shouldBe` 1

  it "replays statements recorded with their programs: one recording, grad's result" $ do
    let g = $(tapedGrad' 'particles)
    pts <- generate (replicateM 30 (vectorOf 3 ((,) <$> choose (-2, 2) <*> choose (-2, 2))))
    n <- agree g $(grad' 'particles) pts
    n `shouldBe` 1

  it "an exception in a call drops its state: the next call records afresh, grad's result" $ do
    let g = $(tapedGrad' 'smooth)
        pts = [([0.1, 0.2, 0.3], 0.5), ([0.4, 0.1, -0.3], 0.2), ([1.1, -0.2, 0.7], -0.4)]
    n0 <- agree g $(grad' 'smooth) (take 2 pts)
    -- an input whose second scalar throws when the call's walk reads it
    r <- try (evaluate (fst (g ([0.3, error "taped-boom", 0.1], 0.5))))
    case r of
      Left (ErrorCall msg) -> msg `shouldBe` "taped-boom"
      Right v -> expectationFailure ("got " ++ show v)
    n1 <- agree g $(grad' 'smooth) pts
    (n0, n1) `shouldBe` (1, 1)
    -- a recording that throws (the function's code at another shape)
    let h = $(tapedGrad' 'partial)
    n2 <- agree h $(grad' 'partial) [[0.5, 1], [0.7, 2]]
    r' <- try (evaluate (fst (h [0.5, 1, 2])))
    case r' of
      Left (ErrorCall msg) -> msg `shouldBe` "partial: two inputs"
      Right v -> expectationFailure ("got " ++ show v)
    n3 <- agree h $(grad' 'partial) [[0.9, 3], [1.1, 4]]
    (n2, n3) `shouldBe` (1, 1)

  it "calls interrupted at any moment by timeouts leave later calls right" $ do
    let g = $(tapedGrad' 'halvings)
        xs = [100 + fromIntegral k / 7 | k <- [0 .. 300 :: Int]]
    -- (a result cut off by the timeout is recomputed when it is next
    -- demanded: each call forced once, under its own timeout)
    forM_ (zip [1 :: Int ..] xs) $ \(k, x) -> timeout (k `mod` 40) (evaluate (g x))
    n <- agree g $(grad' 'halvings) [x + 0.01 | x <- take 20 xs]
    n `shouldSatisfy` (<= 1)

  it "records again where a comparison comes out otherwise, and only there" $ do
    let g = $(tapedGrad' 'branchy)
        pts = [(0.1, 0.5), (0.2, 0.7), (0.3, 0.9), (0.9, 0.3), (0.8, 0.1), (0.5, 0.5), (0.4, 0.6)]
    n <- agree g $(grad' 'branchy) pts
    -- first, at the first x >= y, at the next x < y
    n `shouldBe` 3

  it "guards comparisons inside sort, maximum, max, min, and floor, round, signum" $ do
    let g = $(tapedGrad' 'library)
    -- the same order and the same roundings: one recording
    n1 <- agree g $(grad' 'library) [[0.3, 1.1, -0.4], [0.31, 1.12, -0.41], [0.32, 1.08, -0.38]]
    n1 `shouldBe` 1
    -- another order, another floor, another round, another sign: each records
    n2 <- agree g $(grad' 'library) [[1.1, 0.3, -0.4], [1.6, 0.3, -0.4], [1.6, 0.3, 0.6], [-0.2, 0.3, 0.6]]
    n2 `shouldBe` 4

  it "follows a loop whose trip count depends on the value" $ do
    let g = $(tapedGrad' 'halvings)
    n <- agree g $(grad' 'halvings) [5.0, 6.0, 7.5, 9.0, 3.0, 3.5]
    -- 5 6 7.5: three halvings; 9: four; 3 3.5: two
    n `shouldBe` 3

  it "records again for another Int part or another constructor of the input" $ do
    let g = $(tapedGrad' 'scaled)
    n <- agree g $(grad' 'scaled) [(2, 0.5), (2, 0.7), (3, 0.7), (3, 0.1)]
    n `shouldBe` 2
    let h = $(tapedGrad' 'optional)
    m <- agree h $(grad' 'optional) [(Just 2, 0.5), (Just 3, 0.7), (Nothing, 0.7), (Nothing, 0.2), (Just 1, 1)]
    m `shouldBe` 3

  it "checks a discrete part that is the last call's object without ==, another with ==" $ do
    let g = $(tapedGrad' 'withData)
    d <- evaluate (Counted [1, 2, 3])
    r0 <- tapedRecordings
    c0 <- readIORef comparisons
    -- recorded at the first call; the later ones find the last call's d
    -- itself, the tuple around it new at each call
    forM_ [0.5, 0.7, 0.9, 1.1] $ \x -> fst (g (x, d)) `shouldBe` x * x
    r1 <- tapedRecordings
    c1 <- readIORef comparisons
    (r1 - r0, c1 - c0) `shouldBe` (1, 0)
    three <- newIORef 3 >>= readIORef
    e <- evaluate (Counted [1, 2, three])  -- built at run time: another object
    -- compared once, then found the last call's object
    forM_ [0.3, 0.4, 0.6] $ \x -> fst (g (x, e)) `shouldBe` x * x
    c2 <- readIORef comparisons
    f <- evaluate (Counted [1, 2, 4])
    fst (g (0.3, f)) `shouldBe` 0.3 * 0.3
    r2 <- tapedRecordings
    c3 <- readIORef comparisons
    (c2 - c1, c3 - c2, r2 - r1) `shouldBe` (1, 1, 1)

  it "replays at data with a NaN, the last call's object or a copy, in a new tuple each call" $ do
    let g = $(tapedGrad' 'withNaN)
    ref <- newIORef 1
    nan <- (\o -> o / 0 - o / 0) <$> readIORef ref  -- the NaN of the machine's arithmetic
    xs <- evaluate [nan, 1 :: Double]
    r0 <- tapedRecordings
    -- the tuple and its second list new at each call, equal by ==; the
    -- first list the same object, which == would find unequal
    forM_ [0.5, 0.7, 0.9] $ \x -> do
      one <- readIORef ref  -- read at each call: a list the compiler cannot share
      fst (g (x, Constant (xs, [one]))) `shouldBe` x * x
    r1 <- tapedRecordings
    r1 - r0 `shouldBe` 1
    -- the same values, another object (built from a value read at run
    -- time: a list the compiler computes could be the very object xs is):
    -- the same bits, NaN included, which == finds unequal
    one <- readIORef ref
    ys <- evaluate [nan, one]
    fst (g (0.3, Constant (ys, [1]))) `shouldBe` 0.3 * 0.3
    r2 <- tapedRecordings
    r2 - r1 `shouldBe` 0

  it "compares the Doubles of data by their bits: -0 for 0 records again (scalars, tuples, rows)" $ do
    zero <- newIORef 0
    signedData zero $(tapedGrad' 'signedScalar) Constant
    signedData zero $(tapedGrad' 'signedPair) (\z -> Constant (-1, z))
    signedData zero $(tapedGrad' 'signedRows) (\z -> Constant [[], [z]])

  it "records again for a list of another length" $ do
    let g = $(tapedGrad' 'smooth)
    n <- agree g $(grad' 'smooth) [([1, 2], 0.5), ([1, 2, 3], 0.5), ([4, 5, 6], 0.1), ([1], 0.3)]
    n `shouldBe` 3

  it "records again for rows of other lengths, the same count in all, once their lengths are known" $ do
    -- the second call's walk counts the rows; the third and later walk
    -- the new rows alone, against those counts
    let pts = [ [[1, 2], [3]], [[1.1, 2], [3]], [[1.2, 2], [3.1]], [[1.3], [2, 3]]
              , [[1.5], [2, 3]], [[1.5], [2.5, 3]], [[1.5], [2.5, 3], []], [[1], [2, 3], []]
              , [[1], [2, 3], [0.5]] ]
    n <- agree $(tapedGrad' 'rowProducts) $(grad' 'rowProducts) pts
    n `shouldBe` 4
    -- forty rows, some empty (more than the lengths' first store holds),
    -- then one row shorter and the next longer
    let many e = [replicate (i `mod` 4) (fromIntegral i * 0.1 + e) | i <- [1 .. 40 :: Int]]
        moved = [ replicate (if i == 30 then 1 else if i == 31 then 4 else i `mod` 4) (fromIntegral i * 0.1)
                | i <- [1 .. 40 :: Int] ]
    m <- agree $(tapedGrad' 'rowProducts) $(grad' 'rowProducts)
               [many 0, many 0.01, many 0.02, moved, many 0.03, many 0.04, many 0.05]
    m `shouldBe` 3
    let j = $(tapedJacobian 'rowSums)
    forM_ pts $ \x -> show (j x) `shouldBe` show ($(jacobian 'rowSums) x)

  it "replays a checkpointed loop (its Haskell steps run again)" $ do
    let g = $(tapedGrad' 'pendTaped)
    n <- agree g $(grad' 'pendTaped) [(0.3, 0.1, 2), (0.35, 0.05, 2.1), (0.2, 0.2, 1.9)]
    n `shouldBe` 1

  it "replays a function of (|*|) jobs, grad's result at every point (forks on -N2)" $ do
    let g = $(tapedGrad' 'forked)
    pts <- generate (replicateM 30 (vectorOf 6 (choose (-2, 2))))
    n <- agree g $(grad' 'forked) pts
    n `shouldBe` 1

  it "a branch inside a (|*|) side flips: recorded again, grad's result" $ do
    let g = $(tapedGrad' 'forkedBranch)
        up = [[1, 2, 0.5], [1.1, 2, 0.5], [1.2, 1.9, 0.4]]
        down = [[-1, -2, 0.5], [-1.1, -2, 0.5]]
    n <- agree g $(grad' 'forkedBranch) (up ++ down ++ up)
    -- once at the start, once where the sign changes, once back
    n `shouldBe` 3

  it "keeps the recorded data alive while later calls pass equal copies of it" $ do
    -- each call's matrix another object (equal: replayed); the collector
    -- runs and other matrices of its size are made between the calls, so
    -- that the memory of a copy the tape still read would be taken again
    ref <- newIORef (1 :: Double)
    let g = $(tapedGrad' 'matData)
        rows k = [[sin (fromIntegral (i * 64 + j) * k) | j <- [0 .. 63 :: Int]] | i <- [0 .. 63 :: Int]]
        copyOfData = do
          one <- readIORef ref
          evaluate (fromRows (rows one))
    r0 <- tapedRecordings
    forM_ [1 .. 12 :: Int] $ \i -> do
      m <- copyOfData
      let x = vfromList [cos (fromIntegral (i + j)) | j <- [0 .. 63 :: Int]]
          part (v, (gx, _)) = show (v, gx)
      part (g (x, Constant m)) `shouldBe` part ($(grad' 'matData) (x, Constant m))
      performGC
      others <- mapM (\k -> evaluate (fromRows (rows (fromIntegral (i * 10 + k))))) [1 .. 8 :: Int]
      _ <- evaluate (sum (map msumAll others))
      pure ()
    r1 <- tapedRecordings
    r1 - r0 `shouldBe` 1

  it "compares array data by its bits: copies with a NaN replay, 0 for -0 records again" $ do
    ref <- newIORef (0 :: Double)
    let g = $(tapedGrad' 'withVecData)
        copyWith z = do
          zero <- readIORef ref
          evaluate (vfromList [1, zero / zero, z - zero])
    r0 <- tapedRecordings
    forM_ [0.5, 0.6, 0.7] $ \x -> do
      c <- copyWith (-0.0)
      fst (g (x, Constant c)) `shouldBe` x * x
    r1 <- tapedRecordings
    r1 - r0 `shouldBe` 1
    forM_ [0.8, 0.9] $ \x -> do
      c <- copyWith 0.0
      fst (g (x, Constant c)) `shouldBe` x * x
    r2 <- tapedRecordings
    r2 - r1 `shouldBe` 1

  it "tapedJacobian: jacobian's rows, replayed on the recorded branch" $ do
    let j = $(tapedJacobian 'polarish)
        pts = [(2, 0.3), (2.5, 0.7), (1.5, -0.2), (0.5, 0.3), (0.7, 0.1), (3, 1)]
    r0 <- tapedRecordings
    forM_ pts $ \x -> show (j x) `shouldBe` show ($(jacobian 'polarish) x)
    r1 <- tapedRecordings
    (r1 - r0) `shouldBe` 3

  it "tapedHvp: hvp's product at every point and direction, replayed on the recorded branch" $ do
    let h = $(tapedHvp 'branchy)
        pts = [(0.3, 1.2), (0.5, 1.1), (0.2, 2.0), (1.5, 0.2), (1.7, -0.3), (0.1, 0.4)]
        dirs = [(1, 0), (0, 1), (0.5, -2)]
    r0 <- tapedRecordings
    forM_ pts $ \x -> forM_ dirs $ \v ->
      show (h x v) `shouldBe` show ($(hvp 'branchy) x v)
    r1 <- tapedRecordings
    -- once, again where x < y turns false, and back
    (r1 - r0) `shouldBe` 3

  it "tapedHvp: lists, many directions at one point and new points, each replayed" $ do
    let h = $(tapedHvp 'smooth)
    pts <- generate (replicateM 6 ((,) <$> vectorOf 5 (choose (-2, 2)) <*> choose (0.5, 2)))
    dirs <- generate (replicateM 4 ((,) <$> vectorOf 5 (choose (-1, 1)) <*> choose (-1, 1)))
    r0 <- tapedRecordings
    forM_ pts $ \x -> forM_ dirs $ \v ->
      show (h x v) `shouldBe` show ($(hvp 'smooth) x v)
    r1 <- tapedRecordings
    (r1 - r0) `shouldBe` 1
    -- another length: recorded again
    show (h ([1, 2], 1) ([0, 1], 1)) `shouldBe` show ($(hvp 'smooth) ([1, 2], 1) ([0, 1], 1))
    r2 <- tapedRecordings
    (r2 - r1) `shouldBe` 1

  it "tapedHvp: Vec and Mat inputs and data, hvp's product at each replay" $ do
    let h = $(tapedHvp 'arrayed)
        c = arrayedData
        at = arrayedAt
        -- (its data another than the input's: read by the flat walk)
        dir = (1, fromRows [[0, 1, 0], [0.5, 0, 0], [0, 0, -1]], [0, 1, 0.5], vfromList [1, 0, 2],
               Constant (vfromList [9, 9, 9]))
    r0 <- tapedRecordings
    forM_ [0.5, 0.9, 1.3] $ \k -> do
      show (h (at k) dir) `shouldBe` show ($(hvp 'arrayed) (at k) dir)
      let (a, b, d, e, _) = dir in
        show (h (at k) (a, b, d, e, c)) `shouldBe` show ($(hvp 'arrayed) (at k) dir)
    r1 <- tapedRecordings
    (r1 - r0) `shouldBe` 1

  it "tapedHvp: a direction of another shape is an error that loses nothing" $ do
    let h = $(tapedHvp 'smooth)
        x = ([0.5, -1, 2], 1.5)
    show (h x ([1, 0, 0], 0)) `shouldBe` show ($(hvp 'smooth) x ([1, 0, 0], 0))
    evaluate (h x ([1, 0], 0)) `shouldThrow` (\(DualRevError m) -> "the input's shape" `isInfixOf` m)
    show (h x ([0, 1, 0], 1)) `shouldBe` show ($(hvp 'smooth) x ([0, 1, 0], 1))

  it "tapedHvp: a checkpointed loop is hvp's DualRevError, at every call" $ do
    let h = $(tapedHvp 'pendTaped)
        notSupported (DualRevError m) = "not supported" `isInfixOf` m
    evaluate (h (0.3, 0.1, 2) (1, 0, 0)) `shouldThrow` notSupported
    evaluate ($(hvp 'pendTaped) (0.3, 0.1, 2) (1, 0, 0)) `shouldThrow` notSupported
    evaluate (h (0.35, 0.1, 2) (0, 1, 0)) `shouldThrow` notSupported

  it "replays a function of Vec and Mat inputs, grad's result; records again for another shape or other data" $ do
    let g = $(tapedGrad' 'arrayed)
        at = arrayedAt
    n <- agree g $(grad' 'arrayed) [at k | k <- [0.5, 0.9, 1.3, -0.4]]
    -- (relu over an array is recomputed element by element at a replay:
    -- no guard, though the signs of s b differ at k = -0.4)
    n `shouldBe` 1
    let wide (s, _, xs, b, d) = (s, fromRows [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], xs ++ [1], b, d)
        other (s, w, xs, b, _) = (s, w, xs, b, Constant (vfromList [1, 1, 1]))
    m <- agree g $(grad' 'arrayed) [wide (at 0.5), wide (at 0.6), other (at 0.5), other (at 0.7)]
    m `shouldBe` 2

  it "replays a function of arrays that its value does not depend on: zero gradients" $ do
    let at k = (vfromList [k, 2 * k, 3], 0.5 + k, fromRows [[k, -k], [1, 2 * k]])
        pts = [at k | k <- [0.25, 0.5 .. 3]]
    -- gradients of arrays made and dropped first: the zeros below are not
    -- memory that happened to be clear
    _ <- agree $(tapedGrad' 'arrayed) $(grad' 'arrayed)
      [(1 + k, fromRows [[k, 2, 3], [4, k, 6], [7, 8, k]], [k, 1, 2], vfromList [k, 1, k], Constant (vfromList [1, 2, 3]))
      | k <- [0.5, 1 .. 4]]
    performGC
    n <- agree $(tapedGrad' 'arrayFree) $(grad' 'arrayFree) pts
    n `shouldBe` 1
    m <- agree $(tapedGrad' 'arrayConst) $(grad' 'arrayConst) pts
    m `shouldBe` 1

  it "records at every call a function the engine cannot replay" $ do
    let g = $(tapedGrad' 'nestedD)
    n <- agree g $(grad' 'nestedD) [0.5, 0.7, 1.2]
    n `shouldBe` 3

  it "equals grad at random points of a branching function (property)" $
    property $ \pts -> ioProperty $ do
      let g = $(tapedGrad' 'branchy)
          xs = [(a, b) | (Coord a, Coord b) <- pts]
      _ <- agree g $(grad' 'branchy) xs
      pure True

  it "fits the README's Huber loss with few recordings, as grad does" $ do
    let pts = [(x, 2 * x + 1 + 0.3 * sin (7 * x)) | x <- [-2, -1.8 .. 2]]
        g = $(tapedGrad 'huber)
    r0 <- tapedRecordings
    let w = fitWith g pts
    show w `shouldBe` show (fitWith $(grad 'huber) pts)
    r1 <- tapedRecordings
    (r1 - r0) `shouldSatisfy` (< 40)
    case w of
      [a, b] -> do
        abs (a - 2) `shouldSatisfy` (< 0.1)
        abs (b - 1) `shouldSatisfy` (< 0.1)
      _ -> expectationFailure "two parameters"

  it "gives grad's results when called from many threads at once" $ do
    let g = $(tapedGrad 'smooth)
        pts k = [([fromIntegral (k * 7 + j) / 10, 0.3, -0.2], 0.25) | j <- [0 .. 40 :: Int]]
    inThreads (map (show . g) . pts) (map (show . $(grad 'smooth)) . pts)

  it "gives grad's results for arrays when called from many threads at once" $ do
    let g = $(tapedGrad 'arrayed)
        pts k = [ ( 0.5 + 0.01 * x
                  , fromRows [[x, 0.2, -0.3], [0.4, -x, 0.6], [0.7, 0.8, 0.1 * x]]
                  , [1 - x, 2, 0.5 * x], vfromList [0.3, -0.2 * x, 0.1]
                  , Constant (vfromList [0.5, -1, 2]) )
                | j <- [0 .. 40 :: Int], let x = fromIntegral (k * 7 + j) / 10 ]
    inThreads (map (show . g) . pts) (map (show . $(grad 'arrayed)) . pts)

-- | Eight threads, each computing its k's results in full (the strings
-- forced there, not in the thread that compares them), against the others'
inThreads :: (Int -> [String]) -> (Int -> [String]) -> IO ()
inThreads taped plain = do
  dones <- forM [0 .. 7 :: Int] $ \k -> do
    v <- newEmptyMVar
    _ <- forkIO (let rs = taped k in sum (map length rs) `seq` putMVar v rs)
    pure (k, v)
  forM_ dones $ \(k, v) -> do
    rs <- takeMVar v
    rs `shouldBe` plain k
