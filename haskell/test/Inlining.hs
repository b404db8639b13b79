{-# OPTIONS_GHC -Wno-name-shadowing #-}
{-# LANGUAGE TemplateHaskell #-}
-- | Local helpers inlined at their calls, so that arithmetic spread over
-- them is recorded as whole statements: programs written with helpers
-- without signatures (inlined) against the same helpers with signatures
-- (which stay calls, one node per operation), on values to the bit,
-- gradients to rounding and central differences, second order, what must
-- still be evaluated exactly once (a wildcard's argument, an argument used
-- twice), and the nodes recorded.
module Inlining (spec) where

import Control.Exception (ErrorCall (..), PatternMatchFail (..), evaluate, try)
import Data.List (isInfixOf)
import Test.Hspec
import Test.QuickCheck

import Check (Vec (..), closeFD, fdGrad)
import Twins (nodesOf, sameGrad)
import Numeric.DualRev

differentiable [d|
  -- fparticles' particle: helpers on pairs, a value used once
  simI, simO :: (Int, ((Double, Double), (Double, Double))) -> Double
  simI (steps, (p0, v0)) = let (x, y) = loop steps p0 v0 in x * y
    where
      dt = 0.05
      add (a, b) (c, d) = (a + c, b + d)
      scl k (a, b) = (k * a, k * b)
      loop n p v
        | n <= 0 = p
        | otherwise =
            let acc = add (scl (-0.5) p) (scl (-0.2) v)
            in loop (n - 1) (add p (scl dt v)) (add v (scl dt acc))
  simO (steps, (p0, v0)) = let (x, y) = loop steps p0 v0 in x * y
    where
      dt = 0.05
      add :: (Double, Double) -> (Double, Double) -> (Double, Double)
      add (a, b) (c, d) = (a + c, b + d)
      scl :: Double -> (Double, Double) -> (Double, Double)
      scl k (a, b) = (k * a, k * b)
      loop n p v
        | n <= 0 = p
        | otherwise =
            let acc = add (scl (-0.5) p) (scl (-0.2) v)
            in loop (n - 1) (add p (scl dt v)) (add v (scl dt acc))

  -- an argument used twice is computed once; a wildcard's is still computed
  twiceI, twiceO :: (Double, Double) -> Double
  twiceI (x, y) = h (x * y - 1) + k (sin x) y
    where
      h a = a * a + a
      k _ b = b * b * b
  twiceO (x, y) = h (x * y - 1) + k (sin x) y
    where
      h :: Double -> Double
      h a = a * a + a
      k :: Double -> Double -> Double
      k _ b = b * b * b

  -- helpers used at Int and at Double in one function, a nested tuple
  mixedI, mixedO :: ((Double, Double), Int) -> Double
  mixedI ((x, y), n) = fromIntegral (sq n + sq (n + 1)) * fst (swapMul ((x, y), (y, x)))
    where
      sq a = a * a + 1
      swapMul ((a, b), (c, d)) = (a * d - b * c, a * c + b * d)
  mixedO ((x, y), n) = fromIntegral (sq n + sq (n + 1)) * fst (swapMul ((x, y), (y, x)))
    where
      sq :: Int -> Int
      sq a = a * a + 1
      swapMul :: ((Double, Double), (Double, Double)) -> (Double, Double)
      swapMul ((a, b), (c, d)) = (a * d - b * c, a * c + b * d)

  wildI :: Double -> Double
  wildI x = k (error "the wildcard's argument") x
    where k _ b = b * b + 1

  -- the only constructor of its type, as a tuple: frotvecquat's rotation
  data V3 a = V3 a a a
  data Quat a = Quat a a a a
  rotI, rotO :: (V3 Double, Quat Double) -> Double
  rotI (v, Quat qx qy qz s) = let V3 a b c = rot in a * 2 + b * 3 - c
    where
      u = V3 qx qy qz
      rot = scale (2 * dot u v) u `add3` scale (s * s - dot u u) v `add3` scale (2 * s) (cross u v)
      dot (V3 px py pz) (V3 rx ry rz) = px * rx + py * ry + pz * rz
      add3 (V3 px py pz) (V3 rx ry rz) = V3 (px + rx) (py + ry) (pz + rz)
      scale k (V3 x y z) = V3 (k * x) (k * y) (k * z)
      cross (V3 ax ay az) (V3 bx by bz) = V3 (ay * bz - az * by) (az * bx - ax * bz) (ax * by - ay * bx)
  rotO (v, Quat qx qy qz s) = let V3 a b c = rot in a * 2 + b * 3 - c
    where
      u = V3 qx qy qz
      rot = scale (2 * dot u v) u `add3` scale (s * s - dot u u) v `add3` scale (2 * s) (cross u v)
      dot :: V3 Double -> V3 Double -> Double
      dot (V3 px py pz) (V3 rx ry rz) = px * rx + py * ry + pz * rz
      add3 :: V3 Double -> V3 Double -> V3 Double
      add3 (V3 px py pz) (V3 rx ry rz) = V3 (px + rx) (py + ry) (pz + rz)
      scale :: Double -> V3 Double -> V3 Double
      scale k (V3 x y z) = V3 (k * x) (k * y) (k * z)
      cross :: V3 Double -> V3 Double -> V3 Double
      cross (V3 ax ay az) (V3 bx by bz) = V3 (ay * bz - az * by) (az * bx - ax * bz) (ax * by - ay * bx)

  -- one constructor of several: its pattern may fail, so the helper stays
  -- a call, and fails as a call does
  data Shape = Circle Double | Square Double
  shapeI :: (Shape, Double) -> Double
  shapeI (sh, x) = area sh * x + x
    where area (Circle r) = r * r * 3
  |]

-- | The value to the bit against the plain function and the op-by-op twin,
-- the gradient to rounding against the twin's and central differences.
agreesPlain :: (Vec x, Show x) => (x -> Double) -> (x -> Double) -> (x -> (Double, x)) -> (x -> (Double, x)) -> x -> Property
agreesPlain f g gradF gradG x =
  let (vF, dF) = gradF x
      (vG, dG) = gradG x
      gF = toVec dF
      gG = toVec dG
  in counterexample (show (x, vF, vG, gF, gG)) $
       vF == f x .&&. vF == vG .&&. f x == g x
         .&&. sameGrad 1e-11 gF gG
         .&&. and (zipWith (closeFD (f x)) gF (fdGrad f x))

small :: Gen Double
small = choose (-2, 2)

spec :: Spec
spec = describe "local helpers inlined into statements" $ do
  it "fparticles' particle: the plain value to the bit, the gradient of the helpers kept as calls" $
    property $ forAll ((,) <$> choose (0, 40) <*> ((,) <$> ((,) <$> small <*> small) <*> ((,) <$> small <*> small))) $
      agreesPlain simI simO $(grad' 'simI) $(grad' 'simO)
  it "an argument used twice, a wildcard's argument" $
    property $ forAll ((,) <$> small <*> small) $ agreesPlain twiceI twiceO $(grad' 'twiceI) $(grad' 'twiceO)
  it "helpers at Int and at Double, nested tuple patterns" $
    property $ forAll ((,) <$> ((,) <$> small <*> small) <*> choose (-3, 3)) $
      agreesPlain mixedI mixedO $(grad' 'mixedI) $(grad' 'mixedO)
  it "the only constructor of a type, as a tuple (frotvecquat's rotation)" $
    property $ forAll (vectorOf 7 small) $ \xs ->
      let x = at xs
          (vI, gI) = $(grad' 'rotI) x
          (vO, gO) = $(grad' 'rotO) x
          flat (V3 a b c, Quat d e f g) = [a, b, c, d, e, f, g]
          at [a, b, c, d, e, f, g] = (V3 a b c, Quat d e f g)
          at _ = error "seven numbers"
          fd = [ (rotI (at (bump i h)) - rotI (at (bump i (-h)))) / (2 * h) | i <- [0 .. 6] ]
          bump i d = [ if j == i then xj + d else xj | (j, xj) <- zip [0 :: Int ..] (flat x) ]
          h = 1e-6
      in counterexample (show (flat x, vI, vO, flat gI, flat gO)) $
           vI == rotI x .&&. vI == vO .&&. sameGrad 1e-11 (flat gI) (flat gO)
             .&&. and (zipWith (\a b -> abs (a - b) <= 1e-5 * (1 + abs a)) (flat gI) fd)
  it "a helper on one constructor of several stays a call and fails as one" $ do
    fst ($(grad' 'shapeI) (Circle 2, 3)) `shouldBe` 39
    -- (inlined, the failure would be a binding's or a case's)
    r <- try (evaluate (fst ($(grad' 'shapeI) (Square 2, 3))))
    case r of
      Left (PatternMatchFail m) -> m `shouldSatisfy` ("Non-exhaustive patterns in function" `isInfixOf`)
      Right v -> expectationFailure ("no error; the value was " ++ show v)
  it "evaluates a wildcard's argument, as the call would" $ do
    r <- try (evaluate ($(grad 'wildI) 2))
    case r of
      Left (ErrorCall m) -> m `shouldBe` "the wildcard's argument"
      Right g -> expectationFailure ("no error; the gradient was " ++ show g)
  it "records a particle step as four nodes, the calls as fourteen" $ do
    let sim steps [a, b, c, d] = simI'drw (steps, ((a, b), (c, d)))
        sim _ _ = error "four inputs"
        simOps steps [a, b, c, d] = simO'drw (steps, ((a, b), (c, d)))
        simOps _ _ = error "four inputs"
        perStep w = do
          n1 <- nodesOf 1 (w 1) [1, 2, 3, 4]
          n3 <- nodesOf 1 (w 3) [1, 2, 3, 4]
          pure ((n3 - n1) `div` 2)
    perStep sim `shouldReturn` 4
    perStep simOps `shouldReturn` 14
    -- second order records the operations one by one (a tape kept for
    -- replay records statements with their programs: Taped.hs)
    n1 <- nodesOf 2 (sim 1) [1, 2, 3, 4]
    n3 <- nodesOf 2 (sim 3) [1, 2, 3, 4]
    (n3 - n1) `div` 2 `shouldBe` 14
  it "an expression over helpers' results is one statement with theirs; an argument used twice is bound once" $ do
    let two [x, y] = twiceI'drw (x, y)
        two _ = error "two inputs"
        twoOps [x, y] = twiceO'drw (x, y)
        twoOps _ = error "two inputs"
    -- x * y - 1 bound once, sin x, then h's and k's bodies and the sum as
    -- one statement over that binding and y
    nodesOf 1 two [1, 2] `shouldReturn` 3
    -- kept as calls: x * y - 1, sin x, h's body, k's body, the sum
    nodesOf 1 twoOps [1, 2] `shouldReturn` 5
  it "second order: the Hessian of the helpers kept as calls" $
    property $ forAll ((,) <$> small <*> small) $ \p ->
      let flat = concatMap (\(a, b) -> [a, b])
      in flat ($(hessian 'twiceI) p) === flat ($(hessian 'twiceO) p)
