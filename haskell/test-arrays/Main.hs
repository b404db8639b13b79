{-# LANGUAGE TemplateHaskell #-}
-- | Tests of the array primitives (Numeric.DualRev.Array) and of fork-join
-- pairs (|*|) through the front end (nested derivatives beside and inside
-- pairs: "NestedPairs"): gradients against central finite
-- differences, array programs against the same program on lists (relative
-- difference below 1e-10), forked programs against the unforked ones, and
-- Constant inputs.  Run with +RTS -N2 (set in the cabal file) so the forks
-- really run in parallel.
module Main (main) where

import Control.Concurrent (getNumCapabilities, setNumCapabilities)
import Control.Exception (evaluate, finally, try, SomeException)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev
import Numeric.DualRev.Array

import qualified NestedPairs
import qualified Robust
import qualified Storable

differentiable [d|
  -- one dense layer and a softmax-weighted sum, with arrays and with lists
  layerA :: ((Mat, Vec), Vec) -> Double
  layerA ((w, b), x) = vdot (softmax (vtanh (vadd (matVec w x) b))) (vsquare b)

  layerL :: (([[Double]], [Double]), [Double]) -> Double
  layerL ((w, b), x) =
    let h = map tanh (zipWith (+) (map (\r -> sum (zipWith (*) r x)) w) b)
        m = maximum h
        es = map (\v -> exp (v - m)) h
        s = sum es
    in sum (zipWith (*) (map (/ s) es) (map (\v -> v * v) b))

  -- matrix products with transposes, broadcasting, reductions, indexing
  mats :: (Mat, Mat, Vec) -> Double
  mats (a, b, v) =
    let c = matMulT True a False b
        d = addColVec (addRowVec c (vsigmoid v)) (sumCols a)
    in msumAll (msquare d) + logSumExp (sumCols d) + mindex d 1 0 * vmaximum v
       + vdot (vecMat (vslice 0 (mrows a) (vconcat [v, v])) a) (vexp (vslice 0 (mcols a) v))

  -- structure: gather, scatter, reshape, mtranspose, outer, from/to lists
  structure :: (Vec, Vec) -> Double
  structure (u, v) =
    let g = gather [2, 0, 0, 1] u
        s = scatter 5 [4, 4, 1] (vslice 0 3 v)
        m = reshape 2 2 g
        o = outer (vfromList (vtoList u ++ [vindex v 0 * 2])) s
    in msumAll (mmul m (mtranspose m)) + vsum (vmul s (vlog (vabs s `vadd` vfromList [1, 1, 1, 1, 1])))
       + msumAll (mrelu o) + vsum (mflatten (vstack [m, hstack [m]]))

  -- softmax cross-entropy of a batch; the batch is data
  batchLoss :: ((Mat, Vec), Constant (Mat, Mat)) -> Double
  batchLoss ((w, b), batch) =
    let (x, y) = constant batch
        z = addRowVec (matMul x w) b
    in negate (msumAll (mmul y (logSoftmaxRows z))) / fromIntegral (mrows x)

  -- fork-join: the same sums with and without (|*|), nested and unbalanced
  sim :: (Double, Double) -> Double
  sim (p, v) = go (50 :: Int) p v
    where go n q w | n == 0 = q * w
                   | otherwise = go (n - 1) (q + 0.05 * w) (w - 0.05 * (0.5 * q + 0.2 * w))

  simsSeq :: [(Double, Double)] -> Double
  simsSeq ps = sum (map sim ps)

  simsFork :: [(Double, Double)] -> Double
  simsFork [] = 0
  simsFork [p] = sim p
  simsFork ps =
    let (l, r) = splitAt (length ps `div` 2) ps
        (a, b) = simsFork l |*| simsFork r
    in a + b

  -- the same with a damping c that every job reads: the jobs' adds into
  -- its adjoint meet
  simC :: Double -> (Double, Double) -> Double
  simC c (p, v) = go (50 :: Int) p v
    where go n q w | n == 0 = q * w
                   | otherwise = go (n - 1) (q + 0.05 * w) (w - 0.05 * (c * q + 0.2 * w))

  simsForkC :: (Double, [(Double, Double)]) -> Double
  simsForkC (_, []) = 0
  simsForkC (c, [p]) = simC c p
  simsForkC (c, ps) =
    let (l, r) = splitAt (length ps `div` 2) ps
        (a, b) = simsForkC (c, l) |*| simsForkC (c, r)
    in a + b

  transposeF :: Mat -> Mat
  transposeF m = mtranspose m

  forkArrays :: (Vec, Mat) -> Double
  forkArrays (v, m) =
    let (a, (b, c)) = vsum (vexp v) |*| (msumAll (msquare m) |*| vdot v (matVec m v))
    in a * b + c
  |]

-- | The gradient of simsForkC at x, computed with c capabilities: with two
-- the pairs record as jobs swept in parallel, with one they record in
-- order on one job.  (NOINLINE, and c an argument, so that the two calls
-- are not shared.)
simsForkGradAt :: Int -> (Double, [(Double, Double)]) -> IO [Double]
simsForkGradAt c x = do
  setNumCapabilities c
  let (gc, gps) = $(grad 'simsForkC) x
      g = gc : concat [[a, b] | (a, b) <- gps]
  _ <- evaluate (sum g)
  pure g
{-# NOINLINE simsForkGradAt #-}

-- | Central finite differences of f at x along each coordinate of a flat
-- parameter vector.
fdGrad :: ([Double] -> Double) -> [Double] -> [Double]
fdGrad f xs = [ (f (bump i h) - f (bump i (-h))) / (2 * h) | i <- [0 .. length xs - 1] ]
  where
    h = 1e-6
    bump i d = [ if j == i then x + d else x | (j, x) <- zip [0 ..] xs ]

close :: Double -> [Double] -> [Double] -> Property
close tol as bs = counterexample (show (as, bs)) $
  length as == length bs && and (zipWith (\a b -> abs (a - b) <= tol * (1 + abs a + abs b)) as bs)

vecs :: Int -> Gen [Double]
vecs n = vectorOf n (choose (-1, 1))

matOf :: Int -> Int -> [Double] -> Mat
matOf r c xs = fromRows (take r (chunks xs))
  where chunks ys = let (a, b) = splitAt c ys in a : chunks b

flatM :: Mat -> [Double]
flatM = concat . toRows

main :: IO ()
main = hspec $ do
  describe "array programs" $ do
    it "a dense layer with arrays equals the same layer on lists (rel. diff < 1e-10)" $
      forAll (vecs 12) $ \w -> forAll (vecs 3) $ \b -> forAll (vecs 4) $ \x ->
        let ((gw, gb), gx) = $(grad 'layerA) ((matOf 3 4 w, vfromList b), vfromList x)
            ((gw', gb'), gx') = $(grad 'layerL) ((take 3 (chunk4 w), b), x)
            chunk4 ys = let (p, q) = splitAt 4 ys in p : chunk4 q
        in close 1e-10 (flatM gw ++ vtoList gb ++ vtoList gx) (concat gw' ++ gb' ++ gx')
    it "products, broadcasting, reductions: finite differences" $
      forAll (vecs 6) $ \a -> forAll (vecs 6) $ \b -> forAll (vecs 3) $ \v ->
        let f ps = let (pa, rest) = splitAt 6 ps; (pb, pv) = splitAt 6 rest
                   in mats (matOf 2 3 pa, matOf 2 3 pb, vfromList pv)
            (ga, gb, gv) = $(grad 'mats) (matOf 2 3 a, matOf 2 3 b, vfromList v)
        in close 1e-5 (flatM ga ++ flatM gb ++ vtoList gv) (fdGrad f (a ++ b ++ v))
    it "gather, scatter, reshape, outer, lists: finite differences" $
      forAll (vecs 3) $ \u -> forAll (vecs 4) $ \v ->
        let f ps = let (pu, pv) = splitAt 3 ps in structure (vfromList pu, vfromList pv)
            (gu, gv) = $(grad 'structure) (vfromList u, vfromList v)
        in close 1e-5 (vtoList gu ++ vtoList gv) (fdGrad f (u ++ v))
    it "a Constant batch: finite differences in the parameters, the data unchanged" $
      forAll (vecs 6) $ \w -> forAll (vecs 3) $ \b -> forAll (vecs 8) $ \x ->
        let batch = Constant (matOf 4 2 x, fromRows [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]])
            f ps = let (pw, pb) = splitAt 6 ps in batchLoss ((matOf 2 3 pw, vfromList pb), batch)
            ((gw, gb), batch') = $(grad 'batchLoss) ((matOf 2 3 w, vfromList b), batch)
        in close 1e-5 (flatM gw ++ vtoList gb) (fdGrad f (w ++ b)) .&&. batch' === batch
    it "jacobian and differentiate with array outputs" $ do
      let m = fromRows [[1, 2], [3, 4]]
      $(jacobian 'transposeF) m `shouldBe` [ fromRows [[1, 0], [0, 0]], fromRows [[0, 0], [1, 0]]
                                           , fromRows [[0, 1], [0, 0]], fromRows [[0, 0], [0, 1]] ]
      let (y, back) = $(differentiate 'transposeF) m
      y `shouldBe` fromRows [[1, 3], [2, 4]]
      back (fromRows [[1, 2], [3, 4]]) `shouldBe` fromRows [[1, 3], [2, 4]]
    it "shape errors raise an exception" $ do
      r <- try (evaluate (vsum (vadd (vfromList [1, 2]) (vfromList [1, 2, 3]))))
      either (\e -> show (e :: SomeException) `shouldContain` "shape") (const (expectationFailure "no error")) r
  describe "fork-join pairs (|*|)" $ do
    it "a forked tree gives the gradient of the unforked program" $
      forAll (choose (0, 9)) $ \k -> forAll (vectorOf k ((,) <$> choose (-1, 1) <*> choose (-1, 1))) $ \ps ->
        close 1e-12 (concat [[a, b] | (a, b) <- $(grad 'simsFork) ps])
                    (concat [[a, b] | (a, b) <- $(grad 'simsSeq) ps])
    it "a forked tree's gradient is the same, bit for bit, at two capabilities and at one" $
      forAll (choose (0.1, 1)) $ \c -> forAll (choose (2, 9)) $ \k ->
        forAll (vectorOf k ((,) <$> choose (-1, 1) <*> choose (-1, 1))) $ \ps ->
          ioProperty $ do
            n <- getNumCapabilities
            (gPar, gSeq) <- ((,) <$> simsForkGradAt (max 2 n) (c, ps) <*> simsForkGradAt 1 (c, ps))
                              `finally` setNumCapabilities n
            pure (gPar === gSeq)
    it "forked array operations: finite differences" $
      forAll (vecs 2) $ \v -> forAll (vecs 4) $ \m ->
        let f ps = let (pv, pm) = splitAt 2 ps in forkArrays (vfromList pv, matOf 2 2 pm)
            (gv, gm) = $(grad 'forkArrays) (vfromList v, matOf 2 2 m)
        in close 1e-5 (vtoList gv ++ flatM gm) (fdGrad f (v ++ m))
    it "(|*|) outside differentiable code is a strict pair" $
      (1 + 1 |*| "x") `shouldBe` (2 :: Int, "x")
  NestedPairs.spec
  Robust.spec
  Storable.spec
