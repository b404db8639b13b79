{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE TemplateHaskell #-}
-- | More constructs, each of which once failed (regression tests): stepped
-- arithmetic sequences on Double, user-defined operators (top-level and
-- local, with fixity declarations and sections), nested records and nested
-- updates, derived Eq on a dual twin, definitions with fewer equations
-- arguments than their type, fall-through between case alternatives,
-- guarded let bindings, constructors as function values, polymorphic
-- functions used at Int and Double, parametrised types holding dual types,
-- error in a branch not taken.
module Corpus.Extra where

import Control.Exception (ErrorCall (..), evaluate, try)
import Test.Hspec
import Test.QuickCheck

import Check
import Corpus.Data (Pair (..))
import Numeric.DualRev

differentiable [d|
  data V2 = V2 { vx :: Double, vy :: Double }
    deriving (Eq, Show)
  data Particle = Particle { ppos :: V2, pvel :: V2 }
    deriving (Eq, Show)
  newtype Wrap a = Wrap a
    deriving (Eq, Show)

  -- [x, y .. z]: element k is x + k (y - x)
  steppedP :: (Ord a, Enum a, Fractional a) => (a, a) -> a
  steppedP (x, y) = sum [x, y .. 5] + sum (map (* x) [y, y - 0.25 .. y - 1])

  stepped :: (Double, Double) -> Double
  stepped p = steppedP p

  -- user-defined operators with fixity, their sections, local operators
  infixl 6 |+|
  (|+|) :: V2 -> V2 -> V2
  V2 a b |+| V2 c d = V2 (a + c) (b + d)

  operators :: (Double, Double) -> Double
  operators (x, y) =
    let v = V2 x y |+| V2 y x
        w = foldr (|+|) (V2 0 0) [v, V2 1 x]
        h = (|+| v)
        g = (v |+|)
        a .*. b = a * b + 1
        infixl 7 .*.
    in vx w * vy (h w) + vx (g v) + x .*. y .*. 2

  -- nested records, nested update, as-patterns in record patterns
  nested :: Particle -> Double
  nested p@(Particle { ppos = q@(V2 x _) }) =
    let p' = p { pvel = (pvel p) { vx = vx (pvel p) * 2 } }
    in vx (pvel p') * x + vy q * vy (ppos p) + sin (vy (pvel p'))

  -- derived Eq on a type with a dual twin
  equality :: (V2, V2) -> Double
  equality (p, q@(V2 a b)) = if p == q || p /= V2 0 0 && vx p == 7 then a else a * b

  -- a definition with fewer arguments in its equations than in its type
  curried :: Double -> Double -> Double
  curried x = \y -> x * y

  -- ($) and (.) as values and in sections
  curriedUse :: (Double, Double) -> Double
  curriedUse (x, y) =
    curried x y + sum (map (curried y) [x, 2]) + sum (zipWith ($) [sin, (* 2)] [x, y])
    + sum (map ($ x) (map ((+ 1) .) [sin])) + head (map ($ y) (map (. (* 2)) [sin]))

  -- fall-through from a case alternative whose guards all fail
  caseFall :: (Double, Double) -> Double
  caseFall (x, y) = case (x > 0, y) of
    (True, v) | v > 0 -> v * x
              | v < -1 -> v
    (_, v) | v > 1 -> x
    _ -> x * x * y

  -- a let binding with guards
  letGuard :: Double -> Double
  letGuard x = let y | x > 0 = x * 3
                     | otherwise = negate x
               in y * y

  -- constructors as function values: (:), a dual twin's constructor, tuples
  constructors :: ([Double], [Double]) -> Double
  constructors (xs, ys) =
    sum (foldr (:) [] xs) + sum (map (\(V2 a b) -> a * b) (zipWith V2 xs ys))
    + sum (concat (zipWith (:) xs (map (: []) ys))) + sum (map (uncurry (*)) (zipWith (,) ys xs))

  -- a polymorphic function used at Int and at Double; Char ranges
  sqP :: Num a => a -> a
  sqP v = v * v

  twoTypes :: [Double] -> Double
  twoTypes xs = fromIntegral (sqP (length xs)) * sqP (sum xs) + fromIntegral (length ['a' .. 'e'])

  -- parametrised types holding types with dual twins
  holders :: (Pair V2, Maybe V2, Wrap Double) -> Double
  holders (Pair a b, m, Wrap w) = vx a * vy b + maybe 1 (\v -> vx v * vy v) m * w

  -- recursive functions bound to lambdas, local and top-level
  lambdaRec :: Double -> Double
  lambdaRec x = let go = \n acc -> if n == (0 :: Int) then acc else go (n - 1) (acc * x) in go 3 1 + halve x

  halve :: Double -> Double
  halve = \x -> if x > 1 then halve (x / 2) else x * x

  -- data types with function fields, a newtype record
  data Model = Model (Double -> Double) Double
  newtype W = W { unW :: Double }
    deriving (Eq, Show)
  data Op = Op { opName :: String, opFn :: Double -> Double -> Double }

  applyModel :: Model -> Double -> Double
  applyModel (Model f k) x = f x * k

  models :: (W, Double) -> Double
  models (w, x) =
    let ms = [Model sin 2, Model (\v -> v * unW w) 3, Model (applyModel (Model exp 1)) 0.5]
        ops = [Op { opName = "mul", opFn = (*) }, Op "add" (+)]
        w' = w { unW = unW w * 2 }
    in sum (map (\m -> applyModel m x) ms) + sum [ opFn o x (unW w') | o <- ops, opName o /= "none" ]

  -- error in a branch that is not taken; error when it is
  guarded :: Double -> Double
  guarded x = if x > 0 then sqrt x else error "guarded: negative"
  |]

instance Vec V2 where
  toVec (V2 a b) = [a, b]
  fromVecS _ (a : b : r) = (V2 a b, r)
  fromVecS _ _ = error "short"
instance Vec Particle where
  toVec (Particle p v) = toVec p ++ toVec v
  fromVecS (Particle p v) vs = let (p', r) = fromVecS p vs; (v', r') = fromVecS v r in (Particle p' v', r')
instance Vec W where
  toVec (W a) = [a]
  fromVecS _ (a : r) = (W a, r)
  fromVecS _ [] = error "short"
instance Vec a => Vec (Wrap a) where
  toVec (Wrap a) = toVec a
  fromVecS (Wrap a) vs = let (a', r) = fromVecS a vs in (Wrap a', r)

spec :: Spec
spec = describe "more constructs (regressions)" $ do
  let pair = (,) <$> dbl <*> dbl
      genV2 = V2 <$> dbl <*> dbl
  checkGradFwd "arithmetic sequences with a step" ((,) <$> choose (-2, 1) <*> choose (1.2, 3)) stepped steppedP $(grad 'stepped)
  it "[x, y .. 5] at (1, 1.5): partials sum (1 - k) and sum k" $
    -- 9 elements (k = 0..8): -27 and 36; then x * (5 y - 2.5): 5 and 5
    $(grad 'stepped) (1, 1.5) `shouldBe` (-22, 41)
  checkGrad "user-defined operators and their sections" pair operators $(grad 'operators)
  checkGrad "nested records and updates" (Particle <$> genV2 <*> genV2) nested $(grad 'nested)
  checkGrad "derived Eq on a dual twin" ((,) <$> genV2 <*> genV2) equality $(grad 'equality)
  it "derived Eq on a dual twin, equal arguments" $
    $(grad 'equality) (V2 1 2, V2 1 2) `shouldBe` (V2 0 0, V2 1 0)
  checkGrad "fewer arguments in the equations than in the type; ($) and (.) as values" pair curriedUse $(grad 'curriedUse)
  checkGrad "fall-through between case alternatives" pair caseFall $(grad 'caseFall)
  checkGrad "guarded let binding" dbl letGuard $(grad 'letGuard)
  checkGrad "constructors as function values" (choose (1, 5) >>= \n -> (,) <$> vecOf n dbl <*> vecOf n dbl) constructors $(grad 'constructors)
  checkGrad "a polymorphic function at Int and at Double" (listOf1N 5 dbl) twoTypes $(grad 'twoTypes)
  checkGrad "parametrised types holding dual twins"
    ((,,) <$> (Pair <$> genV2 <*> genV2) <*> oneof [pure Nothing, Just <$> genV2] <*> (Wrap <$> dbl)) holders $(grad 'holders)
  checkGrad "recursive functions bound to lambdas" pos lambdaRec $(grad 'lambdaRec)
  checkGrad "function fields, newtype records" ((,) <$> (W <$> dbl) <*> dbl) models $(grad 'models)
  it "error in a branch not taken; raised when taken" $ do
    $(grad 'guarded) 4 `shouldBe` 0.25
    r <- try (evaluate ($(grad 'guarded) (-1)))
    r `shouldBe` Left (ErrorCall "guarded: negative")
