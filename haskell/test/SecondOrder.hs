{-# LANGUAGE TemplateHaskell #-}
-- | Forward mode and second order: jvp against finite differences and the
-- Jacobian, hvp and hessian against closed forms, the Jacobian of tall and
-- wide functions, discrete parts, errors.
module SecondOrder (spec) where

import Data.List (isInfixOf, transpose)
import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev
import qualified Numeric.DualRev.Array as A
import Numeric.DualRev.Array (vdot, vfromList, vscale, vtoList)

differentiable [d|
  -- 2 inputs, 6 outputs: a tall Jacobian (forward sweeps)
  tall :: (Double, Double) -> [Double]
  tall (x, y) = [x * y, sin x, exp (y / 3), x * x - y, cos (x * y), sqrt (1 + x * x + y * y)]

  -- 6 inputs, 2 outputs: a wide Jacobian (reverse sweeps)
  wide :: [Double] -> (Double, Double)
  wide xs = (sum (zipWith (*) xs (tail xs)), product (map (\x -> 1 + x * x / 10) xs))

  mixed :: (Int, [Double]) -> ([Double], Int)
  mixed (k, xs) = (map (\x -> fromIntegral k * x * x) xs ++ [sum xs], k + length xs)

  quadratic :: [Double] -> Double
  quadratic [x, y] = 2 * x * x + 3 * x * y + 4 * y * y
  quadratic _ = 0

  rosenbrock :: (Double, Double) -> Double
  rosenbrock (x, y) = (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x)

  -- x^T A x for the 10 x 10 matrix A below (not symmetric): H = A + A^T
  form :: [Double] -> Double
  form xs = sum [ fromIntegral (coef i j) * xi * xj | (i, xi) <- zip [0 :: Int ..] xs, (j, xj) <- zip [0 ..] xs ]

  coef :: Int -> Int -> Int
  coef i j = (3 * i + 7 * j) `mod` 11 - 5

  scaled :: (Int, [Double], Constant Double) -> Double
  scaled (k, xs, c) = constant c * fromIntegral k * sum (map (\x -> x * x * x) xs)

  -- the examples of Numeric.DualRev's documentation
  docF :: (Double, Double) -> Double
  docF (x, y) = x * y + y * y

  docPolar :: (Double, Double) -> (Double, Double)
  docPolar (r, t) = (r * cos t, r * sin t)

  -- array input and output
  scaleVec :: (A.Vec, Double) -> (A.Vec, Double)
  scaleVec (v, s) = (vscale s v, vdot v v)

  -- banded: each output and each second derivative couples neighbours only
  chain :: [Double] -> Double
  chain xs = sum (zipWith (\a b -> a * a * b + sin b) xs (drop 1 xs)) + sum (map exp xs)

  chainMap :: [Double] -> [Double]
  chainMap xs = zipWith (\a b -> a * sin b) xs (drop 1 xs) ++ [sum xs]

  docSparseJ :: [Double] -> [Double]
  docSparseJ [x, y, z] = [x * y, sin z]
  docSparseJ _ = []

  docSparseH :: [Double] -> Double
  docSparseH [x, y, z] = x * y + z ^ (3 :: Int)
  docSparseH _ = 0

  withArrays :: [Double] -> Double
  withArrays xs = let v = vfromList xs in vdot v v

  -- an MLP written with the array primitives: the weights W (3 x 4) and
  -- the bias b (3) in one vector of 15
  mlpLoss :: A.Vec -> Double
  mlpLoss p =
    let w = A.reshape 3 4 (A.vslice 0 12 p)
        b = A.vslice 12 3 p
        x = vfromList [0.5, -1, 0.25, 2]
        w2 = A.reshape 2 3 (vfromList [0.7, -0.4, 0.2, -0.3, 0.8, 0.5])
        o = A.matVec w2 (A.vtanh (A.vadd (A.matVec w x) b))
    in A.logSumExp o - A.vindex o 0 + 0.01 * A.msumAll (A.msquare w)

  -- the same network's outputs, as residuals
  mlpOut :: A.Vec -> A.Vec
  mlpOut p =
    let w = A.reshape 3 4 (A.vslice 0 12 p)
        x = vfromList [0.5, -1, 0.25, 2]
        w2 = A.reshape 2 3 (vfromList [0.7, -0.4, 0.2, -0.3, 0.8, 0.5])
    in A.matVec w2 (A.vtanh (A.vadd (A.matVec w x) (A.vslice 12 3 p)))
  |]

-- | J v by central differences of each output scalar, with two steps (as
-- fdGrad): the value for each.
fdDirectional :: (Vec x, Vec y) => (x -> y) -> x -> x -> [[(Double, Double)]]
fdDirectional f x v =
  transpose [ zipWith (\a b -> ((a - b) / (2 * h), h)) (toVec (f (at h))) (toVec (f (at (-h)))) | h <- [h0, h0 / 100] ]
  where xs = toVec x
        vs = toVec v
        h0 = 1e-5 * maximum (1 : map abs xs) / maximum (1e-3 : map abs vs)
        at h = fromVec x (zipWith (\a b -> a + h * b) xs vs)

jvpProp :: (Vec x, Vec y, Show x, Show y, Eq y) => (x -> y) -> (x -> x -> (y, y)) -> (x -> [x]) -> x -> x -> Property
jvpProp f jv jac x v =
  let (y, yd) = jv x v
      rows = jac x
      byJac = [ sum (zipWith (*) (toVec r) (toVec v)) | r <- rows ]
  in counterexample ("value " ++ show y ++ ", J v " ++ show yd) $
       (y == f x)
       .&&. counterexample "J v against finite differences"
              (and (zipWith3 closeFD (toVec y) (toVec yd) (fdDirectional f x v)))
       .&&. counterexample ("J v against the Jacobian times v: " ++ show byJac)
              (and (zipWith (closeRel 1e-12) (toVec yd) byJac))
       .&&. length (toVec yd) == length (toVec y)

-- | k directions at once against one jvp per direction: the same value,
-- one product per direction, each the single product's to rounding (one
-- sweep carries the k tangents side by side).
jvpsProp :: (Vec x, Vec y, Show y, Eq y) => (x -> x -> (y, y)) -> (x -> [x] -> (y, [y])) -> x -> [x] -> Property
jvpsProp jv jvs x vs =
  let (y, yds) = jvs x vs
      singles = map (jv x) vs
  in counterexample ("value " ++ show y ++ ", products " ++ show yds) $
       length yds == length vs
       .&&. all ((== y) . fst) singles
       .&&. and [ length (toVec a) == length (toVec b) && and (zipWith (closeRel 1e-13) (toVec a) (toVec b))
                | (a, (_, b)) <- zip yds singles ]

-- | J^T (J v) from the Jacobian's rows, against the engine's product.
gnvpProp :: [Double] -> [[Double]] -> [Double] -> Bool
gnvpProp got rows v =
  let jv = [sum (zipWith (*) r v) | r <- rows]
      want = foldr (zipWith (+)) (map (const 0) v) [map (* c) r | (c, r) <- zip jv rows]
  in length got == length v && and (zipWith (closeRel 1e-12) got want)

isSymmetric :: [[Double]] -> Bool
isSymmetric h = and [ closeRel 1e-12 a b | (r, c) <- zip h (transpose h), (a, b) <- zip r c ]


spec :: Spec
spec = describe "forward mode and second order" $ do
  describe "jacobian, forward and reverse" $ do
    checkJac "tall (2 inputs, 6 outputs)" ((,) <$> dbl <*> dbl) tall $(jacobian 'tall)
    checkJac "wide (6 inputs, 2 outputs)" (vecOf 6 dbl) wide $(jacobian 'wide)
    checkJac "discrete parts, tall" ((,) <$> choose (-3, 3) <*> listOf1N 3 dbl) mixed $(jacobian 'mixed)
    it "shapes: one row per output scalar, each shaped like the input" $ do
      length ($(jacobian 'tall) (1, 2)) `shouldBe` 6
      length ($(jacobian 'wide) [1 .. 6]) `shouldBe` 2
      all ((== 6) . length) ($(jacobian 'wide) [1 .. 6]) `shouldBe` True
      map fst ($(jacobian 'mixed) (2, [1, 2])) `shouldBe` replicate 3 2

  describe "gnvp" $ do
    it "tall: J^T J v against the Jacobian" $ property $
      forAll ((,) <$> dbl <*> dbl) $ \x -> forAll ((,) <$> dbl <*> dbl) $ \v ->
        gnvpProp (toVec ($(gnvp 'tall) x v)) (map toVec ($(jacobian 'tall) x)) (toVec v)
    it "wide: J^T J v against the Jacobian" $ property $
      forAll (vecOf 6 dbl) $ \x -> forAll (vecOf 6 dbl) $ \v ->
        gnvpProp (toVec ($(gnvp 'wide) x v)) (map toVec ($(jacobian 'wide) x)) (toVec v)
    it "the documentation's example" $
      $(gnvp 'docPolar) (2, 0) (1, 1) `shouldBe` (1, 4)
    it "array operations: an MLP's residuals" $ do
      let p0 = vfromList [0.3 * sin (1 + fromIntegral i) | i <- [0 .. 14 :: Int]]
          v = vfromList [cos (fromIntegral i) | i <- [0 .. 14 :: Int]]
      gnvpProp (vtoList ($(gnvp 'mlpOut) p0 v)) (map vtoList ($(jacobian 'mlpOut) p0)) (vtoList v)
        `shouldBe` True

  describe "jvps" $ do
    it "tall: k directions against a jvp each" $ property $
      forAll ((,) <$> dbl <*> dbl) $ \x -> forAll (choose (0, 4)) $ \k -> forAll (vecOf k ((,) <$> dbl <*> dbl)) $ \vs ->
        jvpsProp $(jvp 'tall) $(jvps 'tall) x vs
    it "wide: k directions against a jvp each" $ property $
      forAll (vecOf 6 dbl) $ \x -> forAll (choose (1, 3)) $ \k -> forAll (vecOf k (vecOf 6 dbl)) $ \vs ->
        jvpsProp $(jvp 'wide) $(jvps 'wide) x vs
    it "discrete parts: the output's in every product" $ property $
      forAll ((,) <$> choose (-3, 3) <*> vecOf 3 dbl) $ \x -> forAll (vecOf 2 (vecOf 3 dbl)) $ \vs ->
        let ds = [ (7, v) | v <- vs ]
            (y, yds) = $(jvps 'mixed) x ds
        in jvpsProp $(jvp 'mixed) $(jvps 'mixed) x ds .&&. all ((== snd y) . snd) yds
    it "the documentation's example" $
      $(jvps 'docF) (3, 2) [(1, 0), (0, 1)] `shouldBe` (10, [2, 7])
    it "no directions: the value alone" $
      $(jvps 'docF) (3, 2) [] `shouldBe` (10, [])
    it "a direction of another shape is a DualRevError" $ do
      m <- dualRevError (snd ($(jvps 'wide) [1 .. 6] [[1 .. 6], [1, 2]]))
      m `shouldSatisfy` ("the direction has 2 scalars and the input 6" `isInfixOf`)
    it "array input and output" $ do
      let x = (vfromList [1, 2], 3)
          vs = [(vfromList [1, 0], 1), (vfromList [0, 2], -1)]
          ((y, q), yds) = $(jvps 'scaleVec) x vs
      (vtoList y, q) `shouldBe` ([3, 6], 5)
      [ (vtoList a, b) | (a, b) <- yds ] `shouldBe` [ (vtoList a, b) | v <- vs, let (a, b) = snd ($(jvp 'scaleVec) x v) ]

  describe "jvp" $ do
    it "tall: against finite differences and the Jacobian times v" $ property $
      forAll ((,) <$> dbl <*> dbl) $ \x -> forAll ((,) <$> dbl <*> dbl) $ \v ->
        jvpProp tall $(jvp 'tall) $(jacobian 'tall) x v
    it "wide: against finite differences and the Jacobian times v" $ property $
      forAll (vecOf 6 dbl) $ \x -> forAll (vecOf 6 dbl) $ \v ->
        jvpProp wide $(jvp 'wide) $(jacobian 'wide) x v
    it "discrete parts: unchanged in the value and the result" $ property $
      forAll ((,) <$> choose (-3, 3) <*> vecOf 3 dbl) $ \x -> forAll (vecOf 3 dbl) $ \vs ->
        jvpProp mixed $(jvp 'mixed) $(jacobian 'mixed) x (0, vs)
    it "at a minimum" $
      $(jvp 'rosenbrock) (1, 1) (1, 0) `shouldBe` (0, 0)
    it "a direction of another shape is a DualRevError" $ do
      m <- dualRevError (snd ($(jvp 'wide) [1 .. 6] [1, 2]))
      m `shouldSatisfy` ("the direction has 2 scalars and the input 6" `isInfixOf`)

    it "array input and output" $ do
      let ((y, q), (yd, qd)) = $(jvp 'scaleVec) (vfromList [1, 2], 3) (vfromList [1, 0], 1)
      (vtoList y, q) `shouldBe` ([3, 6], 5)
      (vtoList yd, qd) `shouldBe` ([1 * 1 + 3 * 1, 2 * 1 + 3 * 0], 2)

  describe "the documentation's examples" $ do
    it "jvp" $ do
      $(jvp 'docPolar) (2, 0) (0, 1) `shouldBe` ((2, 0), (0, 2))
      $(jvp 'docF) (3, 2) (1, 1) `shouldBe` (10, 9)
    it "hvp and hessian" $ do
      $(hvp 'docF) (3, 2) (1, 0) `shouldBe` (0, 1)
      $(hessian 'docF) (3, 2) `shouldBe` [(0, 1), (1, 2)]

  describe "hvp" $ do
    it "2x^2 + 3xy + 4y^2 at [3, 4] times [7, 8] is [52, 85]" $
      $(hvp 'quadratic) [3, 4] [7, 8] `shouldBe` [52, 85]
    it "Rosenbrock: the Hessian times v" $ property $
      forAll ((,) <$> dbl <*> dbl) $ \(x, y) -> forAll ((,) <$> dbl <*> dbl) $ \(a, b) ->
        let (p, q) = $(hvp 'rosenbrock) (x, y) (a, b)
            [[h11, h12], [h21, h22]] = rosenbrockH x y
        in closeRel 1e-12 p (h11 * a + h12 * b) .&&. closeRel 1e-12 q (h21 * a + h22 * b)
    it "discrete parts and Constant: unchanged" $ do
      let (k, hv, c) = $(hvp 'scaled) (2, [1, -2], Constant 3) (5, [1, 1], Constant 7)
      (k, c) `shouldBe` (2, Constant 3)
      hv `shouldBe` [3 * 2 * 6 * 1, 3 * 2 * 6 * (-2)]
    it "a direction of another shape is a DualRevError" $ do
      m <- dualRevError ($(hvp 'quadratic) [3, 4] [1])
      m `shouldSatisfy` ("the direction must have the input's shape" `isInfixOf`)
      m' <- dualRevError ($(hvp 'mlpLoss) (vfromList [1 .. 15]) (vfromList [1, 2]))
      m' `shouldSatisfy` ("the direction must have the input's shape" `isInfixOf`)

  describe "hessian" $ do
    it "Rosenbrock: the closed form, symmetric" $ property $
      forAll ((,) <$> dbl <*> dbl) $ \(x, y) ->
        let h = [[a, b] | (a, b) <- $(hessian 'rosenbrock) (x, y)]
        in counterexample (show h) $
             and (zipWith (closeRel 1e-12) (concat h) (concat (rosenbrockH x y))) .&&. isSymmetric h
    it "Rosenbrock at (1, 1)" $
      $(hessian 'rosenbrock) (1, 1) `shouldBe` [(802, -400), (-400, 200)]
    it "a quadratic form of 10 inputs: A + A^T" $ property $
      forAll (vecOf 10 dbl) $ \xs ->
        let h = $(hessian 'form) xs
            a = [[fromIntegral (coef i j) | j <- [0 .. 9]] | i <- [0 .. 9]]
        in (h == zipWith (zipWith (+)) a (transpose a)) .&&. isSymmetric h
    it "agrees with hvp on the unit vectors" $
      $(hessian 'quadratic) [3, 4] `shouldBe` [$(hvp 'quadratic) [3, 4] [1, 0], $(hvp 'quadratic) [3, 4] [0, 1]]
    it "sparseHessian: the dense Hessian's nonzeros, row by row (banded, 40 inputs)" $ property $
      forAll (vecOf 40 dbl) $ \xs ->
        let dense = $(hessian 'chain) xs
            sparse = $(sparseHessian 'chain) xs
            lookup' i j = maybe 0 id (lookup (i, j) sparse)
        in counterexample (show sparse) $
             all (\((i, j), _) -> abs (i - j) <= 1) sparse
             .&&. and [ closeRel 1e-13 (lookup' i j) v | (i, row) <- zip [0 ..] dense, (j, v) <- zip [0 ..] row ]
             .&&. length sparse == 40 + 2 * 39
    it "sparseJacobian: the dense Jacobian's nonzeros, row by row" $ property $
      forAll (vecOf 12 dbl) $ \xs ->
        let dense = $(jacobian 'chainMap) xs
            sparse = $(sparseJacobian 'chainMap) xs
            lookup' i j = maybe 0 id (lookup (i, j) sparse)
        in counterexample (show sparse) $
             and [ lookup' i j == v | (i, row) <- zip [0 ..] dense, (j, v) <- zip [0 ..] row ]
             .&&. map fst sparse == [ (i, j) | i <- [0 .. 11], j <- if i < 11 then [i, i + 1] else [0 .. 11] ]
    it "the documentation's sparse examples" $ do
      $(sparseJacobian 'docSparseJ) [1, 2, 3] `shouldBe` [((0, 0), 2), ((0, 1), 1), ((1, 2), cos 3)]
      $(sparseHessian 'docSparseH) [1, 2, 3] `shouldBe` [((0, 1), 1), ((1, 0), 1), ((2, 2), 18)]
    it "through array operations" $ do
      $(hessian 'withArrays) [1, 2] `shouldBe` [[2, 0], [0, 2]]
      $(hvp 'withArrays) [1, 2] [1, 0] `shouldBe` [2, 0]
    it "an MLP written with Vec and Mat: the Hessian against differences of the gradient, hvp against the Hessian" $ do
      let p0 = vfromList [0.3 * sin (1 + fromIntegral i) | i <- [0 .. 14 :: Int]]
          v = vfromList [cos (fromIntegral i) | i <- [0 .. 14 :: Int]]
          h = map vtoList ($(hessian 'mlpLoss) p0)
          g q = vtoList ($(grad 'mlpLoss) q)
          at i e = vfromList [if j == i then x + e else x | (j, x) <- zip [0 :: Int ..] (vtoList p0)]
          fd i = zipWith (\a b -> (a - b) / 2e-5) (g (at i 1e-5)) (g (at i (-1e-5)))
          hv = vtoList ($(hvp 'mlpLoss) p0 v)
          byH = [sum (zipWith (*) row (vtoList v)) | row <- h]
      length h `shouldBe` 15
      and [closeRel 1e-6 a b | (i, row) <- zip [0 ..] h, (a, b) <- zip row (fd i)] `shouldBe` True
      isSymmetric h `shouldBe` True
      and (zipWith (closeRel 1e-12) hv byH) `shouldBe` True
      -- the weights' block is not zero: W's curvature goes through tanh
      maximum (map abs (concat (take 12 h))) > 1e-3 `shouldBe` True
    it "sparse Hessian through array operations (a pattern of whole arrays: zeros may be in it)" $
      $(sparseHessian 'withArrays) [1, 2] `shouldBe` [((0, 0), 2), ((0, 1), 0), ((1, 0), 0), ((1, 1), 2)]
  where
    rosenbrockH x y = [[2 - 400 * y + 1200 * x * x, -400 * x], [-400 * x, 200]]
