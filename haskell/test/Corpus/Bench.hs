{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE MultiParamTypeClasses #-}
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE UndecidableInstances #-}
-- | The six programs of benchmarks.md, at random small inputs and at the
-- benchmark inputs.
module Corpus.Bench where

import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  fmultP :: Num a => (a, a) -> a
  fmultP (x, y) = x * y

  fmult :: (Double, Double) -> Double
  fmult p = fmultP p

  dotP :: Num a => [a] -> [a] -> a
  dotP xs ys = sum (zipWith (*) xs ys)

  fdotprodP :: Num a => ([a], [a]) -> a
  fdotprodP (xs, ys) = dotP xs ys

  fdotprod :: ([Double], [Double]) -> Double
  fdotprod p = fdotprodP p

  fsummatvecP :: Num a => ([[a]], [a]) -> a
  fsummatvecP (rows, v) = sum (map (dotP v) rows)

  fsummatvec :: ([[Double]], [Double]) -> Double
  fsummatvec p = fsummatvecP p

  data Vec3 a = Vec3 a a a
    deriving (Eq, Show)
  data Quaternion a = Quaternion a a a a
    deriving (Eq, Show)

  frotvecquatP :: Num a => (Vec3 a, Quaternion a) -> Vec3 a
  frotvecquatP (v, Quaternion qx qy qz s) =
    scale (2 * dot3 u v) u `vadd` scale (s * s - dot3 u u) v `vadd` scale (2 * s) (cross u v)
    where
      u = Vec3 qx qy qz
      dot3 (Vec3 px py pz) (Vec3 rx ry rz) = px * rx + py * ry + pz * rz
      vadd (Vec3 px py pz) (Vec3 rx ry rz) = Vec3 (px + rx) (py + ry) (pz + rz)
      scale k (Vec3 x y z) = Vec3 (k * x) (k * y) (k * z)
      cross (Vec3 ax ay az) (Vec3 bx by bz) =
        Vec3 (ay * bz - az * by) (az * bx - ax * bz) (ax * by - ay * bx)

  frotvecquat :: (Vec3 Double, Quaternion Double) -> Vec3 Double
  frotvecquat p = frotvecquatP p

  -- the network of fneural; the loss weighs the softmax outputs (1, 2, 3, ...)
  -- so that the gradient is not identically zero
  neuralP :: (Ord a, Floating a) => ([([[a]], [a])], [a]) -> [a]
  neuralP (layers, input) = forward layers input
    where
      forward [] x = safeSoftmax x
      forward ((w, b) : rest) x = forward rest (map relu (zipWith (+) (map (dotP x) w) b))
      relu x = if x >= 0 then x else 0
      safeSoftmax xs =
        let m = foldl (\acc x -> if x > acc then x else acc) 0 xs
            es = map (\x -> exp (x - m)) xs
            total = sum es
        in map (/ total) es

  fneuralP :: (Ord a, Floating a) => ([([[a]], [a])], [a]) -> a
  fneuralP p = sum (neuralP p)

  fneuralWP :: (Ord a, Floating a) => ([([[a]], [a])], [a]) -> a
  fneuralWP p = sum (zipWith (*) (map fromIntegral [1 .. length (neuralP p)]) (neuralP p))

  fneural :: ([([[Double]], [Double])], [Double]) -> Double
  fneural p = fneuralP p

  fneuralW :: ([([[Double]], [Double])], [Double]) -> Double
  fneuralW p = fneuralWP p

  simulateP :: Fractional a => Int -> ((a, a), (a, a)) -> (a, a)
  simulateP steps (p0, v0) = loop steps p0 v0
    where
      dt = 0.05
      add (a, b) (c, d) = (a + c, b + d)
      scl k (a, b) = (k * a, k * b)
      loop n p v
        | n == 0 = p
        | otherwise =
            let acc = add (scl (-0.5) p) (scl (-0.2) v)
            in loop (n - 1) (add p (scl dt v)) (add v (scl dt acc))

  fparticlesP :: Fractional a => (Int, [((a, a), (a, a))]) -> a
  fparticlesP (steps, ps) = sum [x * y | (x, y) <- map (simulateP steps) ps]

  fparticles :: (Int, [((Double, Double), (Double, Double))]) -> Double
  fparticles p = fparticlesP p
  |]

instance Vec a => Vec (Vec3 a) where
  toVec (Vec3 a b c) = toVec (a, b, c)
  fromVecS (Vec3 a b c) vs = let ((a', b', c'), r) = fromVecS (a, b, c) vs in (Vec3 a' b' c', r)
instance Lift a b => Lift (Vec3 a) (Vec3 b) where
  liftS (Vec3 a b c) vs = let ((a', b', c'), r) = liftS (a, b, c) vs in (Vec3 a' b' c', r)
instance Vec a => Vec (Quaternion a) where
  toVec (Quaternion a b c d) = toVec (a, b, c, d)
  fromVecS (Quaternion a b c d) vs =
    let ((a', b', c', d'), r) = fromVecS (a, b, c, d) vs in (Quaternion a' b' c' d', r)
instance Lift a b => Lift (Quaternion a) (Quaternion b) where
  liftS (Quaternion a b c d) vs =
    let ((a', b'), r) = liftS (a, b) vs; ((c', d'), r') = liftS (c, d) r in (Quaternion a' b' c' d', r')

-- benchmark inputs (benchmarks.md)

dotprodInput :: Int -> ([Double], [Double])
dotprodInput n = (map fromIntegral [1 .. n], take n [3, 5 ..])

summatvecInput :: Int -> ([[Double]], [Double])
summatvecInput n =
  let k = round (sqrt (fromIntegral n :: Double))
      rowsOf xs = if null xs then [] else take k xs : rowsOf (drop k xs)
  in (rowsOf (take (k * k) [1 ..]), take k [3, 5 ..])

neuralInput :: ([([[Double]], [Double])], [Double])
neuralInput = ([layer 100 50, layer 50 100], [sin (0.41 * fromIntegral i) | i <- [0 .. 49 :: Int]])
  where layer o n = ( [[sin (fromIntegral (i + j)) | j <- [0 .. n - 1]] | i <- [0 .. o - 1 :: Int]]
                    , [sin (0.41 * fromIntegral i) | i <- [0 .. o - 1]] )

particlesInput :: [((Double, Double), (Double, Double))]
particlesInput = [((0.5 * fromIntegral i, 0.1), (1, 1)) | i <- [1 .. 4 :: Int]]

genNet :: Gen ([([[Double]], [Double])], [Double])
genNet = do
  sizes <- (:) <$> choose (1, 4) <*> listOf1N 2 (choose (1, 4))
  let layers = zip (tail sizes) sizes
  ls <- mapM (\(o, i) -> (,) <$> matOf o i dbl <*> vecOf o dbl) layers
  x <- vecOf (head sizes) dbl
  pure (ls, x)

-- | A gradient against finite differences at some coordinates only (large inputs).
sampledFD :: Vec x => (x -> Double) -> x -> x -> [Int] -> Expectation
sampledFD f x g idx = do
  let xs = toVec x
      gs = toVec g
  length gs `shouldBe` length xs
  mapM_ (\i -> do
          let h = 1e-5 * max 1 (abs (xs !! i))
              at v = fromVec x [if j == i then v else xj | (j, xj) <- zip [0 ..] xs]
              fd = (f (at (xs !! i + h)) - f (at (xs !! i - h))) / (2 * h)
          (i, closeRel 1e-4 (gs !! i) fd) `shouldBe` (i, True)) idx

spec :: Spec
spec = describe "benchmark programs" $ do
  checkGradFwd "fmult" ((,) <$> dbl <*> dbl) fmult fmultP $(grad 'fmult)
  it "fmult at (3, 4)" $ $(grad 'fmult) (3, 4) `shouldBe` (4, 3)
  checkGradFwd "fdotprod" (choose (1, 8) >>= \n -> (,) <$> vecOf n dbl <*> vecOf n dbl) fdotprod fdotprodP $(grad 'fdotprod)
  it "fdotprod at the benchmark input (n = 1000)" $ do
    let (xs, ys) = dotprodInput 1000
    $(grad 'fdotprod) (xs, ys) `shouldBe` (ys, xs)
  checkGradFwd "fsummatvec" (choose (1, 5) >>= \k -> (,) <$> matOf k k dbl <*> vecOf k dbl) fsummatvec fsummatvecP $(grad 'fsummatvec)
  it "fsummatvec at the benchmark input (k = 10)" $ do
    let (m, v) = summatvecInput 100
        (gm, gv) = $(grad 'fsummatvec) (m, v)
    gm `shouldBe` map (const v) m
    gv `shouldBe` foldr1 (zipWith (+)) m
  let genRot = (,) <$> (Vec3 <$> dbl <*> dbl <*> dbl) <*> (Quaternion <$> dbl <*> dbl <*> dbl <*> dbl)
  checkJac "frotvecquat (3x7)" genRot frotvecquat $(jacobian 'frotvecquat)
  it "frotvecquat jacobian rows against forward mode" $ property $ forAll genRot $ \x ->
    let rows = $(jacobian 'frotvecquat) x
        comp i (Vec3 a b c) = [a, b, c] !! i
    in length rows == 3 .&&.
       conjoin [ counterexample (show (i, toVec r, fwdGrad (comp i . frotvecquatP) x)) $
                   and (zipWith (closeRel 1e-9) (toVec r) (fwdGrad (comp i . frotvecquatP) x))
               | (i, r) <- zip [0 ..] rows ]
  it "frotvecquat at (Vec3 1 2 3, Quaternion 4 5 6 7): 3 rows of 7" $ do
    let rows = $(jacobian 'frotvecquat) (Vec3 1 2 3, Quaternion 4 5 6 7)
    map (length . toVec) rows `shouldBe` [7, 7, 7]
    frotvecquat (Vec3 1 2 3, Quaternion 4 5 6 7) `shouldBe` frotvecquatP (Vec3 1 2 3, Quaternion 4 5 6 7)
  checkGradFwd "fneural with weighted softmax outputs (random small networks)" genNet fneuralW fneuralWP $(grad 'fneuralW)
  it "fneural at the benchmark input: value 1, gradient zero up to rounding" $ do
    let (v, (gl, gi)) = $(grad' 'fneural) neuralInput
    abs (v - 1) < 1e-12 `shouldBe` True
    maximum (map abs (concat [concat w ++ b | (w, b) <- gl] ++ gi)) < 1e-12 `shouldBe` True
  it "fneural weighted at the benchmark input, sampled finite differences" $ do
    let g = $(grad 'fneuralW) neuralInput
        n = length (toVec neuralInput)
    sampledFD fneuralW neuralInput g [0, 53 .. n - 1]
  checkGradFwd "fparticles (few steps, random particles)"
    ((,) <$> choose (0, 30) <*> listOf1N 4 ((,) <$> ((,) <$> dbl <*> dbl) <*> ((,) <$> dbl <*> dbl)))
    fparticles fparticlesP $(grad 'fparticles)
  it "fparticles at the benchmark input (1000 steps), finite differences and forward mode" $ do
    let x = (1000, particlesInput)
        g = $(grad 'fparticles) x
    sampledFD fparticles x g [0 .. 15]
    and (zipWith (closeRel 1e-9) (toVec g) (fwdGrad fparticlesP x)) `shouldBe` True
