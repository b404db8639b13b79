{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE CPP #-}
{-# LANGUAGE DeriveTraversable #-}
{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE TypeFamilies #-}
-- | ad-bench: the six benchmark programs of ../shared/benchmarks.md written
-- with the Haskell @ad@ package (Numeric.AD.Mode.Reverse.Double, 4.5.x), the
-- baseline dualrev is compared against.  Built only where @ad@ is installed
-- (see bench/hs/README.md).
--
-- The same source, with DUALREV_AD defined, is dualrev-ad-bench: the
-- programs with the import switched to dualrev's ad-compatible API
-- (Numeric.DualRev.AD.Mode.Reverse.Double) and nothing else changed.
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

import Data.List (foldl')
#ifdef DUALREV_AD
import Numeric.DualRev.AD (Mode (..), hessianProduct')
import Numeric.DualRev.AD.Mode.Reverse.Double (grad, jacobian)
#else
import Numeric.AD (Mode (..), Scalar, hessianProduct')
import Numeric.AD.Mode.Reverse.Double (grad, jacobian)
#endif

import BenchCommon

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

-- | The k-means cost of k centres of dimension d (flat, centre after
-- centre) over fixed points: each point's squared distance to its nearest
-- centre, summed.  Differentiated with hessianProduct' (the gradient and
-- the Hessian times a direction; in @ad@, forward-on-reverse).
kmeans :: (Mode a, Scalar a ~ Double, Floating a, Ord a) => Int -> [[Double]] -> [a] -> a
kmeans d pts cs = foldl' (+) 0 [minimum [dist p c | c <- centres] | p <- pts]
  where
    centres = chunks cs
    chunks [] = []
    chunks xs = take d xs : chunks (drop d xs)
    dist p c = foldl' (+) 0 (zipWith (\x y -> let t = auto x - y in t * t) p c)

-- | One benchmark: given the runtime zero and the size, build the input
-- (forced once) and return the measured unit for repetition i, which returns
-- the checksum of its result.
mkUnit :: String -> Double -> Int -> Maybe (IO Unit)
mkUnit prog z n = case prog of
  "fmult" -> Just $ pure $ \i ->
    let e = fromIntegral i * z
    in sum (grad fmult (FMult (3 + e, 4)))
  "fdotprod" -> Just $ do
    let (xs, ys) = dotprodInput n
    forceAll xs >> forceAll ys
    pure $ \i -> sum (grad fdotprod (FDotProd (bump (fromIntegral i * z) xs, ys)))
  "fsummatvec" -> Just $ do
    let (m, v) = summatvecInput n
    forceAll (concat m) >> forceAll v
    pure $ \i -> sum (grad fsummatvec (FSumMatVec (m, bump (fromIntegral i * z) v)))
  "frotvecquat" -> Just $ pure $ \i ->
    let e = fromIntegral i * z
        jac = jacobian frotvecquat (FRotVecQuat (Vec3 (1 + e) 2 3, Quaternion 4 5 6 7))
    in sum (fmap sum jac)
  "fneural" -> Just $ do
    let (layers, input) = neuralInput
    forceAll (FNeural (layers, input))
    pure $ \i -> sum (grad fneural (FNeural (layers, bump (fromIntegral i * z) input)))
  "fparticles" -> particles
  "fparticles-fork" -> particles
  "kmeans-hvp" -> Just $ do
    -- k = 10 centres of d = 16, n points (1000 when size is 0)
    let k = 10; d = 16; np = if n > 0 then n else 1000
        pts = [[sin (fromIntegral (i * d + j) * 0.37) | j <- [0 .. d - 1]] | i <- [0 .. np - 1]]
        c0 = [cos (fromIntegral j * 0.11) | j <- [0 .. k * d - 1]]
        dir = [fromIntegral (j `mod` 7) / 7 | j <- [0 .. k * d - 1 :: Int]]
    forceAll (concat pts) >> forceAll c0 >> forceAll dir
    pure $ \i ->
      let res = hessianProduct' (kmeans d pts) (zip (bump (fromIntegral i * z) c0) dir)
      in sum (map fst res) + sum (map snd res) -- ad has no fork-join: the sequential program
  _ -> Nothing
  where
    particles = Just $ do
      let ps = particlesInput
      forceAll (FParticles ps)
      pure $ \i ->
        let perturbed = case ps of
              (((px, py), v) : rest) -> ((px + fromIntegral i * z, py), v) : rest
              [] -> []
        in sum (grad fparticles (FParticles perturbed))

main :: IO ()
#ifdef DUALREV_AD
main = benchMain "dualrev-ad-bench" mkUnit
#else
main = benchMain "ad-bench" mkUnit
#endif
