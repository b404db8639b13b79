{-# LANGUAGE DeriveGeneric #-}
{-# LANGUAGE DeriveTraversable #-}
{-# OPTIONS_GHC -Wno-type-defaults #-}
{-# LANGUAGE RankNTypes #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# LANGUAGE TemplateHaskell #-}
-- | "Numeric.DualRev.AD", the overloaded API with @ad@'s names.  Each
-- function is written once, polymorphically, and differentiated both ways:
-- the overloaded results are held to the Template Haskell front end's on
-- the same function (1e-12 relative), and both to references that share
-- no code with the engine: central finite differences, the forward-mode
-- dual number of "Check", closed forms.  Then @ad@'s documented examples,
-- nesting (perturbation confusion, closures over outer variables, three
-- levels), Newton's method and gradient descent (hand-computed iterates),
-- Float, containers other than lists, threads, constants.
module Overloaded (spec) where

import Control.Comonad.Cofree (Cofree (..))
import Control.Concurrent (forkIO, getNumCapabilities, newEmptyMVar, putMVar, setNumCapabilities, takeMVar)
import Control.Exception (SomeException, evaluate, try)
import Control.Monad (forM)
import Data.Foldable (toList)
import Data.List (transpose)
import Numeric (log1mexp, log1pexp)
import Foreign.C.Types (CDouble (..))
import qualified Data.Map.Strict as Map
import Test.Hspec
import Test.QuickCheck

import Check
import qualified Numeric.DualRev as TH
import qualified Numeric.DualRev.AD as A
import qualified Numeric.DualRev.AD.Mode.Reverse as R
import qualified Numeric.DualRev.AD.Mode.Reverse.Double as RD
import qualified Numeric.DualRev.AD.Newton as N
import qualified Numeric.DualRev.AD.Halley as H
import qualified Numeric.DualRev.AD.Jet as J
import qualified Numeric.DualRev.AD.Rank1.Halley as R1H
import qualified Numeric.DualRev.AD.Double as ADD
import qualified Numeric.DualRev.AD.Mode.Dense as DN
import qualified Numeric.DualRev.AD.Mode.Forward as F
import qualified Numeric.DualRev.AD.Mode.Forward.Double as FD
import qualified Numeric.DualRev.AD.Mode.Kahn.Double as KD
import qualified Numeric.DualRev.AD.Mode.Sparse as S
import qualified Numeric.DualRev.AD.Mode.Sparse.Double as SD
import qualified Numeric.DualRev.AD.Mode.Tower.Double as TD
import qualified Numeric.DualRev.AD.Mode.Kahn as K
import qualified Numeric.DualRev.AD.Mode.Tower as T
import qualified Numeric.DualRev.AD.Newton.Double as ND
import qualified Numeric.DualRev.AD.Rank1 as R1
import qualified Numeric.DualRev.AD.Rank1.Dense as R1D
import qualified Numeric.DualRev.AD.Rank1.Dense.Representable as R1DR
import qualified Numeric.DualRev.AD.Mode.Dense.Representable as DNR
import Data.Distributive (Distributive (..))
import Data.Functor.Rep (Representable, distributeRep)
import GHC.Generics (Generic1)
import qualified Numeric.DualRev.AD.Rank1.Forward as R1F
import qualified Numeric.DualRev.AD.Rank1.Forward.Double as R1FD
import qualified Numeric.DualRev.AD.Rank1.Kahn as R1K
import qualified Numeric.DualRev.AD.Rank1.Kahn.Float as R1KF
import qualified Numeric.DualRev.AD.Rank1.Newton as R1N
import qualified Numeric.DualRev.AD.Rank1.Sparse as R1S
import qualified Numeric.DualRev.AD.Rank1.Tower as R1T
import OverloadedDefs
import Numeric.DualRev.Internal.Run.Driver.Taped (tapedRecordings)

-- The functions: "OverloadedDefs".


data V3 a = V3 a a a
  deriving (Eq, Show, Functor, Foldable, Traversable)

------------------------------------------------------------------------------
-- Comparisons and references

closeL :: Double -> [Double] -> [Double] -> Bool
closeL tol xs ys = length xs == length ys && and (zipWith (closeRel tol) xs ys)

closeM :: Double -> [[Double]] -> [[Double]] -> Bool
closeM tol xs ys = length xs == length ys && and (zipWith (closeL tol) xs ys)

-- | Same shape and values within tol (relative, with the absolute floor of
-- 'closeRel').
agree :: Show x => Double -> String -> [Double] -> [Double] -> x -> Property
agree tol what got want x =
  counterexample (what ++ " at " ++ show x ++ ":\n  got  " ++ show got ++ "\n  want " ++ show want)
    (closeL tol got want)

-- | The Jacobian of a vector function by central differences, one row per
-- output.  Used on gradients (exact to rounding), so one step suffices.
fdJacobian :: ([Double] -> [Double]) -> [Double] -> [[Double]]
fdJacobian f xs = transpose
  [ zipWith (\a b -> (a - b) / (2 * h)) (f (at (xi + h))) (f (at (xi - h)))
  | (i, xi) <- zip [0 :: Int ..] xs
  , let h = 1e-5 * max 1 (abs xi)
        at v = [if j == i then v else xj | (j, xj) <- zip [0 ..] xs] ]

-- | A derivative against a finite difference of derivatives: truncation
-- O(h^2) and rounding of the differenced values over h.
closeFDM :: [[Double]] -> [[Double]] -> Bool
closeFDM got want = length got == length want && and (zipWith row got want)
  where
    size = 1 + maximum (0 : map abs (concat want))
    row a b = length a == length b && and (zipWith (\u v -> abs (u - v) <= 1e-5 * (size + abs u)) a b)

-- | Runs the actions on threads of their own, all at once, and collects
-- their results (an exception becomes Left).
concurrently :: [IO a] -> IO [Either SomeException a]
concurrently acts = do
  vars <- forM acts $ \act -> do
    v <- newEmptyMVar
    _ <- forkIO (try act >>= putMVar v)
    pure v
  mapM takeMVar vars

withCapabilities :: Int -> IO a -> IO a
withCapabilities n act = do
  n0 <- getNumCapabilities
  setNumCapabilities n
  r <- act
  setNumCapabilities n0
  pure r

------------------------------------------------------------------------------
-- Generators

genPoly :: Gen (Poly, [Double])
genPoly = do
  n <- choose (1, 4)
  k <- choose (1, 6)
  p <- vectorOf k ((,) <$> choose (-5, 5) <*> vectorOf n (choose (0, 3)))
  xs <- vectorOf n dbl
  pure (p, xs)

genMlp :: Gen [Double]
genMlp = vectorOf 21 (choose (-1, 1))

-- | Away from ties for the maximum, where the derivative of a shifted sum
-- is still right but finite differences straddle the switch.
genLse :: Gen [Double]
genLse = listOf1N 6 (choose (-3, 3))

genV3 :: Gen (V3 Double)
genV3 = V3 <$> dbl <*> dbl <*> dbl

------------------------------------------------------------------------------

spec :: Spec
spec = describe "Overloaded" $ do
  gradients
  jacobians
  scalarDerivatives
  directional
  hessians
  nested
  adExamples
  newton
  descent
  constrained
  floats
  elementTypes
  towers
  higherOrders
  adModules
  logExps
  containers
  threads
  constants
  knownProblems

-- | grad, grad', gradWith, gradWith' of one polymorphic function against
-- the splice's gradient of the same function (1e-12), finite differences
-- and forward mode.
gradCase :: String -> Gen [Double] -> (forall a. (Ord a, Floating a) => [a] -> a)
         -> ([Double] -> [Double]) -> Spec
gradCase name gen f thGrad = do
  it (name ++ ": grad against the splice, finite differences and forward mode") $
    property $ forAll gen $ \xs ->
      agree 1e-12 "grad vs splice" (A.grad f xs) (thGrad xs) xs
      .&&. gradFwdProp f f (A.grad f) xs
  it (name ++ ": grad', gradWith, gradWith' agree with grad and the value") $
    property $ forAll gen $ \xs ->
      let g = A.grad f xs
          (v, g') = A.grad' f xs
          (v2, w') = A.gradWith' (,) f xs
      in counterexample "grad'" (closeRel 1e-14 v (f xs) .&&. g' == g)
         .&&. counterexample "gradWith" (A.gradWith (,) f xs == zip xs g)
         .&&. counterexample "gradWith'" (v2 == v .&&. w' == zip xs g)
         .&&. counterexample "gradWith combining" (A.gradWith (\x d -> x - 0.5 * d) f xs == zipWith (\x d -> x - 0.5 * d) xs g)

gradients :: Spec
gradients = describe "gradients" $ do
  it "random polynomials: grad against the splice, finite differences and forward mode" $
    property $ forAll genPoly $ \(p, xs) ->
      agree 1e-12 "grad vs splice" (A.grad (evalPoly p) xs) (snd ($(TH.grad 'polyD) (p, xs))) (p, xs)
      .&&. gradFwdProp (evalPoly p) (evalPoly p) (A.grad (evalPoly p)) xs
  it "random polynomials: the value of grad' and the monomials' closed forms" $
    property $ forAll genPoly $ \(p, xs) ->
      let (v, g) = A.grad' (evalPoly p) xs
          closed = [ sum [ fromInteger c * fromIntegral ki * xi ^^ (ki - 1)
                           * product [xj ^ kj | (j, xj, kj) <- zip3 [0 :: Int ..] xs ks, j /= i]
                         | (c, ks) <- p, let ki = ks !! i, ki > 0 ]
                   | (i, xi) <- zip [0 ..] xs ]
      in counterexample (show (v, g, closed)) (closeRel 1e-12 v (evalPoly p xs) && closeL 1e-12 g closed)
  gradCase "trigonometric" (listOf1N 5 dbl) trig $(TH.grad 'trigD)
  gradCase "logSumExp" genLse logSumExp $(TH.grad 'lseD)
  it "logSumExp: the gradient is the softmax" $
    property $ forAll genLse $ \xs ->
      let es = map exp xs
      in agree 1e-12 "softmax" (A.grad logSumExp xs) (map (/ sum es) es) xs
  gradCase "a 3-4-1 tanh network (21 parameters)" genMlp mlp $(TH.grad 'mlpD)
  it "the Mode.Reverse and Mode.Reverse.Double modules give the same gradients" $
    property $ forAll (listOf1N 5 dbl) $ \xs ->
      R.grad trig xs == A.grad trig xs .&&. RD.grad trig xs == A.grad trig xs
      .&&. RD.grad' mlp (take 21 (cycle xs)) == A.grad' mlp (take 21 (cycle xs))

jacobians :: Spec
jacobians = describe "jacobians" $ do
  let tallGen = vecOf 2 dbl
      wideGen = listOf1N 6 dbl
  it "tall (2 inputs, 5 outputs): against the splice and finite differences" $
    property $ forAll tallGen $ \xs ->
      counterexample "splice" (closeM 1e-12 (A.jacobian tall xs) ($(TH.jacobian 'tallD) xs))
      .&&. jacProp tall (A.jacobian tall) xs
  it "wide (up to 6 inputs, 2 outputs): against the splice and finite differences" $
    property $ forAll wideGen $ \xs ->
      counterexample "splice" (closeM 1e-12 (A.jacobian wide xs) ($(TH.jacobian 'wideD) xs))
      .&&. jacProp wide (A.jacobian wide) xs
  it "jacobian', jacobianWith, jacobianWith' agree with jacobian and the values" $
    property $ forAll (oneof [tallGen, wideGen]) $ \xs ->
      let f :: Floating a => [a] -> [a]
          f = if length xs == 2 then tall else wide
          j = A.jacobian f xs
          j' = A.jacobian' f xs
      in counterexample "jacobian'" (map snd j' == j .&&. closeL 1e-14 (map fst j') (f xs))
         .&&. counterexample "jacobianWith" (A.jacobianWith (,) f xs == map (zip xs) j)
         .&&. counterexample "jacobianWith'" (A.jacobianWith' (,) f xs == zip (map fst j') (map (zip xs) j))
  it "jacobianT and jacobianWithT are the transposes" $
    property $ forAll (oneof [tallGen, wideGen]) $ \xs ->
      let f :: Floating a => [a] -> [a]
          f = if length xs == 2 then tall else wide
      in A.jacobianT f xs == transpose (A.jacobian f xs)
         .&&. A.jacobianWithT (,) f xs == transpose (A.jacobianWith (,) f xs)
  it "100 inputs (more than the range call's stack array): each row is that output's gradient" $
    property $ forAll (vecOf 100 dbl) $ \xs ->
      let outs3 :: Floating a => [a] -> [a]
          outs3 v = [ sum (zipWith (*) v (map fromIntegral [1 .. length v]))
                    , sum (map sin v)
                    , product (take 5 v) ]
          j = A.jacobian outs3 xs
      in counterexample "rows against grad" (closeM 1e-12 j [A.grad (\v -> outs3 v !! k) xs | k <- [0 .. 2]])
         .&&. counterexample "first row" (closeL 1e-12 (head j) (map fromIntegral [1 .. 100 :: Int]))
         .&&. counterexample "jacobianT" (A.jacobianT outs3 xs == transpose j)
  it "no outputs, or no inputs" $ do
    A.jacobian (\_ -> []) [1, 2 :: Double] `shouldBe` []
    A.jacobian (\v -> [sum v + 1, 2]) ([] :: [Double]) `shouldBe` [[], []]
    A.jacobianT (\v -> [sum v + 1, 2]) ([] :: [Double]) `shouldBe` []
  it "a square Jacobian: the rows of a rotation by an input angle" $
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, t) ->
      let rot v = let [a, b, c] = v in [a * cos c - b * sin c, a * sin c + b * cos c, c]
          want = [ [cos t, negate (sin t), negate x * sin t - y * cos t]
                 , [sin t, cos t, x * cos t - y * sin t]
                 , [0, 0, 1] ]
      in counterexample (show (A.jacobian rot [x, y, t])) (closeM 1e-14 (A.jacobian rot [x, y, t]) want)

scalarDerivatives :: Spec
scalarDerivatives = describe "derivatives of one scalar" $ do
  it "diff and diff' against the splice, finite differences and forward mode" $
    property $ forAll dbl $ \x ->
      let (v, d) = A.diff' scalar x
      in closeRel 1e-12 (A.diff scalar x) ($(TH.grad 'scalarD) x)
         .&&. d == A.diff scalar x .&&. closeRel 1e-14 v (scalar x)
         .&&. gradFwdProp scalar scalar (A.diff scalar) x
  it "diffF and diffF' against the splice and the closed forms" $
    property $ forAll dbl $ \x ->
      let d = A.diffF curve x
          want = [negate (sin x), sin x + x * cos x, -2 * x * exp (negate (x * x))]
      in agree 1e-12 "splice" d ($(TH.jacobian 'curveD) x) x
         .&&. agree 1e-14 "closed form" d want x
         .&&. A.diffF' curve x == zip (curve x) d

directional :: Spec
directional = describe "directional derivatives" $ do
  let gen = do
        n <- choose (1, 6)
        (,) <$> vecOf n dbl <*> vecOf n dbl
  it "du and du' against the splice's jvp and the gradient's dot product" $
    property $ forAll gen $ \(xs, vs) ->
      let (v, d) = A.du' trig (zip xs vs)
          viaGrad = sum (zipWith (*) (A.grad trig xs) vs)
      in counterexample (show (d, viaGrad)) (closeRel 1e-12 d viaGrad)
         .&&. d == A.du trig (zip xs vs) .&&. closeRel 1e-14 v (trig xs)
  it "duF and duF' against the splice's jvp and the Jacobian times the direction" $
    property $ forAll gen $ \(xs, vs) ->
      let d = A.duF wide (zip xs vs)
          (yTH, dTH) = $(TH.jvp 'wideD) xs vs
          viaJac = [sum (zipWith (*) r vs) | r <- A.jacobian wide xs]
      in agree 1e-12 "splice" d dTH (xs, vs) .&&. agree 1e-12 "J v" d viaJac (xs, vs)
         .&&. counterexample "duF'" (map fst (A.duF' wide (zip xs vs)) == yTH .&&. map snd (A.duF' wide (zip xs vs)) == d)
  it "a tall duF: one derivative per output, against finite differences" $
    property $ forAll ((,) <$> vecOf 2 dbl <*> vecOf 2 (choose (-1, 1))) $ \(xs, vs) ->
      let d = A.duF tall (zip xs vs)
          h = 1e-6
          fd = zipWith (\a b -> (a - b) / (2 * h)) (tall (zipWith (\x v -> x + h * v) xs vs))
                                                   (tall (zipWith (\x v -> x - h * v) xs vs))
      in counterexample (show (d, fd)) (closeFDM [d] [fd])

hessians :: Spec
hessians = describe "hessians" $ do
  let gen = listOf1N 5 dbl
  it "hessian against the splice and finite differences of the gradient; symmetric" $
    property $ forAll gen $ \xs ->
      let h = A.hessian trig xs
      in counterexample ("splice " ++ show (h, $(TH.hessian 'trigD) xs)) (closeM 1e-12 h ($(TH.hessian 'trigD) xs))
         .&&. counterexample ("finite differences " ++ show (h, fdJacobian (A.grad trig) xs))
                (closeFDM h (fdJacobian (A.grad trig) xs))
         .&&. counterexample "symmetry" (closeM 1e-12 h (transpose h))
  it "hessian of the network against finite differences of the gradient" $
    property $ withMaxSuccess 20 $ forAll genMlp $ \ps ->
      closeFDM (A.hessian mlp ps) (fdJacobian (A.grad mlp) ps)
  it "hessian of random polynomials against finite differences of the gradient" $
    property $ forAll genPoly $ \(p, xs) ->
      closeFDM (A.hessian (evalPoly p) xs) (fdJacobian (A.grad (evalPoly p)) xs)
  it "hessian' is the value, the gradient and the rows" $
    property $ forAll gen $ \xs ->
      let (v, gh) = A.hessian' trig xs
      in closeRel 1e-14 v (trig xs) .&&. closeL 1e-12 (map fst gh) (A.grad trig xs)
         .&&. map snd gh == A.hessian trig xs
  it "hessian of x^2 y + y^3 / 3 at any point: [[2y, 2x], [2x, 2y]]" $
    property $ forAll ((,) <$> choose (-100, 100) <*> choose (-100, 100)) $ \(x, y) ->
      let h = A.hessian (\v -> let [a, b] = v in a * a * b + b * b * b / 3) [x, y]
      in counterexample (show h) $ closeM 1e-14 h [[2 * y, 2 * x], [2 * x, 2 * y]]
  it "hessianF: one Hessian per output, against the hessian of each output and finite differences" $
    property $ forAll (vecOf 2 dbl) $ \xs ->
      let hs = A.hessianF tall xs
          each = [A.hessian (\v -> tall v !! k) xs | k <- [0 .. 4]]
          fd = [fdJacobian (\v -> A.jacobian tall v !! k) xs | k <- [0 .. 4]]
      in counterexample (show hs) $
           length hs == 5 .&&. and (zipWith (closeM 1e-12) hs each) .&&. and (zipWith closeFDM hs fd)
  it "hessianProduct and hessianProduct' against the splice's hvp and H v" $
    property $ forAll (gen >>= \xs -> (,) xs <$> vecOf (length xs) dbl) $ \(xs, vs) ->
      let hv = A.hessianProduct trig (zip xs vs)
          hv' = A.hessianProduct' trig (zip xs vs)
          viaH = [sum (zipWith (*) r vs) | r <- A.hessian trig xs]
      in agree 1e-12 "splice" hv ($(TH.hvp 'trigD) xs vs) (xs, vs)
         .&&. agree 1e-12 "H v" hv viaH (xs, vs)
         .&&. counterexample "hessianProduct'" (map snd hv' == hv .&&. closeL 1e-12 (map fst hv') (A.grad trig xs))

nested :: Spec
nested = describe "nested differentiation" $ do
  it "diff (\\x -> x * diff (\\y -> auto x + y) 1) 1 is 1 (no perturbation confusion)" $
    A.diff (\x -> x * A.diff (\y -> A.auto x + y) 1) (1 :: Double) `shouldBe` 1
  it "the same at any x" $
    property $ \x -> A.diff (\u -> u * A.diff (\y -> A.auto u + y) 1) x == (1 :: Double)
  it "the same with the inner input the outer variable: d/dx (x * d/dy (x y)) at y = x is 2 x" $
    -- the inner derivative is auto x, whatever the inner input is
    property $ \x -> A.diff (\u -> u * A.diff (\y -> A.auto u * y) u) x == 2 * (x :: Double)
  it "grad inside grad, the inner inputs the outer variables: the Hessian's row sums, and 2 H g" $
    property $ forAll (listOf1N 5 dbl) $ \xs ->
      let h = A.hessian trig xs
          g = A.grad trig xs
      in agree 1e-12 "row sums" (A.grad (sum . A.grad trig) xs) (map sum h) xs
         .&&. agree 1e-12 "2 H g" (A.grad (\v -> let gv = A.grad trig v in sum (zipWith (*) gv gv)) xs)
                (map (\r -> 2 * sum (zipWith (*) r g)) h) xs
  it "grad inside grad, inner inputs the outer variables and a closure over them too" $
    -- inner: (v . w) (sum w), its gradient at w = v is v S + |v|^2 (S = sum v);
    -- the sum S^2 + n |v|^2 has the gradient 2 S + 2 n v
    property $ forAll (listOf1N 5 dbl) $ \xs ->
      let f :: [A.Reverse s Double] -> A.Reverse s Double
          f v = sum (A.grad (\w -> sum (zipWith (*) (map A.auto v) w) * sum w) v)
          n = fromIntegral (length xs)
      in agree 1e-12 "gradient" (A.grad f xs) (map (\x -> 2 * sum xs + 2 * n * x) xs) xs
  it "grad inside grad, inner inputs constants closing over outer variables: [4 c x + y, x]" $
    -- x * d/dz (x z^2 + y z) at z = c = x (2 c x + y)
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, c) ->
      let f :: [A.Reverse s Double] -> A.Reverse s Double
          f v = let [a, b] = v in a * head (A.grad (\zs -> A.auto a * head zs * head zs + A.auto b * head zs) [A.auto c])
      in agree 1e-12 "closure" (A.grad f [x, y]) [4 * c * x + y, x] (x, y, c)
  it "the same with a literal constant input and the closure met first or last" $ do
    A.grad (\v -> let [a, b] = v in a * head (A.grad (\zs -> let [z] = zs in A.auto a * z * z + A.auto b * z) [3])) [1, 2]
      `shouldBe` [14, 1 :: Double]
    A.grad (\v -> let [a, b] = v in a * head (A.grad (\zs -> let [z] = zs in z * z * A.auto a + z * A.auto b) [3])) [1, 2]
      `shouldBe` [14, 1 :: Double]
  it "an inner function returning the outer variable untouched: derivative 0 inside, 1 outside" $ do
    A.grad (\v -> A.diff (\_ -> A.auto (head v)) 1) [3] `shouldBe` [0 :: Double]
    A.grad (\v -> fst (A.diff' (\_ -> A.auto (head v)) 1)) [3] `shouldBe` [1 :: Double]
  it "three levels: the third derivative of sin (x^2)" $
    property $ forAll dbl $ \x ->
      let d3 = A.diff (\u -> A.diff (\w -> A.diff (\z -> sin (z * z)) w) u) x
      in counterexample (show d3) $ closeRel 1e-12 d3 (-12 * x * sin (x * x) - 8 * x ^ (3 :: Int) * cos (x * x))
  it "three levels with constants at the inner two, closing over both outer levels: 12 x b c^2" $
    -- d/dx d/dy d/dz (x^2 y^2 z^3) at z = c, y = b: the two inner levels
    -- start on tapes of their own and meet the outer variables in either order
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, b, c) ->
      let f1, f2 :: A.Reverse s Double -> A.Reverse s Double
          f1 u = A.diff (\y -> A.diff (\z -> A.auto (A.auto u) * A.auto (A.auto u) * A.auto y * A.auto y * z * z * z) (A.auto (A.auto c))) (A.auto b)
          f2 u = A.diff (\y -> A.diff (\z -> z * z * z * A.auto y * A.auto y * A.auto (A.auto u) * A.auto (A.auto u)) (A.auto (A.auto c))) (A.auto b)
          want = 12 * x * b * c * c
      in counterexample (show (A.diff f1 x, A.diff f2 x, want)) $
           closeRel 1e-12 (A.diff f1 x) want .&&. closeRel 1e-12 (A.diff f2 x) want
  it "hessian inside grad, active inputs: the gradient of the sum of the Hessian of x^3 y + x y^2" $
    -- the sum is 6 x y + 6 x^2 + 4 y + 2 x
    property $ forAll (vecOf 2 dbl) $ \xs ->
      let [x, y] = xs
          cubic v = let [a, b] = v in a * a * a * b + a * b * b
      in agree 1e-12 "gradient" (A.grad (sum . concat . A.hessian cubic) xs) [6 * y + 12 * x + 2, 6 * x + 4] xs
  it "hessian inside grad, constant inputs closing over the outer variable: d/da of the Hessian sum of a x^2 y" $
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(a, p, q) ->
      let f :: [A.Reverse s Double] -> A.Reverse s Double
          f v = sum (concat (A.hessian (\w -> let [x, y] = w in A.auto (head v) * x * x * y) [A.auto p, A.auto q]))
      in agree 1e-12 "gradient" (A.grad f [a]) [2 * q + 4 * p] (a, p, q)
         .&&. agree 1e-12 "value" [fst (A.grad' f [a])] [a * (2 * q + 4 * p)] (a, p, q)
  it "hessianProduct inside grad: constant inputs closing over the outer variable" $
    -- H of a x^2 y at (p, q) times (1, 1) is (2 a q + 2 a p, 2 a p); its sum's derivative in a
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(a, p, q) ->
      let f :: [A.Reverse s Double] -> A.Reverse s Double
          f v = sum (A.hessianProduct (\w -> let [x, y] = w in A.auto (head v) * x * x * y) [(A.auto p, 1), (A.auto q, 1)])
      in agree 1e-12 "gradient" (A.grad f [a]) [2 * q + 4 * p] (a, p, q)
  it "extremum inside diff: the derivative of an argmin in its parameter" $
    -- argmin over x of cosh (x - a) + x^2 / 2 solves sinh (x - a) + x = 0;
    -- implicitly dx/da = cosh (x - a) / (cosh (x - a) + 1)
    property $ forAll (choose (-2, 2)) $ \a ->
      let argmin u = last (take 30 (N.extremum (\z -> cosh (z - A.auto u) + z * z / 2) 0))
          x = argmin a
          want = cosh (x - a) / (cosh (x - a) + 1)
      in counterexample (show (x, A.diff argmin a, want)) $
           abs (sinh (x - a) + x) < 1e-12 .&&. closeRel 1e-9 (A.diff argmin a) want

adExamples :: Spec
adExamples = describe "ad's documented examples" $ do
  it "grad (\\[x,y,z] -> x*y+z) [1,2,3] is [2,1,1]; grad' gives 5" $ do
    A.grad (\v -> let [x, y, z] = v in x * y + z) [1, 2, 3] `shouldBe` [2, 1, 1 :: Double]
    A.grad' (\v -> let [x, y, z] = v in x * y + z) [1, 2, 3] `shouldBe` (5, [2, 1, 1 :: Double])
    RD.grad (\v -> let [x, y, z] = v in x * y + z) [1, 2, 3] `shouldBe` [2, 1, 1 :: Double]
  it "grad (\\[x,y] -> x**y) [0,2]: 0 in x; in y 0 where ad documents NaN (0 ** y is 0 for y > 0)" $ do
    let [gx, gy] = A.grad (\v -> let [x, y] = v in x ** y) [0, 2 :: Double]
    gx `shouldBe` 0
    gy `shouldBe` 0
  it "jacobian (\\[x,y] -> [y,x,x*y]) [2,1] and jacobian'" $ do
    A.jacobian (\v -> let [x, y] = v in [y, x, x * y]) [2, 1] `shouldBe` [[0, 1], [1, 0], [1, 2 :: Double]]
    A.jacobian' (\v -> let [x, y] = v in [y, x, x * y]) [2, 1]
      `shouldBe` [(1, [0, 1]), (2, [1, 0]), (2, [1, 2 :: Double])]
  it "diff sin 0, diff' sin 0, diff' exp 0" $ do
    A.diff sin 0 `shouldBe` (1 :: Double)
    A.diff' sin 0 `shouldBe` (0, 1 :: Double)
    A.diff' exp 0 `shouldBe` (1, 1 :: Double)
  it "diffF (\\a -> [sin a, cos a]) 0 and diffF'" $ do
    A.diffF (\a -> [sin a, cos a]) 0 `shouldBe` [1, 0 :: Double]
    A.diffF' (\a -> [sin a, cos a]) 0 `shouldBe` [(0, 1), (1, 0 :: Double)]
  it "hessian (\\[x,y] -> x*y) [1,2]" $
    A.hessian (\v -> let [x, y] = v in x * y) [1, 2] `shouldBe` [[0, 1], [1, 0 :: Double]]
  it "hessianF (\\[x,y] -> [x*y,x+y,exp x*cos y]) [1,2]" $ do
    let hs = A.hessianF (\v -> let [x, y] = v in [x * y, x + y, exp x * cos y]) [1, 2 :: Double]
        want = [ [[0, 1], [1, 0]], [[0, 0], [0, 0]]
               , [[-1.1312043837568135, -2.4717266720048188], [-2.4717266720048188, 1.1312043837568135]] ]
    length hs `shouldBe` 3
    and (zipWith (closeM 1e-14) hs want) `shouldBe` True
  it "the examples of Numeric.DualRev.AD's own documentation" $ do
    A.grad (\v -> let [x, y] = v in x * y + sin x) [1, 2] `shouldBe` [2 + cos 1, 1 :: Double]
    A.hessian (\v -> let [x, y] = v in x * x * y) [1, 2] `shouldBe` [[4, 2], [2, 0 :: Double]]
  it "findZero (\\x -> x^2 - 4) 1" $
    take 10 (N.findZero (\x -> x ^ (2 :: Int) - 4) 1)
      `shouldBe` [1.0, 2.5, 2.05, 2.000609756097561, 2.0000000929222947, 2.000000000000002, 2.0 :: Double]
  it "inverse sqrt 1 (sqrt 10), fixedPoint cos 1, extremum cos 1" $ do
    last (take 10 (N.inverse sqrt 1 (sqrt 10))) `shouldSatisfy` closeRel 1e-15 (10 :: Double)
    last (take 10 (N.fixedPoint cos 1)) `shouldSatisfy` closeRel 1e-15 (0.7390851332151607 :: Double)
    last (take 10 (N.extremum cos 1)) `shouldSatisfy` (\x -> abs x <= (1e-15 :: Double))
  it "conjugateGradientDescent on Rosenbrock from [0, 0]: below 0.1 after 5 steps" $ do
    let sq x = x * x
        rosenbrock v = let [x, y] = v in sq (1 - x) + 100 * sq (y - sq x)
    rosenbrock [0, 0 :: Double] `shouldBe` 1
    rosenbrock (N.conjugateGradientDescent rosenbrock [0, 0 :: Double] !! 5) `shouldSatisfy` (< 0.1)

newton :: Spec
newton = describe "Newton's method" $ do
  -- findZero's list ends where two iterates are equal; Newton's method can
  -- also end up alternating between two neighbouring floats, as in ad, and
  -- then the list goes on: only its first 60 elements are looked at
  it "findZero of x^2 - c: iterates of findZeroNoEq, converging to sqrt c" $
    property $ forAll (choose (0.1, 100)) $ \c ->
      let zs = take 60 (N.findZero (\x -> x * x - A.auto c) 1)
          more = take 60 (N.findZeroNoEq (\x -> x * x - A.auto c) 1)
      in counterexample (show zs) $
           closeRel 1e-15 (last zs) (sqrt c) .&&. closeRel 1e-15 (last more) (sqrt c)
           .&&. take (length zs) more == zs
  it "one Newton step by hand: x - f x / f' x" $
    property $ forAll (choose (0.5, 3)) $ \x0 ->
      let f x = exp x - 3 * x
      in N.findZeroNoEq f x0 !! 1 `shouldSatisfy` closeRel 1e-15 (x0 - (exp x0 - 3 * x0) / (exp x0 - 3))
  it "inverse and inverseNoEq of x^3 + x: the point where it takes y" $
    property $ forAll (choose (-10, 10)) $ \y ->
      let xs = take 60 (N.inverse (\u -> u * u * u + u) 0 y)
          x = last xs
      in counterexample (show xs) $
           closeRel 1e-13 (x * x * x + x) y .&&. take (length xs) (N.inverseNoEq (\u -> u * u * u + u) 0 y) == xs
  it "fixedPoint and fixedPointNoEq of cos from any start in [0, 1]" $
    property $ forAll (choose (0, 1)) $ \x0 ->
      let xs = take 60 (N.fixedPoint cos x0)
      in closeRel 1e-15 (last xs) (cos (last xs)) .&&. take (length xs) (N.fixedPointNoEq cos x0) == xs
  it "extremum and extremumNoEq: the minimum of (x - a)^4 + (x - a)^2" $
    property $ forAll (choose (-5, 5)) $ \a ->
      let f :: A.Reverse s Double -> A.Reverse s Double
          f x = (x - A.auto a) ^ (4 :: Int) + (x - A.auto a) ^ (2 :: Int)
          xs = take 60 (N.extremum f 0)
      in counterexample (show xs) $
           closeRel 1e-12 (last xs) a .&&. take (length xs) (N.extremumNoEq f 0) == xs

descent :: Spec
descent = describe "gradient descent" $ do
  it "gradientDescent on x^2 + 2 y^2 from [1, 1]: steps of 0.1 times the gradient" $ do
    let x1 = [1 - 0.1 * 2, 1 - 0.1 * 4]
        x2 = [head x1 - 0.1 * 2 * head x1, x1 !! 1 - 0.1 * 4 * (x1 !! 1)]
        its = take 2 (A.gradientDescent (\v -> let [x, y] = v in x * x + 2 * y * y) [1, 1 :: Double])
    closeM 1e-15 its [x1, x2] `shouldBe` True
  it "gradientDescent halves a step that would go uphill: 15 x^2 from 1 goes to -0.5, 0.25" $
    closeL 1e-15 (map head (take 3 (A.gradientDescent (\v -> 15 * head v * head v) [1 :: Double])))
      [-0.5, 0.25, -0.125] `shouldBe` True
  it "gradientDescent doubles the step after 11 downhill steps: x^2 from 1" $ do
    let its = map head (take 13 (A.gradientDescent (\v -> head v * head v) [1 :: Double]))
        want = [0.8 ^ k | k <- [1 .. 11 :: Int]] ++ [0.8 ^ (11 :: Int) * 0.6, 0.8 ^ (11 :: Int) * 0.36]
    closeL 1e-14 its want `shouldBe` True
  it "gradientDescent stops where the gradient is zero" $
    A.gradientDescent (\v -> head v * head v) [0 :: Double] `shouldBe` []
  it "gradientDescent never goes uphill and gets lower (Rosenbrock, random starts)" $
    property $ forAll (vecOf 2 dbl) $ \x0 ->
      let rosen v = let [x, y] = v in (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x)
          vals = map rosen (x0 : take 200 (A.gradientDescent rosen x0))
      in counterexample (show (take 5 vals)) $
           and (zipWith (>=) vals (drop 1 vals)) .&&. last vals < head vals
  it "gradientDescent records its function once and replays it, where no comparison flips" $ do
    -- each step's gradient is gradWith''s at that point, bit for bit: the
    -- same loop written out with gradWith' gives the same points
    let f v = let [x, y] = v in max (x * x) (0.5 * y) + abs (x - y) + 2 * y * y
        byHand x0 = go x0 fx0 g0 0.1 (0 :: Int)
          where
            (fx0, g0) = A.gradWith' (,) f x0
            go x fx xg eta i
              | eta == 0 = []
              | fx1 > fx = go x fx xg (eta / 2) 0
              | all ((== 0) . snd) xg = []
              | otherwise = x1 : if i == 10 then go x1 fx1 xg1 (eta * 2) 0 else go x1 fx1 xg1 eta (i + 1)
              where
                x1 = fmap (\(xi, gi) -> xi - eta * gi) xg
                (fx1, xg1) = A.gradWith' (,) f x1
    r0 <- tapedRecordings
    let its = take 150 (A.gradientDescent f [1.3, -0.7 :: Double])
    length its `shouldBe` 150
    r1 <- tapedRecordings
    show its `shouldBe` show (take 150 (byHand [1.3, -0.7 :: Double]))
    -- (every step takes at least one gradient; the recordings are where a
    -- comparison flipped)
    (r1 - r0) `shouldSatisfy` (\k -> k >= 1 && k < 40)
  it "conjugateGradientDescent records its function once (Rosenbrock)" $ do
    let rosen v = let [x, y] = v in (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x)
    r0 <- tapedRecordings
    let its = take 6 (A.conjugateGradientDescent rosen [0, 0 :: Double])
    length its `shouldBe` 6
    r1 <- tapedRecordings
    (r1 - r0) `shouldBe` 1
  it "gradientAscent is gradientDescent of the negation" $
    property $ forAll (listOf1N 4 dbl) $ \x0 ->
      take 20 (A.gradientAscent (negate . trig) x0) == take 20 (A.gradientDescent trig x0)
  it "stochasticGradientDescent: steps of 0.001 times each example's gradient, in turn" $ do
    let loss (a, b) v = (head v * A.auto a - A.auto b) ^ (2 :: Int)
        examples = [(1, 2), (2, 3)] :: [(Double, Double)]
        step (a, b) w = w - 0.001 * (2 * (w * a - b) * a)
        w1 = step (1, 2) 0
        w2 = step (2, 3) w1
        w3 = step (1, 2) w2
    closeL 1e-15 (map head (take 3 (A.stochasticGradientDescent loss examples [0]))) [w1, w2, w3] `shouldBe` True
  it "stochasticGradientDescent lowers a least-squares loss" $ do
    let examples = [(x, 3 * x - 1) | x <- [-1, -0.5 .. 1]] :: [(Double, Double)]
        loss (a, b) v = let [w, c] = v in (w * A.auto a + c - A.auto b) ^ (2 :: Int)
        sumSq v = let [w, c] = v in sum [(w * a + c - b) ^ (2 :: Int) | (a, b) <- examples]
        its = A.stochasticGradientDescent loss examples [0, 0]
    sumSq (its !! 20000) `shouldSatisfy` (< sumSq [0, 0] / 10)
  it "conjugateGradientDescent's first step is the exact line search along the gradient" $
    -- f = 1/2 x^T A x - b^T x: the step is g^T g / g^T A g along -g
    property $ forAll (vecOf 2 dbl) $ \x0 ->
      let f v = let [x, y] = v in (3 * x * x + 2 * x * y + 2 * y * y) / 2 - x + 2 * y
          g = A.grad f x0
          ag = [3 * head g + g !! 1, head g + 2 * g !! 1]
          alpha = sum (map (^ (2 :: Int)) g) / sum (zipWith (*) g ag)
          want = zipWith (\x d -> x - alpha * d) x0 g
          its = A.conjugateGradientDescent f x0
      in counterexample (show (take 3 its, want)) $ all (== 0) g .||. (head its == x0 .&&. closeL 1e-12 (its !! 1) want)
  it "conjugateGradientAscent reaches the maximum of a concave quadratic in 2 steps" $
    property $ forAll (vecOf 2 dbl) $ \x0 ->
      let f v = let [x, y] = v in negate ((x - 1) * (x - 1) + 2 * (y + 2) * (y + 2) + x * y)
          -- the maximum solves 2 (x - 1) + y = 0, 4 (y + 2) + x = 0
          want = [16 / 7, -18 / 7]
          its = A.conjugateGradientAscent f x0
      in counterexample (show (take 3 its)) $ length (take 3 its) == 3 .&&. closeL 1e-9 (its !! 2) want

-- | constrainedDescent: the barrier method's points approach the
-- constrained minimum, from a feasible start and from an infeasible one.
constrained :: Spec
constrained = describe "constrainedDescent" $ do
  let objective :: Floating a => [a] -> a
      objective v = let [x, y] = v in (x - 3) * (x - 3) + (y + 1) * (y + 1)
      -- inside the disc of radius 1: the minimum is the disc's point
      -- nearest (3, -1)
      disc = [N.CC (\v -> let [x, y] = v in x * x + y * y - 1)]
      best = let r = sqrt 10 in [3 / r, -1 / r]
  it "from a feasible point: every point feasible, the last within 1e-6 of the minimum" $ do
    let ps = take 3000 (N.constrainedDescent objective disc [0, 0 :: Double])
    length ps `shouldBe` 3000
    all (\(_, [x, y]) -> x * x + y * y < 1) ps `shouldBe` True
    snd (last ps) `shouldSatisfy` (\p -> maximum (zipWith (\a b -> abs (a - b)) p best) < 1e-6)
  it "from an infeasible point: a first phase reaches the half-plane x + y <= 1, then its minimum" $ do
    let halfPlane = [N.CC (\v -> let [x, y] = v in x + y - 1)]
        ps = take 3000 (N.constrainedDescent objective halfPlane [4, 4 :: Double])
    all (\(_, [x, y]) -> x + y < 1) ps `shouldBe` True
    snd (last ps) `shouldSatisfy` (\p -> maximum (zipWith (\a b -> abs (a - b)) p [2.5, -1.5]) < 1e-6)
  it "without constraints: gradientDescent's points, each with its value" $ do
    let ps = take 30 (N.constrainedDescent objective [] [0, 0 :: Double])
    map snd ps `shouldBe` take 30 (N.gradientDescent objective [0, 0])
    map fst ps `shouldBe` map (N.eval objective) (map snd ps)

floats :: Spec
floats = describe "Float" $ do
  -- computed in Double and rounded: the results are those at Double, rounded
  let genF = listOf1N 5 (realToFrac <$> dbl) :: Gen [Float]
      dbls = map realToFrac :: [Float] -> [Double]
      flts = map realToFrac :: [Double] -> [Float]
  it "grad and grad' at Float are the Double results rounded" $
    property $ forAll genF $ \xs ->
      A.grad trig xs == flts (A.grad trig (dbls xs))
      .&&. fst (A.grad' trig xs) == realToFrac (fst (A.grad' trig (dbls xs)))
  it "jacobian, hessian, diff, du at Float are the Double results rounded" $
    property $ forAll genF $ \xs ->
      A.jacobian wide xs == map flts (A.jacobian wide (dbls xs))
      .&&. A.hessian trig xs == map flts (A.hessian trig (dbls xs))
      .&&. A.diff scalar (head xs) == realToFrac (A.diff scalar (realToFrac (head xs) :: Double))
      .&&. A.du trig (zip xs xs) == realToFrac (A.du trig (zip (dbls xs) (dbls xs)))
  it "the Float gradient is within Float rounding of finite differences in Double" $
    property $ forAll genF $ \xs ->
      let g = dbls (A.grad trig xs)
          fd = map (map fst) (fdGrad trig (dbls xs))
      in counterexample (show (g, fd)) $ and (zipWith (\a d -> abs (a - head d) <= 1e-5 * (1 + abs a)) g fd)
  it "nested at Float: diff (\\x -> x * diff (\\y -> auto x + y) 1) 1" $
    A.diff (\x -> x * A.diff (\y -> A.auto x + y) 1) (1 :: Float) `shouldBe` 1
  it "findZero at Float stops at a float next to sqrt 2; gradientDescent at Float" $ do
    let zs = take 60 (N.findZero (\x -> x * x - 2) (1 :: Float))
    abs (realToFrac (last zs) - sqrt 2 :: Double) `shouldSatisfy` (<= 2e-7)
    map head (take 2 (A.gradientDescent (\v -> head v * head v) [1 :: Float])) `shouldBe` [0.8, 0.64]

-- | A differentiation at any element type, compiled once with the class
-- dictionary (no specialisation to Double): the element conversions'
-- general path.
newtype PolyGrad = PolyGrad (forall a. RealFloat a => [a] -> (a, [a]))

polyGrad :: PolyGrad
polyGrad = PolyGrad (A.grad' (\v -> sum (map (\x -> x * x) v) + head v))
{-# NOINLINE polyGrad #-}

-- (through a box the optimiser cannot see into, so never specialised)
gradPoly :: RealFloat a => [a] -> (a, [a])
gradPoly xs = case polyGrad of PolyGrad g -> g xs

elementTypes :: Spec
elementTypes = describe "element types (Element is RealFloat)" $ do
  let specials = [0, -0.0, 1.5, -2.25, 1 / 0, -1 / 0, 0 / 0, 5.0e-324, 1.7976931348623157e308]
      gen = listOf1N 6 (oneof [dbl, elements specials])
  it "at Double through the class dictionary: bit for bit the specialised results (-0, NaN, infinities)" $
    property $ forAll gen $ \xs ->
      show (gradPoly xs) === show (A.grad' (\v -> sum (map (\x -> x * x) v) + head v) xs)
  it "at CDouble (another RealFloat): the Double results" $
    property $ forAll gen $ \xs ->
      let (y, g) = gradPoly (map CDouble xs)
          (yd, gd) = gradPoly xs
      in show (y, g) === show (CDouble yd, map CDouble gd)
  it "types default to Double as ad's do (a module with no annotations: tools/check-quickstart.sh)" $
    -- here: the literals' type is fixed by nothing but defaulting
    show (A.grad (\[x, y] -> x * y + sin x) [1, 2]) `shouldBe` "[2.5403023058681398,1.0]"

-- | One elementary function at a time, at a point of its domain, with the
-- name the failures show.
data Elementary = Elementary String Double (forall a. Floating a => a -> a)

towerFns :: [Elementary]
towerFns = map (\(n, x, ElemFn f) -> Elementary n x f)
  [ ("exp", 0.3, ElemFn exp), ("log", 1.7, ElemFn log), ("sqrt", 2.2, ElemFn sqrt), ("sin", 0.7, ElemFn sin)
  , ("cos", 0.7, ElemFn cos), ("tan", 0.4, ElemFn tan), ("asin", 0.3, ElemFn asin), ("acos", -0.2, ElemFn acos)
  , ("atan", 1.3, ElemFn atan), ("sinh", 0.8, ElemFn sinh), ("cosh", -0.6, ElemFn cosh), ("tanh", 0.5, ElemFn tanh)
  , ("asinh", 1.1, ElemFn asinh), ("acosh", 1.9, ElemFn acosh), ("atanh", 0.35, ElemFn atanh)
  , ("** (both)", 1.3, ElemFn (\x -> x ** (x / 2))), ("logBase", 2.5, ElemFn (logBase 3))
  , ("/ and recip", 0.9, ElemFn (\x -> (x * x + 1) / (x - 3) + recip (2 + x)))
  , ("abs", -1.5, ElemFn (\x -> abs x * x))
  ]

newtype Fn = ElemFn (forall a. Floating a => a -> a)

-- | log1pexp and log1mexp keep their digits at the extremes (the class
-- defaults overflow or cancel).
logExps :: Spec
logExps = describe "log1pexp and log1mexp" $
  it "at the extremes: softplus's value and derivative, log1mexp's two forms" $ do
    A.diff' log1pexp (1000 :: Double) `shouldBe` (1000, 1)
    A.diff' log1pexp (-1000 :: Double) `shouldBe` (0, 0)
    let (v, d) = A.diff' log1pexp (-100 :: Double)
    (closeRel 1e-14 v 3.720075976020836e-44, closeRel 1e-14 d 3.7200759760208356e-44) `shouldBe` (True, True)
    let (v1, d1) = A.diff' log1mexp (-1e-15 :: Double)
    (closeRel 1e-12 v1 (-34.538776394910684), closeRel 1e-12 d1 (-9.999999999999994e14)) `shouldBe` (True, True)
    let (v2, d2) = A.diff' log1mexp (-1 :: Double)
    (closeRel 1e-14 v2 (-0.45867514538708193), closeRel 1e-14 d2 (-0.5819767068693265)) `shouldBe` (True, True)

-- | ad's module names, each with a function of it (a program switches by
-- its imports).
adModules :: Spec
adModules = describe "ad's module names" $ do
  it "Double, Mode.Forward/Kahn/Sparse/Dense/Tower and their Double forms, Newton.Double: the same results" $ do
    ADD.grad (\v -> let [x, y] = v in x * y + sin x) [1, 2] `shouldBe` A.grad (\v -> let [x, y] = v in x * y + sin x) [1, 2 :: Double]
    F.diffF' (\a -> [sin a, cos a]) (0 :: Double) `shouldBe` [(0, 1), (1, -0)]
    F.jacobianT (\v -> let [x, y] = v in [x * y, x + y]) [3, 5 :: Double] `shouldBe` [[5, 1], [3, 1]]
    K.grad (\v -> let [x, y] = v in x * y) [3, 5 :: Double] `shouldBe` [5, 3]
    take 3 (T.diffs exp (0 :: Double)) `shouldBe` [1, 1, 1]
    last (take 10 (ND.findZero (\x -> x * x - 4) (1 :: Double))) `shouldBe` 2
    S.hessian' (\v -> let [x, y] = v in x * y) [1, 2 :: Double] `shouldBe` (2, [(2, [0, 1]), (1, [1, 0])])
    SD.grad (\v -> let [x, y] = v in x * x + y) [1, 2 :: Double] `shouldBe` [2, 1]
    DN.jacobian (\v -> let [x, y] = v in [x + y, x * y]) [1, 2 :: Double] `shouldBe` [[1, 1], [2, 1]]
    KD.diff (\x -> x * x + x) (1 :: Double) `shouldBe` 3
    FD.du (\v -> let [x, y] = v in x * y) [(1, 1), (2, 0 :: Double)] `shouldBe` 2
    take 3 (TD.diffs (\x -> x ^ (3 :: Int)) (2 :: Double)) `shouldBe` [8, 12, 12]
  it "Rank1 modules (functions of rank-1 types): the rank-2 functions' results" $
    property $ forAll (vectorOf 3 (choose (-1, 1 :: Double))) $ \xs ->
      let f :: Floating a => [a] -> a
          f v = let [a, b, c] = v in a * sin b + exp (c / 3) * a * b
          g :: Floating a => [a] -> [a]
          g v = let [a, b, c] = v in [a * b, sin c * a]
          h :: Floating a => a -> a
          h u = sin u * exp u
          x = head xs
          sq1 :: R1F.Forward Double -> R1F.Forward Double
          sq1 u = u * u + 3 * u
      in R1F.diff' h x === A.diff' h x
         .&&. R1FD.grad f xs === A.grad f xs
         .&&. R1F.du f (zip xs xs) === A.du f (zip xs xs)
         .&&. R1K.grad f xs === A.grad f xs
         .&&. R1KF.grad f (map realToFrac xs :: [Float]) === A.grad f (map realToFrac xs :: [Float])
         .&&. R1K.vgrad (\a b -> a * b + sin a) x x === A.vgrad (\a b -> a * b + sin a) x x
         .&&. R1S.jacobian g xs === A.jacobian g xs
         .&&. R1S.hessian f xs === A.hessian f xs
         .&&. depth2 (R1S.grads f xs) === depth2 (A.grads f xs)
         .&&. R1D.grad f xs === A.grad f xs
         .&&. R1.hessianF g xs === A.hessianF g xs
         .&&. depth2 (R1.grads f xs) === depth2 (A.grads f xs)
         .&&. take 4 (R1.diffs h x) === take 4 (A.diffs h x)
         .&&. take 4 (R1.taylor h x 0.1) === take 4 (A.taylor h x 0.1)
         .&&. take 4 (R1T.diffs h x) === take 4 (A.diffs h x)
         .&&. R1T.diff h x === T.diff h x
         .&&. take 10 (R1N.findZero (\u -> u * u - 2) 1) === take 10 (N.findZero (\u -> u * u - 2) 1)
         .&&. take 10 (R1N.gradientDescent f xs) === take 10 (N.gradientDescent f xs)
         .&&. R1F.diff sq1 x === A.diff (\u -> u * u + 3 * u) x
  it "Dense.Representable (a container that is not Traversable): ad's documented examples" $ do
    DNR.grad (\(R3 x y z) -> x * y + z) (R3 1 2 3) `shouldBe` R3 2 1 (1 :: Double)
    let R2 p q = DNR.grad (\(R2 x y) -> x ** y) (R2 0 (2 :: Double))
    (isNaN p, isNaN q) `shouldBe` (True, True)
    DNR.jacobian' (\(R2 x y) -> [x * y, DNR.auto 3]) (R2 1 (2 :: Double)) `shouldBe` [(2, R2 2 1), (3, R2 0 0)]
  it "Dense.Representable: gradient, value and Jacobian as the reverse sweeps give them (1e-12 relative)" $
    property $ forAll (vectorOf 3 (choose (-1, 1 :: Double))) $ \xs ->
      let f :: Floating a => [a] -> a
          f v = let [a, b, c] = v in a * sin b + exp (c / 3) * a * b / (2 + cos c) + (a * a + 1) ** b + (b * b + 1) ** 1.5
          g :: Floating a => [a] -> [a]
          g v = let [a, b, c] = v in [a * b - c, tanh c * atan a, sqrt (b * b + 2) - logBase 2 (a * a + 1)]
          v3 [a, b, c] = R3 a b c
          v3 _ = error "three"
          list (R3 a b c) = [a, b, c]
          close u w = and (zipWith (closeRel 1e-12) u w)
          (y, dy) = R1DR.grad' (f . list) (v3 xs)
      in close (list (DNR.grad (f . list) (v3 xs))) (A.grad f xs)
         .&&. closeRel 1e-12 y (f xs) .&&. close (list dy) (A.grad f xs)
         .&&. close (concatMap list (DNR.jacobian (g . list) (v3 xs))) (concat (A.jacobian g xs))
         .&&. list (R1DR.gradWith (+) (f . list) (v3 xs)) === zipWith (+) xs (list (R1DR.grad (f . list) (v3 xs)))
  it "Halley: ad's documented iterates; each step x - 2 f f' / (2 f'^2 - f f''), converging faster than Newton" $ do
    take 10 (H.findZero (\x -> x ^ (2 :: Int) - 4) (1 :: Double)) `shouldBe` [1.0, 1.8571428571428572, 1.9997967892704736, 1.9999999999994755, 2.0]
    take 10 (H.fixedPoint cos (1 :: Double)) `shouldBe` [1.0, 0.7408739950803436, 0.7390851338775819, 0.7390851332151607]
    take 10 (H.extremum cos (1 :: Double)) `shouldBe` [1.0, 0.29616942658570555, 4.59979519460002e-3, 1.6220740159042513e-8, 0.0]
    let f3 :: Floating a => a -> a
        f3 x = x * x * x - 2 * x - 5
        step :: Double -> Double
        step x = let [y, y', y''] = take 3 (A.diffs0 f3 x) in x - 2 * y * y' / (2 * y' * y' - y * y'')
    take 6 (H.findZeroNoEq f3 (2 :: Double)) `shouldBe` take 6 (iterate step 2)
    take 6 (R1H.findZeroNoEq f3 (2 :: Double)) `shouldBe` take 6 (iterate step 2)
    last (H.inverse (\x -> x * x * x + x) 0 (10 :: Double)) `shouldBe` 2
    length (H.findZero f3 (2 :: Double)) `shouldSatisfy` (< length (N.findZero f3 (2 :: Double)))
  it "vgrad and vgrad': curried functions of one to three scalars, as grad of their lists" $
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, z) ->
      let f3 :: Floating a => a -> a -> a -> a
          f3 a b c = a * sin b + exp (c / 3) * a
          list3 :: Floating a => [a] -> a
          list3 v = let [a, b, c] = v in f3 a b c
      in A.vgrad (\a -> a * a) x === [2 * x]
         .&&. A.vgrad (\a b -> a * b) x y === [y, x]
         .&&. A.vgrad f3 x y z === A.grad list3 [x, y, z]
         .&&. A.vgrad' f3 x y z === A.grad' list3 [x, y, z]

towers :: Spec
towers = describe "towers (every derivative at once: diffs, dus, taylor)" $ do
  it "sin at 0: 0, 1, 0, -1 repeating; a polynomial's tower ends (diffs0 pads it)" $ do
    take 9 (A.diffs sin (0 :: Double)) `shouldBe` [0, 1, 0, -1, 0, 1, 0, -1, 0]
    A.diffs (\x -> x ^ (3 :: Int)) (2 :: Double) `shouldBe` [8, 12, 12, 6]
    take 6 (A.diffs0 (\x -> x * x) (3 :: Double)) `shouldBe` [9, 6, 2, 0, 0, 0]
    A.diffs (\x -> x / 2) (1 :: Double) `shouldBe` [0.5, 0.5]
    -- a literal zero is the empty tower (as in ad): dus of a zero output is []
    A.dus (\_ -> 0) [[1, 1 :: Double]] `shouldBe` []
    A.dusF (\v -> [sum (drop 1 v), head v]) [[2, 1 :: Double]] `shouldBe` [[], [2, 1]]
  it "every elementary function: derivatives 1 to 3 are the nested reverse-mode ones" $
    conjoin
      [ counterexample name $
          let t = take 4 (A.diffs f x)
              d1 = A.diff f x
              d2 = A.diff (A.diff f) x
              d3 = A.diff (A.diff (A.diff f)) x
          in counterexample (show (t, [f x, d1, d2, d3])) $
               and (zipWith (closeRel 1e-11) t [f x, d1, d2, d3])
      | Elementary name x f <- towerFns ]
  it "a random composite: its first three derivatives are the nested ones" $
    property $ forAll (choose (0.2, 1.5)) $ \x ->
      let f :: Floating a => a -> a
          f v = exp (sin v * v) / sqrt (1 + v * v) + log (v + 2) * atan v
          t = take 4 (A.diffs f x)
      in counterexample (show t) $
           and (zipWith (closeRel 1e-10) t [f x, A.diff f x, A.diff (A.diff f) x, A.diff (A.diff (A.diff f)) x])
  it "dus along a direction: du first, then v' H v" $
    property $ forAll ((,) <$> vectorOf 3 (choose (-1, 1)) <*> vectorOf 3 (choose (-1, 1))) $ \(xs, vs) ->
      let f :: Floating a => [a] -> a
          f v = let [a, b, c] = v in a * b * c + sin (a * c) + b * b
          [_, d1, d2] = take 3 (A.dus f (zipWith (\x v -> [x, v]) xs vs))
          hv = A.hessianProduct f (zip xs vs)
      in closeRel 1e-12 d1 (A.du f (zip xs vs)) .&&. closeRel 1e-12 d2 (sum (zipWith (*) vs hv))
  it "taylor and maclaurin: the series' terms" $ do
    abs (sum (take 25 (A.taylor exp 0 (1 :: Double))) - exp 1) `shouldSatisfy` (< 1e-15)
    take 5 (A.maclaurin (\x -> recip (1 - x)) (0.5 :: Double)) `shouldBe` [1, 0.5, 0.25, 0.125, 0.0625]
    take 4 (A.taylor0 (\x -> x * x) 1 (0.5 :: Double)) `shouldBe` [1, 1, 0.25, 0]

-- | The stream's value, and its children.
rootOf :: Cofree f a -> a
rootOf (a :< _) = a

childrenOf :: Cofree f a -> f (Cofree f a)
childrenOf (_ :< cs) = cs

-- | Depth k of a stream over a list: the k-th partials, as nested lists
-- (depth 1 a list, depth 2 a list of lists, depth 3 ...).
depth1 :: Cofree [] a -> [a]
depth1 = map rootOf . childrenOf

depth2 :: Cofree [] a -> [[a]]
depth2 = map depth1 . childrenOf

depth3 :: Cofree [] a -> [[[a]]]
depth3 = map depth2 . childrenOf

-- | Signatures written against ad's mode types.
squareForward :: F.AD s (F.Forward Double) -> F.AD s (F.Forward Double)
squareForward x = x * x + 3 * x

expTower :: T.AD s (T.Tower Double) -> T.AD s (T.Tower Double)
expTower x = exp x * x

productSparse :: [S.AD s (S.Sparse Double)] -> S.AD s (S.Sparse Double)
productSparse v = product v + sum v

sumKahn :: [K.AD s (K.Kahn Double)] -> K.AD s (K.Kahn Double)
sumKahn v = sum (map (\x -> x * x) v)

densePair :: [DN.AD s (DN.Dense [] Double)] -> [DN.AD s (DN.Dense [] Double)]
densePair v = [product v, sum v]

higherOrders :: Spec
higherOrders = describe "derivatives of every order (grads, jacobians, hessianF', Jet)" $ do
  let f :: Floating a => [a] -> a
      f v = let [a, b, c] = v in a * a * b + sin (a * c) + exp (b / 3) * c
      g :: Floating a => [a] -> [a]
      g v = let [a, b] = v in [a * b * b, cos a * b, exp (a - b)]
      pt3 = vectorOf 3 (choose (-1.5, 1.5 :: Double))
  it "grads: depth 0 the value, 1 the gradient, 2 the Hessian; depth 3 the differences of the Hessian" $
    property $ forAll pt3 $ \xs ->
      let c = A.grads f xs
      in rootOf c === f xs
         .&&. depth1 c === A.grad f xs
         .&&. counterexample "depth 2" (closeM 1e-12 (depth2 c) (A.hessian f xs))
         .&&. conjoin [ counterexample ("depth 3, input " ++ show i) $
                          closeFDM (depth3 c !! i) (transposeTo (fdJacobian (concat . A.hessian f) xs) !! i)
                      | i <- [0 .. 2] ]
  it "grads: the third partials are symmetric, and read the same down every path" $
    property $ forAll pt3 $ \xs ->
      let d3 = depth3 (A.grads f xs)
      in conjoin [ closeRel 1e-12 (d3 !! i !! j !! k) (d3 !! p !! q !! r)
                 | i <- [0 .. 2], j <- [0 .. 2], k <- [0 .. 2]
                 , [p, q, r] <- [[j, k, i], [k, i, j], [j, i, k]] ]
  it "jacobians: per output its value, its Jacobian row, its Hessian (hessianF)" $
    property $ forAll (vectorOf 2 (choose (-1, 1 :: Double))) $ \xs ->
      let cs = A.jacobians g xs
      in map rootOf cs === g xs
         .&&. map depth1 cs === A.jacobian g xs
         .&&. counterexample "depth 2" (and (zipWith (closeM 1e-12) (map depth2 cs) (A.hessianF g xs)))
  it "hessianF': each output's value, gradient and Hessian rows, as jacobian' and hessianF give them" $
    property $ forAll (vectorOf 2 (choose (-1, 1 :: Double))) $ \xs ->
      let got = A.hessianF' g xs
      in map fst got === map fst (A.jacobian' g xs)
         .&&. map (map fst . snd) got === A.jacobian g xs
         .&&. map (map snd . snd) got === A.hessianF g xs
         .&&. S.hessianF' g xs === got
  it "a stream is read lazily: its value costs no derivative of higher order" $ do
    let c = A.grads (\v -> let [a, b] = v in a * b) [2, 3 :: Double]
    rootOf c `shouldBe` 6
    depth2 c `shouldBe` [[0, 1], [1, 0]]
    depth1 (head (childrenOf (head (childrenOf (head (childrenOf c)))))) `shouldBe` [0, 0]
  it "vgrads of a curried function: the stream grads gives for the function of the list" $
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, z) ->
      let f3 :: Floating a => a -> a -> a -> a
          f3 a b c = a * sin b + exp (c / 3) * a * b
          c1 = A.vgrads f3 x y z
          c2 = A.grads (\v -> let [a, b, c] = v in f3 a b c) [x, y, z]
      in rootOf c1 === rootOf c2 .&&. depth1 c1 === depth1 c2 .&&. depth2 c1 === depth2 c2
  it "Jet: level k of jet (grads f) is depth k of the stream" $
    property $ forAll pt3 $ \xs ->
      let c = A.grads f xs
          j = J.jet c
      in J.headJet j === rootOf c
         .&&. J.headJet (J.tailJet j) === depth1 c
         .&&. J.headJet (J.tailJet (J.tailJet j)) === depth2 c
         .&&. J.headJet (J.tailJet (J.tailJet (J.tailJet j))) === depth3 c
         .&&. fmap (* 2) (J.headJet (J.tailJet j)) === J.headJet (J.tailJet (fmap (* 2) j))
  it "signatures naming ad's mode types: AD s (Forward a), (Tower a), (Sparse a), (Kahn a), (Dense f a)" $ do
    F.diff squareForward 2 `shouldBe` 7
    T.diff expTower 1 `shouldBe` 2 * exp 1
    take 3 (T.diffs expTower 0) `shouldBe` [0, 1, 2]
    S.grad productSparse [2, 3] `shouldBe` [4, 3]
    K.grad sumKahn [1, 2] `shouldBe` [2, 4]
    DN.jacobian densePair [2, 3] `shouldBe` [[3, 2], [1, 1]]
  it "Mode.Tower's diff, diff', du, duF on towers: the engine's derivatives" $
    property $ forAll ((,) <$> choose (-1, 1 :: Double) <*> vectorOf 2 ((,) <$> choose (-1, 1) <*> choose (-1, 1))) $ \(x, xvs) ->
      let h :: Floating a => a -> a
          h v = sin v * exp v
          k :: Floating a => [a] -> a
          k v = let [a, b] = v in a * b + cos a
          kk :: Floating a => [a] -> [a]
          kk v = [k v, product v]
      in closeRel 1e-13 (T.diff h x) (A.diff h x)
         .&&. T.diff' h x === (h x, T.diff h x)
         .&&. counterexample "du" (closeRel 1e-13 (T.du k xvs) (A.du k xvs))
         .&&. counterexample "duF" (closeL 1e-13 (T.duF kk xvs) (A.duF kk xvs))
         .&&. map fst (T.duF' kk xvs) === kk (map fst xvs)

-- | Rows of a Jacobian of a flattened n x n matrix function, regrouped:
-- entry [i][j][k] is d(H_ij)/dx_k.
transposeTo :: [[Double]] -> [[[Double]]]
transposeTo rows = chunk rows
  where
    n = round (sqrt (fromIntegral (length rows) :: Double))
    chunk [] = []
    chunk rs = take n rs : chunk (drop n rs)

containers :: Spec
containers = describe "containers other than lists" $ do
  let f3 :: Floating a => V3 a -> a
      f3 (V3 a b c) = a * b + sin c * a + exp (b / 2)
  it "V3: grad and hessian shaped like the input, equal to the list versions" $
    property $ forAll genV3 $ \v ->
      let asList :: Floating a => [a] -> a
          asList l = let [a, b, c] = l in f3 (V3 a b c)
      in toList (A.grad f3 v) == A.grad asList (toList v)
         .&&. map toList (toList (A.hessian f3 v)) == A.hessian asList (toList v)
         .&&. fst (A.grad' f3 v) == asList (toList v)
  it "V3 to V3: jacobian, jacobianT, duF" $
    property $ forAll ((,) <$> genV3 <*> genV3) $ \(v, d) ->
      let cross :: Num a => V3 a -> V3 a
          cross (V3 p q r) = V3 (q * r) (r * p) (p * q)
          V3 a b c = v
          j = A.jacobian cross v
      in j == V3 (V3 0 c b) (V3 c 0 a) (V3 b a 0)
         .&&. A.jacobianT cross v == j
         .&&. A.duF cross (zipV v d) == fmap (\r -> sum (zipWith (*) (toList r) (toList d))) j
  it "Maybe: Just and Nothing" $ do
    A.grad (sum . fmap (\x -> x * x * x)) (Just (2 :: Double)) `shouldBe` Just 12
    A.grad (sum . fmap (\x -> x * x * x)) (Nothing :: Maybe Double) `shouldBe` Nothing
    A.jacobian (\m -> Just (sum m * 2)) (Just (5 :: Double)) `shouldBe` Just (Just 2)
    A.diffF (\x -> if x > 0 then Just (x * x) else Nothing) (3 :: Double) `shouldBe` Just 6
  it "Map: grad keyed like the input; jacobian from a Map to a Map" $
    property $ forAll ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, z) ->
      let m = Map.fromList [("x", x), ("y", y), ("z", z)]
          f :: Floating a => Map.Map String a -> a
          f q = q Map.! "x" * q Map.! "y" + sin (q Map.! "z")
          g :: Floating a => Map.Map String a -> Map.Map String a
          g q = Map.fromList [("sum", sum q), ("xz", q Map.! "x" * q Map.! "z")]
      in A.grad f m == Map.fromList [("x", y), ("y", x), ("z", cos z)]
         .&&. A.jacobian g m == Map.fromList [ ("sum", Map.fromList [("x", 1), ("y", 1), ("z", 1)])
                                             , ("xz", Map.fromList [("x", z), ("y", 0), ("z", x)]) ]
  it "a record of two lists: grad through a Traversable of mixed sizes" $
    property $ forAll ((,) <$> listOf1N 3 dbl <*> listOf1N 3 dbl) $ \(us, ws) ->
      let g = A.grad (\(Two a b) -> sum (zipWith (*) a b) + sum a) (Two us ws)
          at zs i = if i < length zs then zs !! i else 0
          n = min (length us) (length ws)
          want = Two [at (take n ws) i + 1 | i <- [0 .. length us - 1]] [at (take n us) i | i <- [0 .. length ws - 1]]
      in g === want

zipV :: V3 a -> V3 b -> V3 (a, b)
zipV (V3 a b c) (V3 x y z) = V3 (a, x) (b, y) (c, z)

-- | Two lists, traversed left then right.
data Two a = Two [a] [a]
  deriving (Eq, Show, Functor, Foldable, Traversable)

threads :: Spec
threads = describe "threads" $ do
  let inputs (k, i) = [fromIntegral k / 7 - 1, 0.5 + fromIntegral i / 100, fromIntegral (k `mod` 5) / 3, -0.25] :: [Double]
      work ki = ( A.grad trig (inputs ki)
                , A.jacobian wide (inputs ki)
                , A.hessian trig (take 3 (inputs ki))
                , A.grad (sum . A.grad mlp) (take 21 (cycle (inputs ki)))
                , A.grad (\v -> head v * head (A.grad (\zs -> A.auto (v !! 1) * head zs * head zs) [2])) (inputs ki) )
      items = [(k, i) | k <- [1 .. 8 :: Int], i <- [1 .. 40 :: Int]]
  it "gradients, jacobians, hessians and nested ones on 8 threads equal the sequential ones" $ do
    let reference = map work items
    _ <- evaluate (length (show reference))
    rs <- withCapabilities 4 $ concurrently
      [ evaluate (and [work ki == r | (ki, r) <- zip items reference, fst ki == t]) | t <- [1 .. 8] ]
    map (either (const False) id) rs `shouldBe` replicate 8 True
  it "lazy gradients forced from several threads at once" $ do
    let want = sum (map (sum . A.grad mlp . take 21 . cycle . inputs) items)
    _ <- evaluate want
    rs <- withCapabilities 4 $ do
      let shared = [A.grad mlp (take 21 (cycle (inputs ki))) | ki <- items]
      concurrently [evaluate (sum (map sum shared)) | _ <- [1 .. 4 :: Int]]
    map (either (const Nothing) Just) rs `shouldBe` replicate 4 (Just want)
  it "Newton's method and gradient descent on 4 threads" $ do
    let job k = ( take 30 (A.gradientDescent trig (inputs (k, 0 :: Int)))
                , take 60 (N.findZero (\x -> x * x - A.auto (fromIntegral k)) (1 :: Double))
                , take 4 (A.conjugateGradientDescent trig (inputs (k, 0 :: Int))) )
        reference = map job [1 .. 4 :: Int]
    _ <- evaluate (length (show reference))
    rs <- withCapabilities 4 $ concurrently [evaluate (job k == reference !! (k - 1)) | k <- [1 .. 4]]
    map (either (const False) id) rs `shouldBe` replicate 4 True

constants :: Spec
constants = describe "constants" $ do
  it "inputs a function ignores have a zero gradient" $
    property $ forAll (vecOf 4 dbl) $ \xs ->
      A.grad (\v -> sin (v !! 1) * v !! 3) xs == [0, cos (xs !! 1) * xs !! 3, 0, sin (xs !! 1)]
      .&&. A.hessian (\v -> v !! 0 * v !! 0) xs == [[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
  it "a constant output: zero gradient, zero jacobian rows, zero hessian, the value" $
    property $ forAll (vecOf 3 dbl) $ \xs ->
      A.grad (const 3) xs == [0, 0, 0]
      .&&. A.grad' (const (A.auto 2.5)) xs == (2.5, [0, 0, 0])
      .&&. A.jacobian (\v -> [head v, 7, sum v]) xs == [[1, 0, 0], [0, 0, 0], [1, 1, 1]]
      .&&. A.jacobian' (\v -> [7, head v]) xs == [(7, [0, 0, 0]), (head xs, [1, 0, 0])]
      .&&. A.hessian (const 1) xs == replicate 3 [0, 0, 0]
      .&&. A.hessian' (const 1) xs == (1, replicate 3 (0, [0, 0, 0]))
      .&&. A.diff (const 4) (head xs) == 0
      .&&. A.du (const 4) (zip xs xs) == 0
      .&&. A.hessianProduct (const 1) (zip xs xs) == [0, 0, 0]
  it "an input as the output, and a linear function: exact" $
    property $ forAll (vecOf 3 dbl) $ \xs ->
      A.grad head xs == [1, 0, 0]
      .&&. A.hessian head xs == replicate 3 [0, 0, 0]
      .&&. A.grad (\v -> 2 * head v - 3 * v !! 2) xs == [2, 0, -3]
      .&&. A.jacobian id xs == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
      .&&. A.diff id (head xs) == 1
  it "empty inputs and no outputs" $ do
    A.grad sum ([] :: [Double]) `shouldBe` []
    A.grad' sum ([] :: [Double]) `shouldBe` (0, [])
    A.hessian sum ([] :: [Double]) `shouldBe` []
    A.jacobian (const []) [1, 2 :: Double] `shouldBe` ([] :: [[Double]])
    A.jacobianT (const []) [1, 2 :: Double] `shouldBe` ([[], []] :: [[Double]])
    A.duF (const []) [(1, 1 :: Double)] `shouldBe` ([] :: [Double])
  it "Mode: auto, isKnownConstant, asKnownConstant, isKnownZero" $ do
    A.grad (\v -> if A.isKnownConstant (head v) then 1 else head v) [2 :: Double] `shouldBe` [1]
    A.grad (\v -> let c = A.auto 3 in if A.isKnownConstant c && A.asKnownConstant c == Just 3 then head v * c else 0) [2 :: Double]
      `shouldBe` [3]
    A.grad (\v -> if A.isKnownZero (A.zero `asTypeOf` head v) then head v * 5 else 0) [1 :: Double] `shouldBe` [5]
    A.grad (\v -> 2 A.*^ head v + head v A.^* 3 + head v A.^/ 4) [1 :: Double] `shouldBe` [5.25]

knownProblems :: Spec
knownProblems = describe "helpers from outside blocks" $ do
  -- Regressions: Run.Current.onTape once looked up its tape in an
  -- expression GHC floated out to a top-level constant, so helpers from
  -- outside blocks recorded on the first tape ever looked up (zeros after an
  -- earlier run; wrong gradients and DualRevError on threads).
  it "the splice's hessian of a block function calling a helper from outside blocks, after a grad" $ do
    let xs = [0.5, 1.5, -0.7, 0.3, 1.1]
        s = sum xs
    _ <- evaluate (sum ($(TH.grad 'outsideAtanD) (take 2 xs)))
    concat ($(TH.hessian 'outsideAtanD) xs)
      `shouldSatisfy` all (closeRel 1e-12 (-2 * s / ((1 + s * s) * (1 + s * s))))
  it "the splice's grad of a block function calling a helper from outside blocks, on several threads" $ do
    let ok k = and [ closeRel 1e-12 (head ($(TH.grad 'outsideAtanD) [x, fromIntegral k])) (1 / (1 + (x + fromIntegral k) ^ (2 :: Int)))
                   | i <- [1 .. 2000 :: Int], let x = fromIntegral i / 1000 ]
    rs <- withCapabilities 2 $ concurrently [evaluate (ok k) | k <- [1 .. 4 :: Int]]
    map (either (const False) id) rs `shouldBe` replicate 4 True

-- containers with a Representable instance (through Generic1) and no
-- Traversable one, as ad's Dense.Representable documentation has them
data R2 a = R2 a a deriving (Generic1, Functor, Show, Eq)
instance Representable R2
instance Distributive R2 where distribute = distributeRep
data R3 a = R3 a a a deriving (Generic1, Functor, Show, Eq)
instance Representable R3
instance Distributive R3 where distribute = distributeRep
