{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE DeriveTraversable #-}
-- | ad-bench: the six benchmark programs of ../shared/benchmarks.md written
-- with the Haskell @ad@ package (Numeric.AD.Mode.Reverse.Double, 4.5.x), the
-- baseline dualrev is compared against.  Built only where @ad@ is installed
-- (see bench/hs/README.md).
--
-- Interface (the same as the C bench executables, bench/c/bench_common.h):
--
-- > ad-bench <program> <size> <reps> [+RTS ...]
--
-- runs the program's measured unit @reps@ times and prints one line: the sum
-- of all gradient entries of the last result (frotvecquat: of all 21 entries
-- of the 3x7 Jacobian), formatted like C's "%.10g".  @size@ is n for fdotprod
-- and fsummatvec (k = round (sqrt n) for fsummatvec) and ignored by the
-- others.  @ad@ has no parallelism: fparticles runs sequentially whatever the
-- number of capabilities, and "fparticles-fork" (the slot for the fork-join
-- variant) runs the same sequential program.  An unknown program exits with
-- status 2, bad numbers with status 1; arguments after the three are ignored.
--
-- The programs are written the way an ordinary @ad@ user writes them:
-- generic @(Floating a, Ord a) =>@ functions over Traversable input types,
-- differentiated with 'grad' (one scalar output) or 'jacobian' (frotvecquat:
-- one recorded tape, three reverse sweeps).  The inputs are built and forced
-- once; each repetition then differentiates from the inputs onwards.  To keep
-- GHC from sharing the work of one repetition with the next, repetition i
-- adds i * z to one input entry, where z is a zero GHC cannot see (it is
-- computed from the command line), so every repetition is a fresh gradient
-- of the same input.
module Main (main) where

import Control.Exception (evaluate)
import Data.List (foldl')
import Numeric.AD.Mode.Reverse.Double (grad, jacobian)
import System.Environment (getArgs, getProgName)
import System.Exit (exitWith, ExitCode (..))
import System.IO (hPutStrLn, stderr)
import Text.Read (readMaybe)

-- ------------------------------------------------------------ input types

data Vec3 s = Vec3 s s s
  deriving (Show, Functor, Foldable, Traversable)

-- | @Quaternion x y z w@: (x, y, z) is the vector part u, w the scalar s.
data Quaternion s = Quaternion s s s s
  deriving (Show, Functor, Foldable, Traversable)

newtype FMult s = FMult (s, s)
  deriving (Show, Functor, Foldable, Traversable)

newtype FDotProd s = FDotProd ([s], [s])
  deriving (Show, Functor, Foldable, Traversable)

newtype FSumMatVec s = FSumMatVec ([[s]], [s])
  deriving (Show, Functor, Foldable, Traversable)

newtype FRotVecQuat s = FRotVecQuat (Vec3 s, Quaternion s)
  deriving (Show, Functor, Foldable, Traversable)

-- | The layers (weight matrix as a list of rows, bias) and the input vector.
newtype FNeural s = FNeural ([([[s]], [s])], [s])
  deriving (Show, Functor, Foldable, Traversable)

-- | Per particle: (position, velocity).
newtype FParticles s = FParticles [((s, s), (s, s))]
  deriving (Show, Functor, Foldable, Traversable)

-- --------------------------------------------------------------- programs

fmult :: Num a => FMult a -> a
fmult (FMult (x, y)) = x * y

dot :: Num a => [a] -> [a] -> a
dot xs ys = sum (zipWith (*) xs ys)

fdotprod :: Num a => FDotProd a -> a
fdotprod (FDotProd (xs, ys)) = dot xs ys

fsummatvec :: Num a => FSumMatVec a -> a
fsummatvec (FSumMatVec (rows, v)) = sum (map (dot v) rows)

-- | rotate_vec_by_quat of Krawiec et al. (POPL 2022, Fig. 12).
frotvecquat :: Num a => FRotVecQuat a -> Vec3 a
frotvecquat (FRotVecQuat (v, q)) = rotateVecByQuat v q

rotateVecByQuat :: Num a => Vec3 a -> Quaternion a -> Vec3 a
rotateVecByQuat v q@(Quaternion _ _ _ s) =
  scale (2 * dot3 u v) u `vadd` scale (s * s - dot3 u u) v `vadd` scale (2 * s) (cross u v)
  where
    u = qToVec q
    qToVec (Quaternion x y z _) = Vec3 x y z
    dot3 (Vec3 px py pz) (Vec3 qx qy qz) = px * qx + py * qy + pz * qz
    vadd (Vec3 px py pz) (Vec3 qx qy qz) = Vec3 (px + qx) (py + qy) (pz + qz)
    scale k (Vec3 x y z) = Vec3 (k * x) (k * y) (k * z)
    cross (Vec3 ax ay az) (Vec3 bx by bz) =
      Vec3 (ay * bz - az * by) (az * bx - ax * bz) (ax * by - ay * bx)

-- | Dense network, x' = relu (W x + b) per layer, then safe softmax (subtract
-- the running maximum, started at 0) and the sum of its outputs.
fneural :: (Floating a, Ord a) => FNeural a -> a
fneural (FNeural (layers, input)) = sum (forward layers input)
  where
    forward [] x = safeSoftmax x
    forward ((w, b) : rest) x = forward rest (map relu (zipWith (+) (map (`dot` x) w) b))
    relu x = if x >= 0 then x else 0
    safeSoftmax xs =
      let m = foldl' (\acc x -> if x > acc then x else acc) 0 xs
          es = map (\x -> exp (x - m)) xs
          total = sum es
      in map (/ total) es

-- | 4 particles, 1000 steps of a = -0.5 p - 0.2 v (mass 1), p' = p + dt v,
-- v' = v + dt a; the output is the sum of x*y over the final positions.
fparticles :: Fractional a => FParticles a -> a
fparticles (FParticles ps) = sum [x * y | (x, y) <- map (\(p, v) -> loop steps p v) ps]
  where
    steps = 1000 :: Int
    dt = 0.05
    (a, b) .+ (c, d) = (a + c, b + d)
    k .* (a, b) = (k * a, k * b)
    step p v =
      let acc = ((-0.5) .* p) .+ ((-0.2) .* v)
      in (p .+ (dt .* v), v .+ (dt .* acc))
    loop 0 p _ = p
    loop n p v = case step p v of
      ((!px, !py), (!vx, !vy)) -> loop (n - 1) (px, py) (vx, vy)

-- ----------------------------------------------------------------- inputs

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

-- | One benchmark: given the runtime zero and the size, build the input
-- (forced once) and return the measured unit for repetition i, which returns
-- the checksum of its result.
type Unit = Int -> Double

mkUnit :: String -> Double -> Int -> Maybe (IO Unit)
mkUnit prog z n = case prog of
  "fmult" -> Just $ pure $ \i ->
    let e = fromIntegral i * z
    in sum (grad fmult (FMult (3 + e, 4)))
  "fdotprod" -> Just $ do
    let xs = [fromIntegral i | i <- [1 .. n]] -- [1 ..], first n
        ys = [fromIntegral (2 * i + 1) | i <- [1 .. n]] -- [3, 5 ..], first n
    forceAll xs >> forceAll ys
    pure $ \i -> sum (grad fdotprod (FDotProd (bump (fromIntegral i * z) xs, ys)))
  "fsummatvec" -> Just $ do
    let k = round (sqrt (fromIntegral n :: Double))
        m = chunk k [fromIntegral i | i <- [1 .. k * k]] -- filled from [1 ..]
        v = [fromIntegral (2 * i + 1) | i <- [1 .. k]] -- [3, 5 ..], first k
    forceAll (concat m) >> forceAll v
    pure $ \i -> sum (grad fsummatvec (FSumMatVec (m, bump (fromIntegral i * z) v)))
  "frotvecquat" -> Just $ pure $ \i ->
    let e = fromIntegral i * z
        jac = jacobian frotvecquat (FRotVecQuat (Vec3 (1 + e) 2 3, Quaternion 4 5 6 7))
    in sum (fmap sum jac)
  "fneural" -> Just $ do
    let nIn = 50; n1 = 100; n2 = 50
        layers = [(sinMat n1 nIn, sinVec n1), (sinMat n2 n1, sinVec n2)]
        input = sinVec nIn
    forceAll (FNeural (layers, input))
    pure $ \i -> sum (grad fneural (FNeural (layers, bump (fromIntegral i * z) input)))
  "fparticles" -> particles
  "fparticles-fork" -> particles -- ad has no fork-join: the sequential program
  _ -> Nothing
  where
    particles = Just $ do
      let ps = [((0.5 * fromIntegral j, 0.1), (1, 1)) | j <- [1 .. 4 :: Int]]
      forceAll (FParticles ps)
      pure $ \i ->
        let perturbed = case ps of
              (((px, py), v) : rest) -> ((px + fromIntegral i * z, py), v) : rest
              [] -> []
        in sum (grad fparticles (FParticles perturbed))

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

main :: IO ()
main = do
  args <- getArgs
  case args of
    (prog : sizeS : repsS : _) -> do
      (n, reps) <- case (readMaybe sizeS, readMaybe repsS) of
        (Just n, Just reps) | n >= 0, reps >= 0 -> pure (n, reps :: Int)
        _ -> do
          hPutStrLn stderr "ad-bench: bad size or reps"
          exitWith (ExitFailure 1)
      let z = runtimeZero reps
      case mkUnit prog z n of
        Nothing -> do
          hPutStrLn stderr ("ad-bench: unknown program '" ++ prog ++ "'")
          usage
          exitWith (ExitFailure 2)
        Just mk -> do
          if (prog == "fdotprod" || prog == "fsummatvec") && n < 1
            then do
              hPutStrLn stderr ("ad-bench: " ++ prog ++ " needs a size >= 1")
              exitWith (ExitFailure 1)
            else pure ()
          unit <- mk
          c <- runReps reps unit
          putStrLn (formatG 10 c)
    _ -> usage >> exitWith (ExitFailure 1)
