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

import Control.Exception (ErrorCall (..), bracket, evaluate, try)
import Data.Int (Int64)
import Foreign.C.Types (CInt)
import Foreign.Ptr (Ptr)
import Test.Hspec
import Test.QuickCheck

import Check (Vec (..), closeFD, fdGrad)
import Numeric.DualRev
import Numeric.DualRev.Internal.Engine.FFI (CTape, c_record0, c_tape_free, c_tape_len, c_tape_new)
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Run.AD (AD (..), D (..))

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
  |]

-- | Gradients equal to rounding, entry by entry.
sameGrad :: [Double] -> [Double] -> Bool
sameGrad a b = length a == length b && and (zipWith (\x y -> abs (x - y) <= 1e-11 * max 1 (max (abs x) (abs y))) a b)

-- | The value to the bit against the plain function and the op-by-op twin,
-- the gradient to rounding against the twin's and central differences.
agrees :: (Vec x, Show x) => (x -> Double) -> (x -> Double) -> (x -> (Double, x)) -> (x -> (Double, x)) -> x -> Property
agrees f g gradF gradG x =
  let (vF, dF) = gradF x
      (vG, dG) = gradG x
      gF = toVec dF
      gG = toVec dG
  in counterexample (show (x, vF, vG, gF, gG)) $
       vF == f x .&&. vF == vG .&&. f x == g x
         .&&. sameGrad gF gG
         .&&. and (zipWith (closeFD (f x)) gF (fdGrad f x))

small :: Gen Double
small = choose (-2, 2)

-- | The nodes a worker records for inputs of these values.
nodesOf :: CInt -> ([D] -> AD D) -> [Double] -> IO Int
nodesOf order f xs = bracket c_tape_new c_tape_free $ \t -> do
  _ <- c_tape_set_order t order
  ds <- mapM (\v -> D v <$> (c_record0 t :: IO Int64)) xs
  before <- c_tape_len t
  _ <- unAD (f ds) (t :: Ptr CTape)
  after <- c_tape_len t
  pure (fromIntegral (after - before))

spec :: Spec
spec = describe "local helpers inlined into statements" $ do
  it "fparticles' particle: the plain value to the bit, the gradient of the helpers kept as calls" $
    property $ forAll ((,) <$> choose (0, 40) <*> ((,) <$> ((,) <$> small <*> small) <*> ((,) <$> small <*> small))) $
      agrees simI simO $(grad' 'simI) $(grad' 'simO)
  it "an argument used twice, a wildcard's argument" $
    property $ forAll ((,) <$> small <*> small) $ agrees twiceI twiceO $(grad' 'twiceI) $(grad' 'twiceO)
  it "helpers at Int and at Double, nested tuple patterns" $
    property $ forAll ((,) <$> ((,) <$> small <*> small) <*> choose (-3, 3)) $
      agrees mixedI mixedO $(grad' 'mixedI) $(grad' 'mixedO)
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
    -- second order records the operations one by one either way
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
