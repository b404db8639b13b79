{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE TemplateHaskell #-}
-- | dualrev-hs-bench: the six benchmark programs of ../shared/benchmarks.md
-- through the dualrev Haskell front end, written as plain Haskell in a
-- differentiable block and differentiated with $(grad 'f) / $(jacobian 'f).
-- Same interface and checksums as ad-bench and the C executables
-- (bench/hs/README.md).  fparticles-fork simulates the four particles as
-- parallel jobs with (|*|); run it with +RTS -N1 / -N2.
module Main (main) where

import BenchCommon
import Control.Monad (forM_)
import Data.Bits (shiftR)
import Data.Word (Word32)
import Numeric.DualRev.Functions (softplus)
import Numeric.DualRev
import Numeric.DualRev.Array

differentiable [d|
  fmult :: (Double, Double) -> Double
  fmult (x, y) = x * y

  dot :: [Double] -> [Double] -> Double
  dot xs ys = sum (zipWith (*) xs ys)

  fdotprod :: ([Double], [Double]) -> Double
  fdotprod (xs, ys) = dot xs ys

  fsummatvec :: ([[Double]], [Double]) -> Double
  fsummatvec (m, v) = sum (map (dot v) m)

  data Vec3 a = Vec3 a a a
  -- | Quaternion x y z w: (x, y, z) is the vector part u, w the scalar s.
  data Quaternion a = Quaternion a a a a

  frotvecquat :: (Vec3 Double, Quaternion Double) -> Vec3 Double
  frotvecquat (v, Quaternion qx qy qz s) =
    scale (2 * dot3 u v) u `add3` scale (s * s - dot3 u u) v `add3` scale (2 * s) (cross u v)
    where
      u = Vec3 qx qy qz
      dot3 (Vec3 px py pz) (Vec3 rx ry rz) = px * rx + py * ry + pz * rz
      add3 (Vec3 px py pz) (Vec3 rx ry rz) = Vec3 (px + rx) (py + ry) (pz + rz)
      scale k (Vec3 x y z) = Vec3 (k * x) (k * y) (k * z)
      cross (Vec3 ax ay az) (Vec3 bx by bz) =
        Vec3 (ay * bz - az * by) (az * bx - ax * bz) (ax * by - ay * bx)

  fneural :: ([([[Double]], [Double])], [Double]) -> Double
  fneural (layers, input) = sum (forward layers input)
    where
      forward [] x = safeSoftmax x
      forward ((w, b) : rest) x = forward rest (map relu (zipWith (+) (map (dot x) w) b))
      relu x = if x >= 0 then x else 0
      safeSoftmax xs =
        let m = foldl (\acc x -> if x > acc then x else acc) 0 xs
            es = map (\x -> exp (x - m)) xs
            total = sum es
        in map (/ total) es

  simulate :: ((Double, Double), (Double, Double)) -> (Double, Double)
  simulate (p0, v0) = loop (1000 :: Int) p0 v0
    where
      dt = 0.05
      add (a, b) (c, d) = (a + c, b + d)
      scl k (a, b) = (k * a, k * b)
      loop n p v
        | n == 0 = p
        | otherwise =
            let acc = add (scl (-0.5) p) (scl (-0.2) v)
            in loop (n - 1) (add p (scl dt v)) (add v (scl dt acc))

  -- a least-squares line through data, the data a Constant as a fit
  -- passes it: a new tuple of the same two lists at every call
  lineFit :: ((Double, Double), Constant ([Double], [Double])) -> Double
  lineFit ((a, b), c) =
    let (xs, ys) = constant c
    in sum (zipWith (\x y -> (a * x + b - y) * (a * x + b - y)) xs ys)

  fparticles :: [((Double, Double), (Double, Double))] -> Double
  fparticles ps = sum [x * y | (x, y) <- map simulate ps]

  -- the four particles as a fork-join tree of parallel jobs
  fparticlesFork :: [((Double, Double), (Double, Double))] -> Double
  fparticlesFork [a, b, c, d] =
    let ((pa, pb), (pc, pd)) = (simulate a |*| simulate b) |*| (simulate c |*| simulate d)
    in sum [x * y | (x, y) <- [pa, pb, pc, pd]]
  fparticlesFork ps = fparticles ps

  -- fneural's input and output with almost no work between: the cost of
  -- walking the 10 200 parameters in and building their gradient
  fneuralWalks :: ([([[Double]], [Double])], [Double]) -> Double
  fneuralWalks (_, input) = sum input

  -- polymorphic versions (differentiated at Double): the same speed as the
  -- monomorphic ones is the goal
  dotP :: Num a => [a] -> [a] -> a
  dotP xs ys = sum (zipWith (*) xs ys)

  fdotprodP :: Num a => ([a], [a]) -> a
  fdotprodP (xs, ys) = dotP xs ys

  fneuralP :: (Ord a, Floating a) => ([([[a]], [a])], [a]) -> a
  fneuralP (layers, input) = sum (forward layers input)
    where
      forward [] x = safeSoftmax x
      forward ((w, b) : rest) x = forward rest (map relu (zipWith (+) (map (dotP x) w) b))
      relu x = if x >= 0 then x else 0
      safeSoftmax xs =
        let m = foldl (\acc x -> if x > acc then x else acc) 0 xs
            es = map (\x -> exp (x - m)) xs
            total = sum es
        in map (/ total) es

  simulateP :: Fractional a => ((a, a), (a, a)) -> (a, a)
  simulateP (p0, v0) = loop (1000 :: Int) p0 v0
    where
      dt = 0.05
      add (a, b) (c, d) = (a + c, b + d)
      scl k (a, b) = (k * a, k * b)
      loop n p v
        | n == 0 = p
        | otherwise =
            let acc = add (scl (-0.5) p) (scl (-0.2) v)
            in loop (n - 1) (add p (scl dt v)) (add v (scl dt acc))

  fparticlesP :: Fractional a => [((a, a), (a, a))] -> a
  fparticlesP ps = sum [x * y | (x, y) <- map simulateP ps]

  -- fneural with array operations: one tape node per layer operation
  fneuralArray :: ([(Mat, Vec)], Vec) -> Double
  fneuralArray (layers, input) = vsum (softmax (forwardA layers input))
    where
      forwardA [] x = x
      forwardA ((w, b) : rest) x = forwardA rest (vrelu (vadd (matVec w x) b))

  -- second_order_bench.c's nn: 40 inputs x, 60 tanh units (weights W row
  -- by row, biases b), output weights v, a softplus head and a penalty
  nnLoss :: [Double] -> Double
  nnLoss p =
    let (x, r1) = splitAt 40 p
        (wf, r2) = splitAt 2400 r1
        (b, v) = splitAt 60 r2
        rows ws = case ws of
          [] -> []
          _ -> let (h, t) = splitAt 40 ws in h : rows t
        out = sum (zipWith3 (\w bj vj -> vj * tanh (bj + sum (zipWith (*) w x))) (rows wf) b v)
    in softplus out + 0.01 * sum (map (\w -> w * w) wf)

  -- second_order_bench.c's rot: frotvecquat's three outputs summed
  rotSum :: [Double] -> Double
  rotSum [vx, vy, vz, qx, qy, qz, s] =
    case frotvecquat (Vec3 vx vy vz, Quaternion qx qy qz s) of
      Vec3 a b c -> a + b + c
  rotSum _ = 0

  -- 784-300-100-10, relu, softmax cross-entropy averaged over a batch of 64
  -- (rows of x), the batch as matrix products; x and the one-hot labels y are
  -- data, not parameters
  nn784 :: ([(Mat, Vec)], Constant (Mat, Mat)) -> Double
  nn784 (layers, batch) =
    let (x, y) = constant batch
        z = dense layers x
        n = fromIntegral (mrows x)
    in (vsum (logSumExpRows z) - msumAll (mmul y z)) / n
    where
      dense [(w, b)] h = addRowVec (matMul h w) b
      dense ((w, b) : rest) h = dense rest (mrelu (addRowVec (matMul h w) b))
  |]

mkUnit :: String -> Double -> Int -> Maybe (IO Unit)
mkUnit prog z n = case prog of
  "fmult" -> Just $ pure $ \i ->
    let (gx, gy) = $(grad 'fmult) (3 + fromIntegral i * z, 4) in gx + gy
  "fdotprod" -> dotprod $(grad 'fdotprod)
  "fdotprod-poly" -> dotprod $(grad 'fdotprodP)
  "fsummatvec" -> Just $ do
    let (m, v) = summatvecInput n
    forceAll (concat m) >> forceAll v
    pure $ \i -> case $(grad 'fsummatvec) (m, bump (fromIntegral i * z) v) of
      (gm, gv) -> let !s = sum (map sum gm) in s + sum gv
  "frotvecquat" -> Just $ pure $ \i ->
    let e = fromIntegral i * z
        jac = $(jacobian 'frotvecquat) (Vec3 (1 + e) 2 3, Quaternion 4 5 6 7)
        rowSum (Vec3 a b c, Quaternion d f g h) = a + b + c + d + f + g + h
    in sum (map rowSum jac)
  "fneural" -> neural $(grad 'fneural)
  "fneural-poly" -> neural $(grad 'fneuralP)
  "fneural-walks" -> neural $(grad 'fneuralWalks)
  "fneural-array" -> Just $ do
    let (layers, input) = neuralInput
        layersA = [(fromRows w, vfromList b) | (w, b) <- layers]
        inputA = vfromList input
    pure $ \i -> let (gl, gi) = $(grad 'fneuralArray) (layersA, vscale (1 + fromIntegral i * z) inputA)
                 in sum [msumAll w + vsum b | (w, b) <- gl] + vsum gi
  "nn784" -> Just $ do
    let (layers, x, y) = nn784Input
        layersA = [(fromRows w, vfromList b) | (w, b) <- layers]
        batch = Constant (fromRows x, fromRows y)
    pure $ \i -> let (gl, _) = $(grad 'nn784) (map (\(w, b) -> (w, vscale (1 + fromIntegral i * z) b)) layersA, batch)
                 in sum [msumAll w + vsum b | (w, b) <- gl]
  -- one Hessian-vector product of nn784 at a new point (recording and the
  -- product: nn-array-bench's nn784-rechvp, the same direction and checksum)
  "nn784-hvp" -> nn784Hvp $(hvp 'nn784)
  -- the same, recorded once and replayed
  "nn784-taped-hvp" -> nn784Hvp $(tapedHvp 'nn784)
  -- recorded once, replayed at each unit's perturbed input ($(tapedGrad))
  "fmult-taped" -> Just $ do
    let g = $(tapedGrad 'fmult)
    pure $ \i -> let (gx, gy) = g (3 + fromIntegral i * z, 4) in gx + gy
  "fdotprod-taped" -> dotprod $(tapedGrad 'fdotprod)
  "fsummatvec-taped" -> Just $ do
    let (m, v) = summatvecInput n
        g = $(tapedGrad 'fsummatvec)
    forceAll (concat m) >> forceAll v
    pure $ \i -> case g (m, bump (fromIntegral i * z) v) of
      (gm, gv) -> let !s = sum (map sum gm) in s + sum gv
  "fneural-taped" -> neural $(tapedGrad 'fneural)
  "fneural-array-taped" -> Just $ do
    let (layers, input) = neuralInput
        layersA = [(fromRows w, vfromList b) | (w, b) <- layers]
        inputA = vfromList input
        g = $(tapedGrad 'fneuralArray)
    pure $ \i -> let (gl, gi) = g (layersA, vscale (1 + fromIntegral i * z) inputA)
                 in sum [msumAll w + vsum b | (w, b) <- gl] + vsum gi
  "nn784-taped" -> Just $ do
    let (layers, x, y) = nn784Input
        layersA = [(fromRows w, vfromList b) | (w, b) <- layers]
        batch = Constant (fromRows x, fromRows y)
        g = $(tapedGrad 'nn784)
    pure $ \i -> let (gl, _) = g (map (\(w, b) -> (w, vscale (1 + fromIntegral i * z) b)) layersA, batch)
                 in sum [msumAll w + vsum b | (w, b) <- gl]
  -- a fit's gradient over n points of data: the data compared with the
  -- recorded input's at every taped call, unless it is the same object
  "linefit" -> lineFitUnit False $(grad 'lineFit)
  "linefit-taped" -> lineFitUnit False $(tapedGrad 'lineFit)
  -- two equal copies of the data in turn: every call compares them
  "linefit-taped-alt" -> lineFitUnit True $(tapedGrad 'lineFit)
  "fparticles-taped" -> particles $(tapedGrad 'fparticles)
  "fparticles" -> particles $(grad 'fparticles)
  "fparticles-fork" -> particles $(grad 'fparticlesFork)
  "fparticles-fork-taped" -> particles $(tapedGrad 'fparticlesFork)
  "fparticles-poly" -> particles $(grad 'fparticlesP)
  -- nn's gradient, to set its products against (second-order-bench's nn-rec1)
  "nn-grad" -> Just $ do
    let p = nnInputs
    forceAll p
    pure $ \i -> sum ($(grad 'nnLoss) (bump (fromIntegral i * z) p))
  -- nnLoss itself, no derivative: what its list code costs
  "nn-primal" -> Just $ do
    let p = nnInputs
    forceAll p
    pure $ \i -> nnLoss (bump (fromIntegral i * z) p)
  -- one Hessian-vector product at a new point: recording and the product
  -- (second-order-bench's nn-rechvp and rot-rechvp)
  "nn-hvp" -> Just $ do
    let p = nnInputs
        v = [1 / (1 + fromIntegral k) | k <- [0 .. length p - 1]]
    forceAll p >> forceAll v
    pure $ \i -> sum ($(hvp 'nnLoss) (bump (fromIntegral i * z) p) v)
  "rot-hvp" -> Just $ do
    let v = [1 / (1 + fromIntegral k) | k <- [0 .. 6 :: Int]]
    pure $ \i -> sum ($(hvp 'rotSum) [1 + fromIntegral i * z, 2, 3, 4, 5, 6, 7] v)
  -- the same products, recorded once and replayed at each new point
  -- (second-order-bench's nn-rephvp and rot-rephvp)
  "nn-taped-hvp" -> Just $ do
    let p = nnInputs
        v = [1 / (1 + fromIntegral k) | k <- [0 .. length p - 1]]
        h = $(tapedHvp 'nnLoss)
    forceAll p >> forceAll v
    pure $ \i -> sum (h (bump (fromIntegral i * z) p) v)
  "rot-taped-hvp" -> Just $ do
    let v = [1 / (1 + fromIntegral k) | k <- [0 .. 6 :: Int]]
        h = $(tapedHvp 'rotSum)
    pure $ \i -> sum (h [1 + fromIntegral i * z, 2, 3, 4, 5, 6, 7] v)
  _ -> Nothing
  where
    nn784Hvp h = Just $ do
      let (layers, x, y) = nn784Input
          layersA = [(fromRows w, vfromList b) | (w, b) <- layers]
          batch = Constant (fromRows x, fromRows y)
          sizes = concat [[length w * length (head w), length b] | (w, b) <- layers]
          offs = scanl (+) 0 sizes
          dirOf k len = [sin (0.37 * fromIntegral (offs !! k + j)) | j <- [0 .. len - 1]]
          dirs = [ (reshape (mrows w) (mcols w) (vfromList (dirOf (2 * l) (mrows w * mcols w))),
                    vfromList (dirOf (2 * l + 1) (vlength b)))
                 | (l, (w, b)) <- zip [0 ..] layersA ]
      pure $ \i -> let (hl, _) = h (map (\(w, b) -> (w, vscale (1 + fromIntegral i * z) b)) layersA, batch) (dirs, batch)
                   in sum [msumAll w + vsum b | (w, b) <- hl]
    dotprod g = Just $ do
      let (xs, ys) = dotprodInput n
      forceAll xs >> forceAll ys
      -- a case, not a lazy let pattern: the pair of a let would keep the
      -- first list alive while the second is summed
      pure $ \i -> case g (bump (fromIntegral i * z) xs, ys) of
        (gx, gy) -> let !s = sum gx in s + sum gy
    lineFitUnit alternate g = Just $ do
      let points k = let xs = [fromIntegral j / fromIntegral (n + k - k) | j <- [1 .. n]]
                     in (xs, [2 * x + 1 + sin (37 * x) | x <- xs])
          sets = [points k | k <- [0, 1]]
      forM_ sets $ \(xs, ys) -> forceAll xs >> forceAll ys
      pure $ \i -> let d = sets !! (if alternate then i `mod` 2 else 0)
                       ((ga, gb), _) = g ((1 + fromIntegral i * z, 0.5), Constant d)
                   in ga + gb
    neural g = Just $ do
      let (layers, input) = neuralInput
      forceAll (concat [concat w ++ b | (w, b) <- layers] ++ input)
      pure $ \i -> let (gl, gi) = g (layers, bump (fromIntegral i * z) input)
                   in sum [sum (map sum w) + sum b | (w, b) <- gl] + sum gi
    particles g = Just $ do
      let ps = particlesInput
      forceAll (concat [[a, b, c, d] | ((a, b), (c, d)) <- ps])
      pure $ \i ->
        let perturbed = case ps of
              (((px, py), v) : rest) -> ((px + fromIntegral i * z, py), v) : rest
              [] -> []
        in sum [a + b + c + d | ((a, b), (c, d)) <- g perturbed]

-- second_order_bench.c's nn_inputs: the same generator, the same values
nnInputs :: [Double]
nnInputs = take 2560 (map val (tail (iterate next 12345)))
  where
    next :: Word32 -> Word32
    next s = s * 1103515245 + 12345
    val s = (fromIntegral (s `shiftR` 8) / 16777216 - 0.5) * 0.4

main :: IO ()
main = benchMain "dualrev-hs-bench" mkUnit
