{-# LANGUAGE BangPatterns #-}
-- | What the Haskell benchmark executables share: the command line interface
-- of bench/c/bench_common.h, C's "%.10g" output format, input builders and
-- the repetition loop.
module BenchCommon
  ( Unit
  , benchMain
  , bump, chunk, sinVec, sinMat, forceAll
  , particlesInput, dotprodInput, summatvecInput, neuralInput, nn784Input
  ) where

import Control.Exception (evaluate)
import Data.List (foldl')
import System.Environment (getArgs, getProgName)
import System.Exit (exitWith, ExitCode (..))
import System.IO (hPutStrLn, stderr)
import Text.Read (readMaybe)

-- | The measured unit for repetition i, returning the checksum of its result.
type Unit = Int -> Double

-- | Add e to the first entry of a list (the per-repetition perturbation).
bump :: Double -> [Double] -> [Double]
bump e (x : xs) = x + e : xs
bump _ [] = []

chunk :: Int -> [a] -> [[a]]
chunk _ [] = []
chunk k l = let (row, rest) = splitAt k l in row : chunk k rest

sinVec :: Int -> [Double]
sinVec len = [sin (0.41 * fromIntegral i) | i <- [0 .. len - 1]]

sinMat :: Int -> Int -> [[Double]]
sinMat rows cols = [[sin (fromIntegral (i + j)) | j <- [0 .. cols - 1]] | i <- [0 .. rows - 1]]

-- | Force a whole input structure once, before the repetitions.
forceAll :: Foldable f => f Double -> IO ()
forceAll x = () <$ evaluate (foldl' (+) 0 x)


-- | fdotprod's inputs: xs = [1 ..], ys = [3, 5 ..], first n of each.
dotprodInput :: Int -> ([Double], [Double])
dotprodInput n = ([fromIntegral i | i <- [1 .. n]], [fromIntegral (2 * i + 1) | i <- [1 .. n]])

-- | fsummatvec's inputs: a k x k matrix filled row by row from [1 ..] and the
-- first k of [3, 5 ..], k = round (sqrt n).
summatvecInput :: Int -> ([[Double]], [Double])
summatvecInput n =
  let k = round (sqrt (fromIntegral n :: Double))
  in (chunk k [fromIntegral i | i <- [1 .. k * k]], [fromIntegral (2 * i + 1) | i <- [1 .. k]])

-- | fneural's layers (W[i][j] = sin (i+j), b[i] = sin (0.41 i)) and input.
neuralInput :: ([([[Double]], [Double])], [Double])
neuralInput =
  let nIn = 50; n1 = 100; n2 = 50
  in ([(sinMat n1 nIn, sinVec n1), (sinMat n2 n1, sinVec n2)], sinVec nIn)

-- | The 784-300-100-10 network's layers (W as fan-in x fan-out, row-major,
-- h = x W + b), batch of 64 inputs and one-hot labels, as in
-- bench/c/nn_array_bench.c.
nn784Input :: ([([[Double]], [Double])], [[Double]], [[Double]])
nn784Input = (layers, x, y)
  where
    dims = [784, 300, 100, 10] :: [Int]
    layers = [ ( [ [ sc * sin (0.7 * fromIntegral i + 1.3 * fromIntegral j + fromIntegral l)
                   | j <- [0 .. nOut - 1] ] | i <- [0 .. nIn - 1] ]
               , [ 0.1 * sin (0.41 * fromIntegral j + fromIntegral l) | j <- [0 .. nOut - 1] ] )
             | (l, nIn, nOut) <- zip3 [0 :: Int ..] dims (tail dims)
             , let sc = 1 / sqrt (fromIntegral nIn) ]
    x = [ [ sin (0.37 * fromIntegral (b + 1) + 0.013 * fromIntegral i * fromIntegral (b `mod` 7 + 1))
          | i <- [0 .. 783 :: Int] ] | b <- [0 .. 63 :: Int] ]
    y = [ [ if j == b `mod` 10 then 1 else 0 | j <- [0 .. 9 :: Int] ] | b <- [0 .. 63 :: Int] ]

-- | fparticles' particles: position (0.5 i, 0.1), velocity (1, 1), i = 1..4.
particlesInput :: [((Double, Double), (Double, Double))]
particlesInput = [((0.5 * fromIntegral j, 0.1), (1, 1)) | j <- [1 .. 4 :: Int]]

-- | Parse the command line, build the unit (given the runtime zero and the
-- size; Nothing for an unknown program), run it reps times, print the
-- checksum.
benchMain :: String -> (String -> Double -> Int -> Maybe (IO Unit)) -> IO ()
benchMain name mkUnit = do
  args <- getArgs
  case args of
    (prog : sizeS : repsS : _) -> do
      (n, reps) <- case (readMaybe sizeS, readMaybe repsS) of
        (Just n, Just reps) | n >= 0, reps >= 0 -> pure (n, reps :: Int)
        _ -> do
          hPutStrLn stderr (name ++ ": bad size or reps")
          exitWith (ExitFailure 1)
      let z = runtimeZero reps
      case mkUnit prog z n of
        Nothing -> do
          hPutStrLn stderr (name ++ ": unknown program '" ++ prog ++ "'")
          usage
          exitWith (ExitFailure 2)
        Just mk -> do
          if (prog == "fdotprod" || prog == "fsummatvec") && n < 1
            then do
              hPutStrLn stderr (name ++ ": " ++ prog ++ " needs a size >= 1")
              exitWith (ExitFailure 1)
            else pure ()
          unit <- mk
          c <- runReps reps unit
          putStrLn (formatG 10 c)
    _ -> usage >> exitWith (ExitFailure 1)

-- | Run the unit for repetitions 0 .. reps-1, forcing each checksum; return
-- the last one (0 when reps is 0).
runReps :: Int -> Unit -> IO Double
runReps reps unit = go 0 0
  where
    go !i !acc
      | i >= reps = pure acc
      | otherwise = do
          c <- evaluate (unit i)
          go (i + 1) c

-- | C's printf "%.<p>g" (Text.Printf's %g is not the same format): p
-- significant digits, correctly rounded from the exact binary value (ties to
-- even, as glibc does), fixed notation when the decimal exponent X satisfies
-- -4 <= X < p and exponential (at least two exponent digits) otherwise, with
-- trailing zeros and a trailing point removed.
formatG :: Int -> Double -> String
formatG p x
  | isNaN x = "nan"
  | isInfinite x = if x < 0 then "-inf" else "inf"
  | x == 0 = if isNegativeZero x then "-0" else "0"
  | otherwise = (if x < 0 then "-" else "") ++ body
  where
    r = abs (toRational x)
    e0 = floor (logBase 10 (abs x)) :: Int
    pow10 k = if k >= 0 then 10 ^ k else recip (10 ^ negate k) :: Rational
    fixE e
      | r < pow10 e = fixE (e - 1)
      | r >= pow10 (e + 1) = fixE (e + 1)
      | otherwise = e
    e1 = fixE e0
    m1 = round (r * pow10 (p - 1 - e1)) :: Integer
    (m, ex) = if m1 >= 10 ^ p then (m1 `div` 10, e1 + 1) else (m1, e1)
    digits = show m -- exactly p digits
    stripZeros s = case dropWhile (== '0') (reverse s) of
      '.' : rest -> reverse rest
      rest -> reverse rest
    body
      | ex < -4 || ex >= p =
          let mant = case digits of
                d : ds -> stripZeros (d : '.' : ds)
                [] -> "0"
              expo = let a = show (abs ex) in (if ex < 0 then "-" else "+") ++ (if length a < 2 then '0' : a else a)
          in mant ++ "e" ++ expo
      | otherwise =
          let decimals = p - 1 - ex
              padded = replicate (decimals + 1 - length digits) '0' ++ digits
              (intPart, fracPart) = splitAt (length padded - decimals) padded
          in if decimals == 0 then intPart else stripZeros (intPart ++ "." ++ fracPart)

-- | A zero GHC cannot constant-fold: it depends on reps, known only at run
-- time, through a function GHC may not inline.
runtimeZero :: Int -> Double
runtimeZero reps = if reps < 0 then 1 else 0
{-# NOINLINE runtimeZero #-}

usage :: IO ()
usage = do
  exe <- getProgName
  hPutStrLn stderr $
    "usage: " ++ exe ++ " <program> <size> <reps>\nprograms: fmult fdotprod fsummatvec "
      ++ "frotvecquat fneural fparticles fparticles-fork"
