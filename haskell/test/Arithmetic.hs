{-# OPTIONS_GHC -Wno-name-shadowing #-}
{-# LANGUAGE TemplateHaskell #-}
-- | Arithmetic expressions recorded as statements (two or more of
-- + - * / negate: their partials derived at compile time, one call to
-- record them) against the same expressions recorded one operation at a
-- time (through local functions of one operation each, which are not
-- statements): the same values to the bit, gradients equal to rounding and
-- to central differences, with literals, constant leaves, repeated leaves,
-- leaves that are calls, expressions too large for one statement, other
-- numeric types, second order and nesting (where the operations are
-- recorded one by one), and the nodes a statement records.
module Arithmetic (spec) where

import Test.Hspec
import Test.QuickCheck

import Twins (agrees, nodesOf, sameGrad)
import Numeric.DualRev
import Numeric.DualRev.Internal.Engine.ScalarFFI (c_fe_stmt_max)
import Numeric.DualRev.Internal.Run.Scalar.Statement (stmtMaxLeaves)

differentiable [d|
  -- one operation per call: never a statement
  add, sub, mul, dv :: Double -> Double -> Double
  add a b = a + b
  sub a b = a - b
  mul a b = a * b
  dv a b = a / b
  ng :: Double -> Double
  ng a = negate a

  -- three leaves and a literal
  polyS, polyO :: (Double, Double, Double) -> Double
  polyS (x, y, z) = x * y + y * z - 2 * x
  polyO (x, y, z) = sub (add (mul x y) (mul y z)) (mul 2 x)

  -- a leaf used three times, negative literals, negate
  repS, repO :: (Double, Double) -> Double
  repS (x, y) = x * x * x - 0.5 * x * y + negate (y * x) - (-3)
  repO (x, y) = sub (add (sub (mul (mul x x) x) (mul (mul 0.5 x) y)) (ng (mul y x))) (-3)

  -- one leaf, and four: the engine's calls of two and three leaves take
  -- one and three, the general call four
  oneS, oneO :: (Double, Double) -> Double
  oneS (x, _) = x * x * x - 2 * x
  oneO (x, _) = sub (mul (mul x x) x) (mul 2 x)
  fourS, fourO :: ((Double, Double), (Double, Double)) -> Double
  fourS ((a, b), (c, d)) = a * b - c * d / 3
  fourO ((a, b), (c, d)) = sub (mul a b) (dv (mul c d) 3)

  -- division on both sides
  divS, divO :: (Double, Double, Double) -> Double
  divS (x, y, z) = (x + y) / z - x / (y * z + 4)
  divO (x, y, z) = sub (dv (add x y) z) (dv x (add (mul y z) 4))

  -- six leaves (the most one statement takes), as a dot product of 3-vectors
  sixS, sixO :: ((Double, Double, Double), (Double, Double, Double)) -> Double
  sixS ((a, b, c), (d, e, f)) = a * d + b * e + c * f
  sixO ((a, b, c), (d, e, f)) = add (add (mul a d) (mul b e)) (mul c f)

  -- nine leaves: split at the root, its arguments statements
  nineS, nineO :: ([Double], Double) -> Double
  nineS ([a, b, c, d, e, f, g, h], k) = (a * b + c * d) * (e * f - g * h) + k * a - b
  nineS _ = 0
  nineO ([a, b, c, d, e, f, g, h], k) =
    sub (add (mul (add (mul a b) (mul c d)) (sub (mul e f) (mul g h))) (mul k a)) b
  nineO _ = 0

  -- leaves that are calls (evaluated first) and a let-bound leaf
  callS, callO :: (Double, Double, Double) -> Double
  callS (x, y, z) = let w = x * z in sin x * y + exp (x * y) * z - w * w
  callO (x, y, z) = let w = x * z in sub (add (mul (sin x) y) (mul (exp (x * y)) z)) (mul w w)

  -- leaves whose values are constants (a discrete count, a constant branch)
  constS, constO :: ((Double, Double), Int) -> Double
  constS ((x, y), n) = fromIntegral n * x * y + (if n > 2 then 5 else x) * y - fromIntegral n
  constO ((x, y), n) =
    sub (add (mul (mul (fromIntegral n) x) y) (mul (if n > 2 then 5 else x) y)) (fromIntegral n)

  -- polymorphic code at Int and at the dual scalar
  cubic :: Num a => a -> a -> a
  cubic p q = p * p * q - 3 * q + p
  polyIntS, polyIntO :: ((Double, Double), Int) -> Double
  polyIntS ((x, y), n) = cubic x y * fromIntegral (cubic n (n + 1))
  polyIntO ((x, y), n) = mul (add (sub (mul (mul x x) y) (mul 3 y)) x) (fromIntegral (n * n * (n + 1) - 3 * (n + 1) + n))

  -- the nonlinear part that second order sees
  secS, secO :: (Double, Double) -> Double
  secS (x, y) = x * x * y + x / y - y * y * y
  secO (x, y) = sub (add (mul (mul x x) y) (dv x y)) (mul (mul y y) y)

  -- a derivative taken inside: d/dy (y y x + 3 y x) at y = x
  innerS, innerO :: Double -> Double
  innerS x = derivative (\y -> y * y * x + 3 * y * x) x
  innerO x = derivative (\y -> add (mul (mul y y) x) (mul (mul 3 y) x)) x
  |]

small :: Gen Double
small = choose (-3, 3)

away :: Gen Double
away = oneof [choose (-3, -0.5), choose (0.5, 3)]

triple :: Gen Double -> Gen (Double, Double, Double)
triple g = (,,) <$> g <*> g <*> g

spec :: Spec
spec = describe "arithmetic expressions as statements" $ do
  it "three leaves and a literal: the op-by-op value to the bit, its gradient, central differences" $
    property $ forAll (triple small) $ agrees polyS polyO $(grad 'polyS) $(grad 'polyO)
  it "a repeated leaf, negative literals and negate" $
    property $ forAll ((,) <$> small <*> small) $ agrees repS repO $(grad 'repS) $(grad 'repO)
  it "one leaf, and four leaves" $
    property $ forAll ((,) <$> small <*> small) (agrees oneS oneO $(grad 'oneS) $(grad 'oneO))
      .&&. forAll ((,) <$> ((,) <$> small <*> small) <*> ((,) <$> small <*> small))
             (agrees fourS fourO $(grad 'fourS) $(grad 'fourO))
  it "division" $
    property $ forAll ((,,) <$> small <*> small <*> away) $ \(x, y, z) ->
      abs (y * z + 4) > 0.5 ==> agrees divS divO $(grad 'divS) $(grad 'divO) (x, y, z)
  it "six leaves, the most one statement takes" $
    property $ forAll ((,) <$> triple small <*> triple small) $ agrees sixS sixO $(grad 'sixS) $(grad 'sixO)
  it "nine leaves: split into statements" $
    property $ forAll ((,) <$> vectorOf 8 small <*> small) $ agrees nineS nineO $(grad 'nineS) $(grad 'nineO)
  it "leaves that are calls, and a let-bound leaf" $
    property $ forAll (triple (choose (-1.5, 1.5))) $ agrees callS callO $(grad 'callS) $(grad 'callO)
  it "leaves whose values are constants" $
    property $ forAll ((,) <$> ((,) <$> small <*> small) <*> choose (0, 5)) $
      agrees constS constO $(grad 'constS) $(grad 'constO)
  it "polymorphic code at Int (plain arithmetic) and at the dual scalar" $
    property $ forAll ((,) <$> ((,) <$> small <*> small) <*> choose (-4, 4)) $
      agrees polyIntS polyIntO $(grad 'polyIntS) $(grad 'polyIntO)
  it "second order: the Hessian of the op-by-op program, to the bit" $
    property $ forAll ((,) <$> small <*> away) $ \p ->
      let flat = concatMap (\(a, b) -> [a, b])
      in flat ($(hessian 'secS) p) === flat ($(hessian 'secO) p)
  it "a derivative taken inside: the op-by-op value and gradient" $
    property $ forAll small $ \x ->
      fst ($(differentiate 'innerS) x) === fst ($(differentiate 'innerO) x)
        .&&. sameGrad 1e-12 [$(grad 'innerS) x] [$(grad 'innerO) x]
  it "records one node per active leaf but the first, one call for the whole expression" $ do
    let six [a, b, c, d, e, f] = sixS'drw ((a, b, c), (d, e, f))
        six _ = error "six inputs"
        poly [x, y, z] = polyS'drw (x, y, z)
        poly _ = error "three inputs"
    nodesOf 1 six [1, 2, 3, 4, 5, 6] `shouldReturn` 5
    nodesOf 1 poly [1, 2, 3] `shouldReturn` 2
    nodesOf 1 (\xs -> oneS'drw (head xs, head xs)) [1] `shouldReturn` 1
    nodesOf 1 (\xs -> case xs of
                       [a, b, c, d] -> fourS'drw ((a, b), (c, d))
                       _ -> error "four inputs") [1, 2, 3, 4] `shouldReturn` 3
    -- second order: the operations one by one (four multiplications and
    -- adds, the literal's product included); a tape kept for replay
    -- records the statement with its program (Taped.hs)
    nodesOf 2 poly [1, 2, 3] `shouldReturn` 5
  it "takes as many leaves as the engine's call (DR_FE_STMT_MAX)" $
    fromIntegral c_fe_stmt_max `shouldBe` stmtMaxLeaves
