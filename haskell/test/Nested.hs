{-# LANGUAGE TemplateHaskell #-}
-- | Derivatives inside differentiable code: the perturbation-confusion
-- case, the two worked examples of Pearlmutter and Siskind (a
-- Hessian-vector product by nesting, a minimax saddle point by gradient
-- descent over gradient ascent), and nesting three and four deep.
module Nested (spec) where

import Control.Exception (ErrorCall (..), evaluate, try)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev
import qualified Numeric.DualRev.Array as A

differentiable [d|
  -- d/dx (x * d/dy (x + y)) = 1: the inner derivative sees x as a constant
  confused :: Double -> Double
  confused x = x * derivative (\y -> x + y) x

  -- the same with the closure over x in a local function
  confusedLocal :: Double -> Double
  confusedLocal x = let shift y = x * y + y * y in x * derivative shift x

  psF :: [Double] -> Double
  psF [x, y] = 2 * x * x + 3 * x * y + 4 * y * y
  psF _ = 0

  -- the Hessian of psF times v, as the gradient of (gradient psF) . v
  psDirectional :: ([Double], Constant [Double]) -> Double
  psDirectional (x, v) = sum (zipWith (*) (constant v) (gradient psF x))

  -- the same, all inside the block
  psHvp :: ([Double], [Double]) -> [Double]
  psHvp (x, v) = gradient (\x' -> sum (zipWith (*) v (gradient psF x'))) x

  saddle :: [Double] -> [Double] -> Double
  saddle [s, t] [u, v] = s * s + t * t - u * u - v * v
  saddle _ _ = 0

  -- max over y by a fixed number of gradient-ascent steps, on a closure over x
  argmaxY :: Int -> [Double] -> [Double] -> [Double]
  argmaxY n x y
    | n <= 0 = y
    | otherwise =
        argmaxY (n - 1) x (zipWith (+) y (map (* 0.25) (gradient (\y' -> saddle x y') y)))

  maxOverY :: [Double] -> Double
  maxOverY x = saddle x (argmaxY 40 x [1, 1])

  -- min over x of that max, by gradient descent through the inner ascent
  argminX :: Int -> [Double] -> [Double]
  argminX n x
    | n <= 0 = x
    | otherwise = argminX (n - 1) (zipWith (-) x (map (* 0.25) (gradient maxOverY x)))

  minimax :: Int -> ([Double], [Double])
  minimax n = let x = argminX n [1, 1] in (x, argmaxY 40 x [1, 1])

  cubeSin :: Double -> Double
  cubeSin x = sin (x * x)

  third :: Double -> Double
  third x = derivative (\a -> derivative (\b -> derivative cubeSin b) a) x

  -- the Jacobian's determinant of (x y, x + sin y): y cos y - x
  jdet :: [Double] -> Double
  jdet p = case jacobianOf (\[x, y] -> [x * y, x + sin y]) p of
    [[a, b], [c, d]] -> a * d - b * c
    _ -> 0

  -- the Laplacian of x^3 y: the trace of its Hessian, 6 x y
  laplacian :: [Double] -> Double
  laplacian p = sum (zipWith (!!) (hessianOf (\[x, y] -> x * x * x * y) p) [0 ..])

  -- a Hessian inside a Hessian: x^3 y's Hessian's entries summed, the
  -- third derivatives of that by the splice
  hessSum :: [Double] -> Double
  hessSum p = sum (map sum (hessianOf (\[x, y] -> x * x * x * y) p))

  -- a gradient of many inputs in one recorded pass: d/dx_i of sum x_j^2 / 2
  selfGrad :: [Double] -> [Double]
  selfGrad = gradient (\xs -> sum (map (\x -> x * x / 2) xs))

  -- two arguments, called as a plain function: a Newton step for x^2 = a
  newtonStep :: Double -> Double -> Double
  newtonStep a x = x - (x * x - a) / derivative (\y -> y * y - a) x

  -- a derivative taken in a callee handed in as an argument: the gradient
  -- by forward mode, one derivative per coordinate, passed to a descent
  fwdGrad :: ([Double] -> Double) -> [Double] -> [Double]
  fwdGrad f xs = [ derivative (\t -> f [if j == i then x + t else x | (j, x) <- zip [0 :: Int ..] xs]) 0
                 | i <- [0 .. length xs - 1] ]

  descend :: (([Double] -> Double) -> [Double] -> [Double]) -> [Double] -> Double
  descend g w = let bowl v = sum (map (\x -> (x - 1) * (x - 1)) v)
                    w' = zipWith (\x d -> x - 0.25 * d) w (g bowl w)
                in bowl w'

  descendFwd :: [Double] -> Double
  descendFwd = descend fwdGrad

  descendFwd2 :: [Double] -> Double
  descendFwd2 w = descendFwd w * 2

  -- nested derivatives through the array operations: d/ds sum (tanh (s x))
  arrSquash :: Double -> Double
  arrSquash s = derivative (\u -> A.vsum (A.vtanh (A.vscale u (A.vfromList [0.3, -0.8, 1.1])))) s

  -- the squared norm of the gradient of logsumexp (v * v)
  arrGradNorm :: [Double] -> Double
  arrGradNorm xs =
    let g = gradient (\ys -> let v = A.vfromList ys in A.logSumExp (A.vmul v v)) xs
    in sum (map (\d -> d * d) g)

  -- the same through axpy, s times a vector plus another (one node)
  arrAxpyGradNorm :: [Double] -> Double
  arrAxpyGradNorm xs =
    let g = gradient (\ys -> let v = A.vfromList ys
                             in A.logSumExp (A.vaxpy (head ys) (A.vmul v v) (A.vsin v))) xs
    in sum (map (\d -> d * d) g)

  -- the value and the gradient of one recording: a step of descent on
  -- sum (a_i y_i^3) / 3 + y . x from x, then its value and the step's
  -- length squared (an outer gradient through both the value and the
  -- gradient of the inner one)
  stepValue :: [Double] -> Double
  stepValue x =
    let inner ys = sum (zipWith3 (\a y c -> a * y * y * y / 3 + y * c) [1, 2, 3] ys x)
        (v, g) = gradient' inner x
        x' = zipWith (\a d -> a - 0.1 * d) x g
    in v * sum x' + sum (map (\d -> d * d) g)

  -- the README's step: psF's value beside a step along its gradient
  readmeStep :: [Double] -> (Double, [Double])
  readmeStep x = let (v, g) = gradient' psF x in (v, zipWith (\a d -> a - 0.05 * d) x g)

  -- the same with the value and the gradient taken apart (two recordings)
  stepValueTwice :: [Double] -> Double
  stepValueTwice x =
    let inner ys = sum (zipWith3 (\a y c -> a * y * y * y / 3 + y * c) [1, 2, 3] ys x)
        v = inner x
        g = gradient inner x
        x' = zipWith (\a d -> a - 0.1 * d) x g
    in v * sum x' + sum (map (\d -> d * d) g)

  -- value and derivative of x sin (c y) at y = x, c closing over x
  derivPair :: Double -> Double
  derivPair x = case derivative' (\y -> x * sin (x * y)) x of
    (v, d) -> v * d + d

  -- a gradient step w - 0.1 g, then the loss again: through maxpy
  arrStep :: [Double] -> Double
  arrStep ws =
    let w = A.fromRows [ws, map (* 2) ws]
        loss m = A.msumAll (A.mmul m m) + A.msumAll m
        g = A.maxpy 2 w (A.fromRows [ws, ws])
    in loss (A.maxpy (-0.1) g w)
  |]

valueOf :: (a -> (b, c)) -> a -> b
valueOf run x = fst (run x)

-- stepValue written out by hand: inner's value at x and its gradient
-- a_i x_i^2 + x_i (the x inside inner a constant of its gradient)
stepValueRef :: [Double] -> Double
stepValueRef x =
  let a = [1, 2, 3]
      v = sum (zipWith (\ai xi -> ai * xi * xi * xi / 3 + xi * xi) a x)
      g = zipWith (\ai xi -> ai * xi * xi + xi) a x
      x' = zipWith (\xi d -> xi - 0.1 * d) x g
  in v * sum x' + sum (map (\d -> d * d) g)

bump :: [Double] -> Int -> Double -> [Double]
bump x0 i e = [if j == i then x + e else x | (j, x) <- zip [0 ..] x0]

close :: Double -> Double -> Bool
close a b = abs (a - b) <= 1e-6 * max 1 (abs b)

spec :: Spec
spec = describe "derivatives inside differentiable code" $ do
  it "jacobianOf: the gradient of a Jacobian's determinant (y cos y - x)" $
    forAll ((,) <$> choose (-5, 5) <*> choose (-5, 5)) $ \(x, y) ->
      let (v, [gx, gy]) = $(grad' 'jdet) [x, y]
      in close v (y * cos y - x) && close gx (-1) && close gy (cos y - y * sin y)
  it "hessianOf: the Laplacian of x^3 y is 6 x y, its gradient (6 y, 6 x)" $
    forAll ((,) <$> choose (-5, 5) <*> choose (-5, 5)) $ \(x, y) ->
      let (v, [gx, gy]) = $(grad' 'laplacian) [x, y]
      in close v (6 * x * y) && close gx (6 * y) && close gy (6 * x)
  it "hessianOf: the sum of x^3 y's Hessian (6 x y + 6 x^2) and its gradient" $
    forAll ((,) <$> choose (-5, 5) <*> choose (-5, 5)) $ \(x, y) ->
      let (v, [gx, gy]) = $(grad' 'hessSum) [x, y]
      in close v (6 * x * y + 6 * x * x) && close gx (6 * y + 12 * x) && close gy (6 * x)
  it "gradient of 200 inputs inside a block (one recorded pass), and its Jacobian" $ do
    let xs = [fromIntegral i / 10 | i <- [1 .. 200 :: Int]]
    valueOf $(differentiate 'selfGrad) xs `shouldBe` xs
    $(jacobian 'selfGrad) xs `shouldBe`
      [[if i == j then 1 else 0 | j <- [1 .. 200 :: Int]] | i <- [1 .. 200 :: Int]]
  it "through the array operations: derivative, and its derivative" $
    property $ \s0 -> let s = s0 / 10
                          xs = [0.3, -0.8, 1.1]
                          d1 = sum [x * (1 - tanh (s * x) ^ (2 :: Int)) | x <- xs]
                          d2 = sum [-2 * x * x * tanh (s * x) * (1 - tanh (s * x) ^ (2 :: Int)) | x <- xs]
                      in close (arrSquash s) d1 && close ($(grad 'arrSquash) s) d2
  it "through the array operations: gradient inside, against differences of the plain function" $ do
    let x0 = [0.4, -1.2, 0.7]
        g = $(grad 'arrGradNorm) x0
        fd i = (arrGradNorm (bump i 1e-6) - arrGradNorm (bump i (-1e-6))) / 2e-6
        bump i e = [if j == i then x + e else x | (j, x) <- zip [0 :: Int ..] x0]
    and [abs (gi - fd i) <= 1e-6 * (1 + abs gi) | (i, gi) <- zip [0 ..] g] `shouldBe` True
  it "through axpy: gradient inside and out, against differences of the plain function" $ do
    let x0 = [0.4, -1.2, 0.7]
        bump i e = [if j == i then x + e else x | (j, x) <- zip [0 :: Int ..] x0]
        check f g = and [ abs (gi - (f (bump i 1e-6) - f (bump i (-1e-6))) / 2e-6) <= 1e-6 * (1 + abs gi)
                        | (i, gi) <- zip [0 ..] g ]
    check arrAxpyGradNorm ($(grad 'arrAxpyGradNorm) x0) `shouldBe` True
    check arrStep ($(grad 'arrStep) x0) `shouldBe` True
  it "gradient' is the value and the gradient of one recording, differentiated through" $ do
    forAll (vectorOf 3 (choose (-2, 2))) $ \x ->
      let (v, g) = $(grad' 'stepValue) x
          (v2, g2) = $(grad' 'stepValueTwice) x
          fd i = (stepValueRef (bump x i 1e-6) - stepValueRef (bump x i (-1e-6))) / 2e-6
      in close v (stepValueRef x) && close (stepValue x) v && close v v2 && and (zipWith close g g2)
         && and [abs (gi - fd i) <= 1e-5 * (1 + abs gi) | (i, gi) <- zip [0 ..] g]
  it "the README's gradient' step, called directly and through jacobian" $ do
    readmeStep [3, 4] `shouldBe` (118, [1.7999999999999998, 1.9499999999999997])
    $(jacobian 'readmeStep) [3, 4] `shouldBe`
      [[24, 41], [0.8, -0.15000000000000002], [-0.15000000000000002, 0.6]]
  it "derivative' is the value and the derivative, differentiated through" $
    forAll (choose (-2, 2)) $ \x ->
      -- v = x sin (x^2), d = x^2 cos (x^2): v d + d and its derivative
      let v = x * sin (x * x)
          d = x * x * cos (x * x)
          dv = sin (x * x) + 2 * x * x * cos (x * x)
          dd = 2 * x * cos (x * x) - 2 * x ^ (3 :: Int) * sin (x * x)
          (y, g) = $(grad' 'derivPair) x
      in close y (v * d + d) && close (derivPair x) (v * d + d) && close g (dv * d + v * dd + dd)
  it "d/dx (x * d/dy (x + y)) is 1 at any x (no perturbation confusion)" $
    property $ \x -> $(grad 'confused) x == 1
  it "the same through a local function closing over x (x * 3 x, derivative 6 x)" $
    -- x * (x + 2 x) = 3 x^2: derivative 6 x
    property $ \x -> close ($(grad 'confusedLocal) x) (6 * x)
  it "Hessian-vector product of 2x^2 + 3xy + 4y^2 at [3, 4] times [7, 8] is [52, 85]" $ do
    $(grad 'psDirectional) ([3, 4], Constant [7, 8]) `shouldBe` ([52, 85], Constant [7, 8])
    valueOf $(differentiate 'psHvp) ([3, 4], [7, 8]) `shouldBe` [52, 85]
  it "the minimax saddle point of s^2 + t^2 - u^2 - v^2 is ([0, 0], [0, 0])" $ do
    let (x, y) = valueOf $(differentiate 'minimax) 40
    map abs (x ++ y) `shouldSatisfy` all (<= 1e-6)
  it "three nested derivatives: the third derivative of sin (x^2)" $
    property $ \x0 -> let x = x0 / 10 in
      close (valueOf $(grad' 'third) x)
            (-12 * x * sin (x * x) - 8 * x ^ (3 :: Int) * cos (x * x))
  it "four levels: the gradient of the third derivative is the fourth" $
    property $ \x0 -> let x = x0 / 10 in
      close ($(grad 'third) x)
            (-12 * sin (x * x) - 48 * x * x * cos (x * x) + 16 * x ^ (4 :: Int) * sin (x * x))
  it "block functions that take derivatives are plain functions too" $ do
    confused 5 `shouldBe` 5
    confusedLocal 2 `shouldBe` 12
    psHvp ([3, 4], [7, 8]) `shouldBe` [52, 85]
    laplacian [1, 2] `shouldBe` 12
    jdet [2, 0] `shouldBe` (-2)
    selfGrad [1, 2, 3] `shouldBe` [1, 2, 3]
    newtonStep 2 1 `shouldBe` 1.5
    stepValue [1, 2, 3] `shouldBe` stepValueTwice [1, 2, 3]
    iterate (newtonStep 2) 1 !! 6 `shouldSatisfy` (\r -> abs (r - sqrt 2) < 1e-15)
  it "and so are those that call them or pass them on" $ do
    -- one step of 1/4 the gradient halves the distance to 1: (3 - 1)^2 / 4
    descendFwd [3, 3] `shouldBe` 2
    descendFwd2 [3, -1] `shouldBe` 4
    maxOverY [0.5, 0.5] `shouldBe` 0.5
    fst (minimax 0) `shouldBe` [1, 1]
  it "outside differentiable code it explains itself" $ do
    r <- try (evaluate (derivative sin 1))
    case r of
      Left (ErrorCall msg) -> msg `shouldContain` "outside differentiable code"
      Right v -> expectationFailure ("got " ++ show v)
    r' <- try (evaluate (fst (gradient' sum [1])))
    case r' of
      Left (ErrorCall msg) -> msg `shouldContain` "`gradient'' was called outside differentiable code"
      Right v -> expectationFailure ("got " ++ show v)
