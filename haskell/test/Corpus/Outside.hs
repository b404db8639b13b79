{-# LANGUAGE TemplateHaskell #-}
-- | Definitions from outside any block: data types declared in ordinary
-- code (here and in another module), polymorphic numeric functions defined
-- in ordinary code, discrete helpers, a library type ('Data.Complex'), and
-- 'grad' of a polymorphic function.
module Corpus.Outside (spec) where

import Data.Complex (Complex (..), magnitude, realPart)
import Data.List (isInfixOf)
import Test.Hspec
import Test.QuickCheck (Gen, choose)

import Check
import Corpus.OutsideDefs
import Numeric.DualRev

data Spring = Spring { restLength :: Double, stiffness :: Double }
  deriving (Eq, Show)

data Pt = Pt Double Double
  deriving (Eq, Show)

sigmoid :: Floating a => a -> a
sigmoid x = 1 / (1 + exp (negate x))

norm2 :: Floating a => [a] -> a
norm2 xs = sqrt (sum (map (\x -> x * x) xs))

differentiable [d|
  -- a data type of this module declared outside the block, its record
  -- fields, and a constructor without any signature mentioning it
  springEnergy :: (Double, Double) -> Double
  springEnergy (x, y) =
    let s = Spring { restLength = 1, stiffness = x }
        Pt a b = Pt x y
        d = sqrt (a * a + b * b) - restLength s
    in stiffness s * d * d / 2

  -- a record type of another module, nested in another
  segmentLength :: [(Double, Double)] -> Double
  segmentLength ps =
    let parts = [Particle p (0, 0) 1 | p <- ps]
        segs = zipWith Segment parts (drop 1 parts)
        len (Segment a b) = let (x1, y1) = ppos a
                                (x2, y2) = ppos b
                            in sqrt ((x1 - x2) * (x1 - x2) + (y1 - y2) * (y1 - y2)) * pmass a
    in sum (map len segs)

  -- polymorphic helpers of this module and of another
  network :: ([Double], [Double]) -> Double
  network (w, x) = sigmoid (sum (zipWith (*) w x)) + softplus (norm2 w) + logSumExp x

  polyHelpers :: ([Double], Double) -> Double
  polyHelpers (cs, x) = let (m1, m2) = moments cs in polyEval cs x + m2 - m1 * m1

  -- a discrete helper used as it is
  scaledCount :: [Double] -> Double
  scaledCount xs = fromIntegral (countPositive [1, -2, 3]) * sum xs

  -- a library type through its own Num and Floating instances
  complexSquare :: (Double, Double) -> Double
  complexSquare (a, b) = let z = (a :+ b) * (a :+ b) + 1 in realPart z + magnitude z

  -- an outside helper passed as a function value
  mappedHelper :: [Double] -> Double
  mappedHelper xs = sum (map sigmoid xs) + foldr (\x acc -> softplus x * acc) 1 xs

  -- polymorphic functions of a block differentiated directly
  polyLoss :: Floating a => [a] -> a
  polyLoss xs = sum (map (\x -> sin x * x) xs) / fromIntegral (length xs)

  polyPower :: (Integral i, Floating a) => (i, [a]) -> a
  polyPower (n, xs) = sum [x ^ n | x <- xs] + sqrt (sum [x * x | x <- xs])
  |]

-- A Num instance outside every block, for a type declared outside (Vec2)
-- and for one declared in a block (Pair2): differentiable code cannot
-- compute with it (the block warns at compile time, and the arithmetic is
-- a DualRevError saying where the instance belongs); declared in a block
-- of its own (Pair3), it works.
data Vec2 = Vec2 Double Double

instance Num Vec2 where
  Vec2 a b + Vec2 c d = Vec2 (a + c) (b + d)
  Vec2 a b * Vec2 c d = Vec2 (a * c) (b * d)
  negate (Vec2 a b) = Vec2 (negate a) (negate b)
  abs (Vec2 a b) = Vec2 (abs a) (abs b)
  signum (Vec2 a b) = Vec2 (signum a) (signum b)
  fromInteger n = Vec2 (fromInteger n) (fromInteger n)

differentiable [d|
  data Pair2 = Pair2 Double Double
  data Pair3 = Pair3 Double Double
  |]

instance Num Pair2 where
  Pair2 a b + Pair2 c d = Pair2 (a + c) (b + d)
  Pair2 a b * Pair2 c d = Pair2 (a * c) (b * d)
  negate (Pair2 a b) = Pair2 (negate a) (negate b)
  abs (Pair2 a b) = Pair2 (abs a) (abs b)
  signum (Pair2 a b) = Pair2 (signum a) (signum b)
  fromInteger n = Pair2 (fromInteger n) (fromInteger n)

differentiable [d|
  instance Num Pair3 where
    Pair3 a b + Pair3 c d = Pair3 (a + c) (b + d)
    Pair3 a b * Pair3 c d = Pair3 (a * c) (b * d)
    negate (Pair3 a b) = Pair3 (negate a) (negate b)
    abs (Pair3 a b) = Pair3 (abs a) (abs b)
    signum (Pair3 a b) = Pair3 (signum a) (signum b)
    fromInteger n = Pair3 (fromInteger n) (fromInteger n)
  |]

differentiable [d|
  vec2Sum :: (Double, Double) -> Double
  vec2Sum (x, y) = case Vec2 x y + Vec2 y x of Vec2 a b -> a * b

  -- the type mentioned, its fields computed with, its arithmetic not used
  vec2Fields :: (Double, Double) -> Double
  vec2Fields (x, y) = case Vec2 x y of Vec2 a b -> a * b + a

  pair2Sum :: (Double, Double) -> Double
  pair2Sum (x, y) = case Pair2 x y * Pair2 y x of Pair2 a b -> a + b

  pair3Sum :: (Double, Double) -> Double
  pair3Sum (x, y) = case Pair3 x y * Pair3 y x + 1 of Pair3 a b -> a * b
  |]

spec :: Spec
spec = describe "definitions outside blocks" $ do
  describe "a Num instance outside every block" $ do
    it "for a type declared outside: a DualRevError naming the instance and where it belongs" $ do
      m <- dualRevError ($(grad 'vec2Sum) (1, 2))
      m `shouldSatisfy` ("the instance `Num Vec2' is declared outside any differentiable block" `isInfixOf`)
      m `shouldSatisfy` ("move the instance into a differentiable block" `isInfixOf`)
    it "for a type declared in a block: the same" $ do
      m <- dualRevError ($(grad 'pair2Sum) (1, 2))
      m `shouldSatisfy` ("the instance `Num Pair2' is declared outside any differentiable block" `isInfixOf`)
    it "code that does not use the instance is differentiated" $
      $(grad 'vec2Fields) (3, 2) `shouldBe` (3, 3)
    it "the instance in a block of its own: ((x y + 1)^2)' = (2 (x y + 1) y, 2 (x y + 1) x)" $
      $(grad 'pair3Sum) (3, 2) `shouldBe` (28, 42)
  checkGrad "a data type declared outside the block" ((,) <$> pos <*> pos) springEnergy $(grad 'springEnergy)
  checkGrad "record types of another module" (listOf1N 5 ((,) <$> dbl <*> dbl)) segmentLength $(grad 'segmentLength)
  checkGrad "polymorphic helpers from outside (this module and another)"
    ((,) <$> vecOf 3 dbl <*> vecOf 3 dbl) network $(grad 'network)
  checkGrad "outside helpers returning a tuple" ((,) <$> listOf1N 4 dbl <*> unit) polyHelpers $(grad 'polyHelpers)
  checkGrad "a discrete helper from outside" (listOf1N 4 dbl) scaledCount $(grad 'scaledCount)
  checkGrad "Data.Complex" ((,) <$> pos <*> pos) complexSquare $(grad 'complexSquare)
  checkGrad "outside helpers as function values" (listOf1N 4 unit) mappedHelper $(grad 'mappedHelper)
  checkGrad "grad of a polymorphic function (at Double)" (listOf1N 4 dbl) polyLoss $(grad 'polyLoss)
  checkGrad "grad of a polymorphic function with an Integral variable (at Integer)"
    ((,) <$> (fromIntegral <$> (choose (1, 3) :: Gen Int)) <*> listOf1N 3 pos)
    polyPower $(grad 'polyPower)
