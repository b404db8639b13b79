{-# LANGUAGE TemplateHaskell #-}
-- | Custom rules ('primitive', 'primitiveWithJVP'): functions defined
-- outside any block, a C function and a foreign call among them, declared
-- primitives with their VJP (and JVP), used in blocks like built-ins.
-- Each rule's gradient is checked against the same function written out in
-- a block and against finite differences; rules whose derivative is not the
-- function's show that the rule, and which of its derivatives, is used.
module CustomRules (spec) where

import Control.Exception (ErrorCall (..), evaluate, try)
import Data.List (isInfixOf)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Ptr (Ptr)
import Numeric (log1p)
import Foreign.Storable (peek)
import System.IO.Unsafe (unsafePerformIO)
import Test.Hspec
import Test.QuickCheck

import Check
import CustomRulesDefs
import Numeric.DualRev
import qualified Numeric.DualRev.Functions as F

------------------------------------------------------------------------------
-- The rules

-- | The README's example: a soft clip at ±c, and its VJP.
softclip :: Double -> Double -> Double
softclip c x = c * tanh (x / c)

softclipVJP :: Double -> Double -> (Double, Double -> (Double, Double))
softclipVJP c x =
  let t = tanh (x / c)
  in (c * t, \ybar -> (ybar * (t - x / c * (1 - t * t)), ybar * (1 - t * t)))

primitive 'softclip 'softclipVJP

-- | Discrete arguments (here the first) are passed to the rule as they are
-- and have no adjoint.
scaledPow :: Int -> Double -> Double -> Double
scaledPow k a b = fromIntegral k * a ** b

scaledPowVJP :: Int -> Double -> Double -> (Double, Double -> (Double, Double))
scaledPowVJP k a b =
  let y = fromIntegral k * a ** b
  in (y, \ybar -> (ybar * fromIntegral k * b * a ** (b - 1), ybar * y * log a))

primitive 'scaledPow 'scaledPowVJP

-- | A rule whose derivative is not the function's (2 x for x^3): the
-- gradient follows the rule.
fakeCube :: Double -> Double
fakeCube x = x * x * x

fakeCubeVJP :: Double -> (Double, Double -> Double)
fakeCubeVJP x = (fakeCube x, \ybar -> ybar * 2 * x)

primitive 'fakeCube 'fakeCubeVJP

-- | A C function with its gradient in C.
foreign import ccall unsafe "custom_box" cBox :: Double -> Double -> Double
foreign import ccall unsafe "custom_box_grad"
  cBoxGrad :: Double -> Double -> Ptr Double -> Ptr Double -> IO ()

cBoxVJP :: Double -> Double -> (Double, Double -> (Double, Double))
cBoxVJP x y =
  let (gx, gy) = unsafePerformIO $ alloca $ \px -> alloca $ \py -> do
        cBoxGrad x y px py
        (,) <$> peek px <*> peek py
  in (cBox x y, \ybar -> (ybar * gx, ybar * gy))

primitive 'cBox 'cBoxVJP

-- | A function of another module, with its rule here (true derivative).
plainCubeVJP :: Double -> (Double, Double -> Double)
plainCubeVJP x = (plainCube x, \ybar -> ybar * 3 * x * x)

primitive 'plainCube 'plainCubeVJP

-- | A list argument: log-sum-exp, whose VJP is the softmax.
logSumExp :: [Double] -> Double
logSumExp xs = let m = maximum xs in m + log (sum [exp (x - m) | x <- xs])

logSumExpVJP :: [Double] -> (Double, Double -> [Double])
logSumExpVJP xs =
  let y = logSumExp xs
  in (y, \ybar -> [ybar * exp (x - y) | x <- xs])

primitive 'logSumExp 'logSumExpVJP

-- | A list result: running sums, whose VJP sums from the right.
cumsum :: [Double] -> [Double]
cumsum = scanl1 (+)

cumsumVJP :: [Double] -> ([Double], [Double] -> [Double])
cumsumVJP xs = (cumsum xs, scanr1 (+))

primitive 'cumsum 'cumsumVJP

-- | A tuple result, with a JVP too (both true).
polar :: Double -> Double -> (Double, Double)
polar r t = (r * cos t, r * sin t)

polarVJP :: Double -> Double -> ((Double, Double), (Double, Double) -> (Double, Double))
polarVJP r t =
  (polar r t, \(a, b) -> (a * cos t + b * sin t, negate a * r * sin t + b * r * cos t))

polarJVP :: Double -> Double -> ((Double, Double), (Double, Double) -> (Double, Double))
polarJVP r t =
  (polar r t, \(dr, dt) -> (dr * cos t - r * sin t * dt, dr * sin t + r * cos t * dt))

primitiveWithJVP 'polar 'polarVJP 'polarJVP

-- | One input, three outputs, with a JVP that is twice the VJP's
-- derivative: the Jacobian comes from the JVP (one call instead of three).
spread3 :: Double -> (Double, Double, Double)
spread3 x = (x, x * x, sin x)

spread3VJP :: Double -> ((Double, Double, Double), (Double, Double, Double) -> Double)
spread3VJP x = (spread3 x, \(a, b, c) -> a + b * 2 * x + c * cos x)

spread3JVP2 :: Double -> ((Double, Double, Double), Double -> (Double, Double, Double))
spread3JVP2 x = (spread3 x, \dx -> (2 * dx, 2 * dx * 2 * x, 2 * dx * cos x))

primitiveWithJVP 'spread3 'spread3VJP 'spread3JVP2

-- | Three inputs, one output, with the same doubled JVP: the Jacobian comes
-- from the VJP (one call instead of three).
sum3 :: Double -> Double -> Double -> Double
sum3 a b c = a + b * c

sum3VJP :: Double -> Double -> Double -> (Double, Double -> (Double, Double, Double))
sum3VJP a b c = (sum3 a b c, \ybar -> (ybar, ybar * c, ybar * b))

sum3JVP2 :: Double -> Double -> Double -> (Double, (Double, Double, Double) -> Double)
sum3JVP2 a b c = (sum3 a b c, \(da, db, dc) -> 2 * (da + db * c + dc * b))

primitiveWithJVP 'sum3 'sum3VJP 'sum3JVP2

-- | A polymorphic function: the rule takes it at Double, and replaces the
-- recording of its arithmetic (the rule's derivative is 10 times the true).
polyLog1p :: Floating a => a -> a
polyLog1p x = log (1 + x)

polyLog1pVJP :: Double -> (Double, Double -> Double)
polyLog1pVJP x = (polyLog1p x, \ybar -> 10 * ybar / (1 + x))

primitive 'polyLog1p 'polyLog1pVJP

-- | Rules that fail at run time: an adjoint list of the wrong length, and
-- an error raised by the rule.
badAdjoint :: [Double] -> Double
badAdjoint = sum

badAdjointVJP :: [Double] -> (Double, Double -> [Double])
badAdjointVJP xs = (sum xs, \ybar -> map (const ybar) (drop 1 xs))

primitive 'badAdjoint 'badAdjointVJP

throwing :: Double -> Double
throwing x = x

throwingVJP :: Double -> (Double, Double -> Double)
throwingVJP x = (x, \ybar -> if x > 0 then error "throwingVJP: positive" else ybar)

primitive 'throwing 'throwingVJP

------------------------------------------------------------------------------
-- Blocks using them, and the same functions written out

differentiable [d|
  softclipW :: Double -> Double -> Double
  softclipW c x = c * tanh (x / c)

  -- the README's loss
  loss :: [Double] -> Double
  loss xs = sum (map (softclip 2) xs)

  -- direct calls, in arithmetic, in a local function, a where clause and a
  -- recursive loop
  directR, directW :: ([Double], Double) -> Double
  directR (xs, c) = sum [softclip c x * x | x <- xs] + loop (3 :: Int) c
    where
      loop k acc = if k == 0 then acc else loop (k - 1) (softclip c (acc * 1.5) + twice acc)
      twice z = softclip (c + 1) z * 2
  directW (xs, c) = sum [softclipW c x * x | x <- xs] + loop (3 :: Int) c
    where
      loop k acc = if k == 0 then acc else loop (k - 1) (softclipW c (acc * 1.5) + twice acc)
      twice z = softclipW (c + 1) z * 2

  -- the primitive as a function value: partial application in map, zipWith,
  -- a fold, flip, a let-bound name, an argument of a higher-order function
  valuesWith :: (Double -> Double -> Double) -> ([Double], Double) -> Double
  valuesWith g (xs, c) =
    let h = g
        s1 = sum (map (g c) xs)
        s2 = sum (zipWith g (map (+ c) xs) xs)
        s3 = foldr (\x acc -> h c (x + acc)) 0 xs
        s4 = sum (map (flip g c) xs)
    in s1 + s2 * s3 + s4

  valuesR, valuesW :: ([Double], Double) -> Double
  valuesR = valuesWith softclip
  valuesW = valuesWith softclipW

  -- discrete and several arguments
  powR, powW :: (Double, Double) -> Double
  powR (a, b) = scaledPow 3 a b + scaledPow 2 b a * a
  powW (a, b) = 3 * a ** b + 2 * b ** a * a

  fake :: Double -> Double
  fake x = fakeCube x + 1

  boxR, boxW :: (Double, Double) -> Double
  boxR (x, y) = cBox x y * cBox y x
  boxW (x, y) = box x y * box y x
    where box u v = log1p (u * u * v * v) + v * sin u

  -- a foreign call declared a primitive in another module, against the
  -- engine's erf
  erfR, erfW :: [Double] -> Double
  erfR xs = product (map cErf xs)
  erfW xs = product (map F.erf xs)

  -- a function of another module with its rule in this one
  cubeR, cubeW :: Double -> Double
  cubeR x = plainCube (sin x)
  cubeW x = sin x * sin x * sin x

  lseR, lseW :: [Double] -> Double
  lseR xs = logSumExp (map (* 2) xs) * logSumExp xs
  lseW xs = lse (map (* 2) xs) * lse xs
    where lse ys = let m = maximum ys in m + log (sum [exp (y - m) | y <- ys])

  cumsumR, cumsumW :: [Double] -> [Double]
  cumsumR xs = map (\y -> y * y) (cumsum xs)
  cumsumW xs = map (\y -> y * y) (scanl1 (+) xs)

  polarR, polarW :: (Double, Double) -> (Double, Double)
  polarR (r, t) = let (a, b) = polar (r * r) t in (a + b, a * b)
  polarW (r, t) = let (a, b) = (r * r * cos t, r * r * sin t) in (a + b, a * b)

  spreadSum :: Double -> Double
  spreadSum x = let (a, b, c) = spread3 x in a + b + c

  sum3Sum :: (Double, Double, Double) -> Double
  sum3Sum (a, b, c) = sum3 a b c

  polyR :: Double -> Double
  polyR x = polyLog1p x

  -- both sides of a parallel pair
  parR, parW :: ([Double], Double) -> Double
  parR (xs, c) =
    let (a, b) = sum (map (softclip c) xs) |*| product (map (softclip (c + 1)) xs) in a * b
  parW (xs, c) =
    let (a, b) = sum (map (softclipW c) xs) |*| product (map (softclipW (c + 1)) xs) in a * b

  -- the step of a checkpointed loop (recorded again during the sweeps)
  loopR, loopW :: (Double, Double) -> Double
  loopR p = fst (checkpointedIterateWith 3 40 (\(s, c) -> (softclip c (s * 1.3) + 0.1, c)) p)
  loopW p = fst (iterate (\(s, c) -> (softclipW c (s * 1.3) + 0.1, c)) p !! 40)

  -- constant arguments: the rule gives a constant
  constArgs :: (Double, Constant Double) -> Double
  constArgs (x, c) = x * softclip (constant c) (constant c)

  -- second order through a rule, and a rule beside a nested derivative
  nestedAround :: Double -> Double
  nestedAround x = derivative (\y -> softclip 2 (x * y)) x
  nestedBesideR, nestedBesideW :: Double -> Double
  nestedBesideR x = softclip 2 x * derivative (\y -> y * y * x) x
  nestedBesideW x = softclipW 2 x * derivative (\y -> y * y * x) x

  badUse :: [Double] -> Double
  badUse xs = badAdjoint xs * 2

  throwingUse :: Double -> Double
  throwingUse x = throwing x * 2
  |]

------------------------------------------------------------------------------

-- | The two gradients agree to 1e-13 (relative), element by element.
agree :: [Double] -> [Double] -> Property
agree a b = counterexample (show a ++ "\n  vs " ++ show b)
              (length a == length b && and (zipWith (closeRel 1e-13) a b))

listAndC :: Gen ([Double], Double)
listAndC = (,) <$> listOf1N 6 dbl <*> pos


spec :: Spec
spec = describe "custom rules (primitive)" $ do
  it "the README's example" $
    $(grad 'loss) [1, 2, 3] `shouldSatisfy` \g ->
      and (zipWith (closeRel 1e-15) g [1 - tanh (x / 2) ^ (2 :: Int) | x <- [1, 2, 3]])

  describe "the gradient is that of the function written out" $ do
    it "direct calls, local functions, a loop" $ property $ forAll listAndC $ \p ->
      agree (toVec ($(grad 'directR) p)) (toVec ($(grad 'directW) p))
    checkGrad "direct calls (finite differences)" listAndC directR $(grad 'directR)
    it "as a function value (map, zipWith, foldr, flip, let)" $ property $ forAll listAndC $ \p ->
      agree (toVec ($(grad 'valuesR) p)) (toVec ($(grad 'valuesW) p))
    checkGrad "as a function value (finite differences)" listAndC valuesR $(grad 'valuesR)
    it "several arguments, one of them discrete" $ property $ forAll ((,) <$> pos <*> pos) $ \p ->
      agree (toVec ($(grad 'powR) p)) (toVec ($(grad 'powW) p))
    checkGrad "several arguments (finite differences)" ((,) <$> pos <*> pos) powR $(grad 'powR)
    it "a C function with its gradient in C" $ property $ forAll ((,) <$> dbl <*> dbl) $ \p ->
      agree (toVec ($(grad 'boxR) p)) (toVec ($(grad 'boxW) p))
    checkGrad "a C function (finite differences)" ((,) <$> dbl <*> dbl) boxR $(grad 'boxR)
    it "a foreign import of libm's erf, declared in another module" $
      property $ forAll (listOf1N 5 dbl) $ \xs ->
        agree ($(grad 'erfR) xs) ($(grad 'erfW) xs)
    it "a function of another module, its rule in this one" $ property $ forAll dbl $ \x ->
      agree [$(grad 'cubeR) x] [$(grad 'cubeW) x]
    it "a list argument" $ property $ forAll (listOf1N 6 dbl) $ \xs ->
      agree ($(grad 'lseR) xs) ($(grad 'lseW) xs)
    it "grad of the primitive itself" $ property $ forAll (listOf1N 6 dbl) $ \xs ->
      agree ($(grad 'logSumExp) xs) (let y = logSumExp xs in [exp (x - y) | x <- xs])
    it "a list result (jacobian)" $ property $ forAll (listOf1N 5 dbl) $ \xs ->
      agree (concat ($(jacobian 'cumsumR) xs)) (concat ($(jacobian 'cumsumW) xs))
    checkJac "a list result" (listOf1N 5 dbl) cumsumR $(jacobian 'cumsumR)
    it "a tuple result (jacobian)" $ property $ forAll ((,) <$> dbl <*> dbl) $ \p ->
      agree (concatMap toVec ($(jacobian 'polarR) p)) (concatMap toVec ($(jacobian 'polarW) p))
    checkDiff "a tuple result" ((,) <$> dbl <*> dbl) polarR $(differentiate 'polarR)
    it "in both jobs of a parallel pair" $ property $ forAll listAndC $ \p ->
      agree (toVec ($(grad 'parR) p)) (toVec ($(grad 'parW) p))
    it "in the step of a checkpointed loop" $ property $ forAll ((,) <$> dbl <*> pos) $ \p ->
      agree (toVec ($(grad 'loopR) p)) (toVec ($(grad 'loopW) p))

  describe "the rule is what is used" $ do
    it "a rule whose derivative is not the function's: the gradient follows the rule" $
      property $ forAll dbl $ \x -> $(grad 'fake) x === 2 * x
    it "the value is the rule's" $ property $ forAll dbl $ \x ->
      fst ($(grad' 'fake) x) === x * x * x + 1
    it "a rule replaces a polymorphic function's own recording" $ property $ forAll pos $ \x ->
      closeRel 1e-15 ($(grad 'polyR) x) (10 / (1 + x))
    it "with a JVP: built from the JVP where the arguments have fewer scalars" $
      property $ forAll dbl $ \x ->
        closeRel 1e-14 ($(grad 'spreadSum) x) (2 * (1 + 2 * x + cos x))
    it "with a JVP: built from the VJP where the value has fewer scalars" $
      property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(a, b, c) ->
        $(grad 'sum3Sum) (a, b, c) === (1, c, b)
    it "constant arguments give a constant" $
      $(grad' 'constArgs) (3, Constant 2) `shouldBe` (3 * softclip 2 2, (softclip 2 2, Constant 2))

  describe "forward mode" $ do
    it "jvp through scalar rules is the gradient times the direction" $
      property $ forAll listAndC $ \p@(xs, _) ->
        forAll ((,) <$> vecOf (length xs) dbl <*> dbl) $ \v ->
          let (_, t) = $(jvp 'directR) p v
              (gs, gc) = $(grad 'directR) p
          in closeRel 1e-12 t (sum (zipWith (*) gs (fst v)) + gc * snd v)
    it "jvp through a tuple-valued rule" $ property $ forAll ((,) <$> dbl <*> dbl) $ \p ->
      forAll ((,) <$> dbl <*> dbl) $ \v ->
        agree (toVec (snd ($(jvp 'polarR) p v))) (toVec (snd ($(jvp 'polarW) p v)))

  describe "second derivatives" $ do
    it "hvp through a rule is a DualRevError naming the rule" $ do
      m <- dualRevError ($(hvp 'directR) ([1, 2], 1.5) ([1, 0], 0))
      m `shouldSatisfy` ("the rule for `softclip'" `isInfixOf`)
      m `shouldSatisfy` ("first derivatives only" `isInfixOf`)
    it "tapedHvp through a rule is the same DualRevError, at every call" $ do
      let h = $(tapedHvp 'directR)
      m1 <- dualRevError (h ([1, 2], 1.5) ([1, 0], 0))
      m2 <- dualRevError (h ([1, 3], 1.5) ([0, 1], 0))
      m1 `shouldSatisfy` ("the rule for `softclip'" `isInfixOf`)
      m2 `shouldBe` m1
    it "hessian through a rule is a DualRevError" $ do
      m <- dualRevError ($(hessian 'fake) 2)
      m `shouldSatisfy` ("the rule for `fakeCube'" `isInfixOf`)
    it "a derivative inside differentiable code around a rule is a DualRevError" $ do
      m <- dualRevError ($(grad 'nestedAround) 0.5)
      m `shouldSatisfy` ("the rule for `softclip'" `isInfixOf`)
    it "a rule beside a nested derivative works" $ property $ forAll dbl $ \x ->
      agree [$(grad 'nestedBesideR) x] [$(grad 'nestedBesideW) x]

  describe "errors at run time" $ do
    it "an adjoint list shorter than its argument is a DualRevError" $ do
      m <- dualRevError ($(grad 'badUse) [1, 2, 3])
      m `shouldSatisfy` ("the rule for `badAdjoint'" `isInfixOf`)
      m `shouldSatisfy` ("as long as its argument" `isInfixOf`)
    it "an exception in a rule propagates; the next call works" $ do
      r <- try (evaluate ($(grad 'throwingUse) 1))
      case r of
        Left (ErrorCall m) -> m `shouldBe` "throwingVJP: positive"
        Right g -> expectationFailure ("no exception: " ++ show g)
      $(grad 'throwingUse) (-1) `shouldBe` 2
