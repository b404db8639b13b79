{-# LANGUAGE RankNTypes #-}
-- | Numeric.DualRev.AD against the @ad@ package it imitates: the same
-- polymorphic functions, the same points, through both, results equal to
-- 1e-12 (relative, with a floor of 1e-12 times the size of the case's
-- largest result, so that entries that cancel to near 0 are not held to
-- digits their terms do not have).  Points come from a fixed seed, so a
-- run is reproducible.  Prints a line per group and exits non-zero on any
-- mismatch.
--
-- Built only where @ad@ is installed (make -f haskell/haskell.mk
-- test-ad-compare); never a dependency of the package.
module Main (main) where

import Control.Monad (unless, when)
import Data.Bits (shiftR, xor)
import Data.IORef
import Data.Word (Word64)
import Numeric (log1mexp, log1pexp)
import System.Exit (exitFailure)
import Text.Printf (printf)

import Control.Comonad.Cofree (Cofree (..))
import Data.Foldable (toList)
import Data.Functor.Identity (Identity (..))

import qualified Numeric.AD as AD
import qualified Numeric.AD.Jet as ADJ
import qualified Numeric.AD.Mode.Forward as ADF
import qualified Numeric.AD.Mode.Kahn as ADK
import qualified Numeric.AD.Mode.Sparse as ADS
import qualified Numeric.AD.Mode.Tower as ADT
import qualified Numeric.AD.Halley.Double as ADHD
import qualified Numeric.AD.Rank1.Forward as AD1F
import qualified Numeric.AD.Rank1.Halley as AD1H
import qualified Numeric.AD.Rank1.Kahn as AD1K
import qualified Numeric.AD.Rank1.Newton as AD1N
import qualified Numeric.AD.Rank1.Sparse as AD1S
import qualified Numeric.AD.Rank1.Tower as AD1T
import qualified Numeric.AD.Mode.Reverse.Double as ADRD
import qualified Numeric.AD.Newton as ADN
import qualified Numeric.DualRev.AD as DR
import qualified Numeric.DualRev.AD.Jet as DRJ
import qualified Numeric.DualRev.AD.Mode.Forward as DRF
import qualified Numeric.DualRev.AD.Mode.Kahn as DRK
import qualified Numeric.DualRev.AD.Mode.Sparse as DRS
import qualified Numeric.DualRev.AD.Mode.Tower as DRT
import qualified Numeric.DualRev.AD.Halley.Double as DRHD
import qualified Numeric.DualRev.AD.Rank1.Forward as DR1F
import qualified Numeric.DualRev.AD.Rank1.Halley as DR1H
import qualified Numeric.DualRev.AD.Rank1.Kahn as DR1K
import qualified Numeric.DualRev.AD.Rank1.Newton as DR1N
import qualified Numeric.DualRev.AD.Rank1.Sparse as DR1S
import qualified Numeric.DualRev.AD.Rank1.Tower as DR1T
import qualified Numeric.DualRev.AD.Mode.Reverse.Double as DRRD
import qualified Numeric.DualRev.AD.Newton as DRN
import OverloadedDefs (Poly, curve, evalPoly, logSumExp, mlp, scalar, tall, trig, wide)

------------------------------------------------------------------------------
-- The functions, once for both libraries

-- evalPoly, trig, logSumExp, mlp, tall, wide, scalar, curve: the test
-- suite's "OverloadedDefs" (haskell/test).

-- | Every Floating method and a few Prelude numeric functions, for the
-- derivative rules one by one.
methods :: (RealFloat a) => [a] -> a
methods v =
  exp x + log (2 + x * x) + sqrt (1 + y * y) + sin x * cos y + tan (x / 4)
  + asin (x / 4) + acos (y / 4) + atan (x * y) + sinh x * cosh y + tanh (x - y)
  + asinh y + acosh (2 + x * x) + atanh (y / 4) + logBase (3 + x * x) (2 + y * y)
  + (1.5 + x * x) ** (y / 2) + x ^^ (2 :: Int) + recip (3 + y * y) + abs x * signum y
  + atan2 y (x + 5) + max x y - min x (2 * y) + fromIntegral (length v) * x / y
  where x = v !! 0
        y = v !! 1

rosenbrock :: Num a => [a] -> a
rosenbrock v = (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x)
  where x = v !! 0
        y = v !! 1

-- | Depths 0 to k of a stream, flattened (the entries of one node's
-- branches in order, depth by depth).
depths :: Foldable f => Int -> Cofree f a -> [a]
depths k c = concat (take (k + 1) (iterate (concatMap branches) [c]) >>= \level -> [map root level])
  where
    root (a :< _) = a
    branches (_ :< bs) = toList bs

-- | The same function written against each library's mode types, as a
-- program for ad spells its signatures.
forwardAD :: AD.AD s (ADF.Forward Double) -> AD.AD s (ADF.Forward Double)
forwardAD x = sin x * x + 3

forwardDR :: DRF.AD s (DRF.Forward Double) -> DRF.AD s (DRF.Forward Double)
forwardDR x = sin x * x + 3

kahnAD :: [AD.AD s (ADK.Kahn Double)] -> AD.AD s (ADK.Kahn Double)
kahnAD = trig

kahnDR :: [DRK.AD s (DRK.Kahn Double)] -> DRK.AD s (DRK.Kahn Double)
kahnDR = trig

sparseAD :: [AD.AD s (ADS.Sparse Double)] -> AD.AD s (ADS.Sparse Double)
sparseAD = trig

sparseDR :: [DRS.AD s (DRS.Sparse Double)] -> DRS.AD s (DRS.Sparse Double)
sparseDR = trig

towerAD :: AD.AD s (ADT.Tower Double) -> AD.AD s (ADT.Tower Double)
towerAD = scalar

towerDR :: DRT.AD s (DRT.Tower Double) -> DRT.AD s (DRT.Tower Double)
towerDR = scalar

------------------------------------------------------------------------------
-- Points from a fixed seed (splitmix64)

newtype G a = G (Word64 -> (a, Word64))

instance Functor G where
  fmap f (G g) = G (\s -> let (a, s') = g s in (f a, s'))

instance Applicative G where
  pure a = G (\s -> (a, s))
  G f <*> G g = G (\s -> let (h, s1) = f s; (a, s2) = g s1 in (h a, s2))

instance Monad G where
  G g >>= k = G (\s -> let (a, s1) = g s; G h = k a in h s1)

runG :: Word64 -> G a -> a
runG seed (G g) = fst (g seed)

word :: G Word64
word = G $ \s ->
  let s' = s + 0x9e3779b97f4a7c15
      z1 = (s' `xor` (s' `shiftR` 30)) * 0xbf58476d1ce4e5b9
      z2 = (z1 `xor` (z1 `shiftR` 27)) * 0x94d049bb133111eb
  in (z2 `xor` (z2 `shiftR` 31), s')

uniform :: Double -> Double -> G Double
uniform lo hi = (\w -> lo + (hi - lo) * fromIntegral (w `shiftR` 11) / 9007199254740992) <$> word

int :: Int -> Int -> G Int
int lo hi = (\w -> lo + fromIntegral (w `mod` fromIntegral (hi - lo + 1))) <$> word

vec :: Int -> G Double -> G [Double]
vec n g = sequence (replicate n g)

dbl :: G Double
dbl = uniform (-2) 2

genPoly :: G (Poly, [Double])
genPoly = do
  n <- int 1 4
  k <- int 1 6
  p <- sequence (replicate k ((,) <$> (fromIntegral <$> int (-5) 5) <*> sequence (replicate n (int 0 3))))
  xs <- vec n dbl
  pure (p, xs)

------------------------------------------------------------------------------
-- Comparison

-- | Equal to 1e-12 relative to the larger of the two and of the case's
-- largest result (at least 1); NaN matches NaN, an infinity itself.
same :: Double -> Double -> Double -> Bool
same scale a b
  | isNaN a || isNaN b = isNaN a && isNaN b
  | isInfinite a || isInfinite b = a == b
  | otherwise = abs (a - b) <= 1e-12 * maximum [abs a, abs b, scale]

sameList :: [Double] -> [Double] -> Bool
sameList as bs = length as == length bs && and (zipWith (same (scaleOf as)) as bs)

scaleOf :: [Double] -> Double
scaleOf as = maximum (1 : [abs a | a <- as, not (isNaN a || isInfinite a)])

-- | A case: what it is, ad's numbers, dualrev's numbers.
type Case = (String, [Double], [Double])

data Totals = Totals { groups :: !Int, cases :: !Int, bad :: !Int }

group :: IORef Totals -> String -> [Case] -> IO ()
group ref name cs = do
  let wrong = [c | c@(_, a, d) <- cs, not (sameList a d)]
      n = length cs
  printf "  %-58s %5d  %s\n" name n (if null wrong then "ok" else show (length wrong) ++ " MISMATCHED")
  mapM_ report (take 3 wrong)
  modifyIORef' ref (\t -> t { groups = groups t + 1, cases = cases t + n, bad = bad t + length wrong })

-- | A mismatched case: where, and the first entry that differs.
report :: Case -> IO ()
report (l, a, d) = do
  printf "      %s\n" l
  if length a /= length d
    then printf "        %d numbers from ad, %d from dualrev\n" (length a) (length d)
    else case [(i, u, v) | (i, u, v) <- zip3 [0 :: Int ..] a d, not (same scale u v)] of
      (i, u, v) : _ -> printf "        entry %d of %d: ad %s, dualrev %s (relative difference %.2g)\n"
                         i (length a) (show u) (show v) (abs (u - v) / maximum [abs u, abs v, scale])
      [] -> pure ()
  where scale = scaleOf a

-- | n cases from a generator.
over :: Word64 -> Int -> G x -> (x -> Case) -> [Case]
over seed n g mk = map mk (runG seed (sequence (replicate n g)))

label :: Show x => String -> x -> String
label what x = what ++ " at " ++ show x

pairs :: [(Double, Double)] -> [Double]
pairs = concatMap (\(a, b) -> [a, b])

------------------------------------------------------------------------------

main :: IO ()
main = do
  ref <- newIORef (Totals 0 0 0)
  let g = group ref
      n = 200
  putStrLn "Numeric.DualRev.AD against ad (Numeric.AD), 1e-12 relative:"

  -- gradients
  g "grad, grad' of random polynomials" $ over 1 n genPoly $ \(p, xs) ->
    let (va, ga) = AD.grad' (evalPoly p) xs
        (vd, gd) = DR.grad' (evalPoly p) xs
    in (label "poly" (p, xs), va : ga, vd : gd)
  g "grad, grad' of trig" $ over 2 n (int 1 6 >>= \k -> vec k dbl) $ \xs ->
    let (va, ga) = AD.grad' trig xs; (vd, gd) = DR.grad' trig xs
    in (label "trig" xs, va : ga, vd : gd)
  g "grad, grad' of logSumExp" $ over 3 n (int 1 6 >>= \k -> vec k (uniform (-3) 3)) $ \xs ->
    let (va, ga) = AD.grad' logSumExp xs; (vd, gd) = DR.grad' logSumExp xs
    in (label "logSumExp" xs, va : ga, vd : gd)
  g "grad, grad' of a 3-4-1 network (21 parameters)" $ over 4 n (vec 21 (uniform (-1) 1)) $ \ps ->
    let (va, ga) = AD.grad' mlp ps; (vd, gd) = DR.grad' mlp ps
    in (label "mlp" ps, va : ga, vd : gd)
  g "grad of every Floating method" $ over 5 n ((,) <$> uniform (-2) 2 <*> uniform 0.1 2) $ \(x, y) ->
    (label "methods" (x, y), AD.grad methods [x, y], DR.grad methods [x, y])
  g "gradWith, gradWith'" $ over 6 n (int 1 6 >>= \k -> vec k dbl) $ \xs ->
    let (va, wa) = AD.gradWith' (\x d -> x * d) trig xs
        (vd, wd) = DR.gradWith' (\x d -> x * d) trig xs
    in (label "trig" xs, va : wa ++ AD.gradWith (-) trig xs, vd : wd ++ DR.gradWith (-) trig xs)
  g "Mode.Reverse.Double grad'" $ over 7 n (int 1 6 >>= \k -> vec k dbl) $ \xs ->
    let (va, ga) = ADRD.grad' trig xs; (vd, gd) = DRRD.grad' trig xs
    in (label "trig" xs, va : ga, vd : gd)

  -- jacobians
  g "jacobian', jacobianT of a tall function (2 to 5)" $ over 8 n (vec 2 dbl) $ \xs ->
    ( label "tall" xs
    , concat [v : r | (v, r) <- AD.jacobian' tall xs] ++ concat (AD.jacobianT tall xs)
    , concat [v : r | (v, r) <- DR.jacobian' tall xs] ++ concat (DR.jacobianT tall xs) )
  g "jacobian', jacobianWith of a wide function (n to 2)" $ over 9 n (int 1 6 >>= \k -> vec k dbl) $ \xs ->
    ( label "wide" xs
    , concat [v : r | (v, r) <- AD.jacobian' wide xs] ++ concat (AD.jacobianWith (*) wide xs)
    , concat [v : r | (v, r) <- DR.jacobian' wide xs] ++ concat (DR.jacobianWith (*) wide xs) )

  -- one scalar, directions
  g "diff', diffF'" $ over 10 n dbl $ \x ->
    ( label "scalar, curve" x
    , let (v, d) = AD.diff' scalar x in v : d : pairs (AD.diffF' curve x)
    , let (v, d) = DR.diff' scalar x in v : d : pairs (DR.diffF' curve x) )
  g "du', duF'" $ over 11 n (int 1 6 >>= \k -> (,) <$> vec k dbl <*> vec k dbl) $ \(xs, vs) ->
    ( label "trig, wide" (xs, vs)
    , let (v, d) = AD.du' trig (zip xs vs) in v : d : pairs (AD.duF' wide (zip xs vs))
    , let (v, d) = DR.du' trig (zip xs vs) in v : d : pairs (DR.duF' wide (zip xs vs)) )

  -- second order
  g "hessian, hessian' of trig" $ over 12 n (int 1 5 >>= \k -> vec k dbl) $ \xs ->
    ( label "trig" xs
    , let (v, gh) = AD.hessian' trig xs in v : concat [d : r | (d, r) <- gh] ++ concat (AD.hessian trig xs)
    , let (v, gh) = DR.hessian' trig xs in v : concat [d : r | (d, r) <- gh] ++ concat (DR.hessian trig xs) )
  g "hessian of random polynomials" $ over 13 n genPoly $ \(p, xs) ->
    (label "poly" (p, xs), concat (AD.hessian (evalPoly p) xs), concat (DR.hessian (evalPoly p) xs))
  g "hessian of the network" $ over 14 20 (vec 21 (uniform (-1) 1)) $ \ps ->
    (label "mlp" ps, concat (AD.hessian mlp ps), concat (DR.hessian mlp ps))
  g "hessian of every Floating method" $ over 15 n ((,) <$> uniform (-2) 2 <*> uniform 0.1 2) $ \(x, y) ->
    (label "methods" (x, y), concat (AD.hessian methods [x, y]), concat (DR.hessian methods [x, y]))
  g "hessianF of a tall function" $ over 16 n (vec 2 dbl) $ \xs ->
    (label "tall" xs, concatMap concat (AD.hessianF tall xs), concatMap concat (DR.hessianF tall xs))
  g "hessianProduct'" $ over 17 n (int 1 5 >>= \k -> (,) <$> vec k dbl <*> vec k dbl) $ \(xs, vs) ->
    (label "trig" (xs, vs), pairs (AD.hessianProduct' trig (zip xs vs)), pairs (DR.hessianProduct' trig (zip xs vs)))

  -- nesting
  g "diff (\\x -> x * diff (\\y -> auto x + y) 1)" $ over 18 n dbl $ \x ->
    ( label "x" x
    , [AD.diff (\u -> u * AD.diff (\y -> AD.auto u + y) 1) x]
    , [DR.diff (\u -> u * DR.diff (\y -> DR.auto u + y) 1) x] )
  g "grad of a function of grad (inner inputs active)" $ over 19 n (int 1 5 >>= \k -> vec k dbl) $ \xs ->
    ( label "trig" xs
    , AD.grad (\v -> let gv = AD.grad trig v in sum (zipWith (*) gv gv)) xs
    , DR.grad (\v -> let gv = DR.grad trig v in sum (zipWith (*) gv gv)) xs )
  g "grad of grad at constants closing over outer variables" $ over 20 n ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, c) ->
    ( label "(x, y, c)" (x, y, c)
    , AD.grad (\v -> head v * head (AD.grad (\zs -> AD.auto (head v) * head zs * head zs + AD.auto (v !! 1) * sin (head zs)) [AD.auto c])) [x, y]
    , DR.grad (\v -> head v * head (DR.grad (\zs -> DR.auto (head v) * head zs * head zs + DR.auto (v !! 1) * sin (head zs)) [DR.auto c])) [x, y] )
  g "three levels of diff, closing over both outer ones" $ over 21 n ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, b, c) ->
    ( label "(x, b, c)" (x, b, c)
    , [AD.diff (\u -> AD.diff (\y -> AD.diff (\z -> AD.auto (AD.auto u) * sin (AD.auto y * z) * z) (AD.auto (AD.auto c))) (AD.auto b)) x]
    , [DR.diff (\u -> DR.diff (\y -> DR.diff (\z -> DR.auto (DR.auto u) * sin (DR.auto y * z) * z) (DR.auto (DR.auto c))) (DR.auto b)) x] )
  g "third derivative by three nested diffs" $ over 22 n dbl $ \x ->
    ( label "sin (x^2)" x
    , [AD.diff (\u -> AD.diff (\w -> AD.diff (\z -> sin (z * z)) w) u) x]
    , [DR.diff (\u -> DR.diff (\w -> DR.diff (\z -> sin (z * z)) w) u) x] )
  g "grad of the sum of a hessian" $ over 23 n (int 1 4 >>= \k -> vec k dbl) $ \xs ->
    ( label "trig" xs
    , AD.grad (sum . concat . AD.hessian trig) xs
    , DR.grad (sum . concat . DR.hessian trig) xs )

  -- Newton's method
  g "findZero, findZeroNoEq (first 60 iterates)" $ over 24 n (uniform 0.1 100) $ \c ->
    ( label "x^2 - c" c
    , take 60 (ADN.findZero (\x -> x * x - AD.auto c) 1) ++ take 20 (ADN.findZeroNoEq (\x -> x * x * x - AD.auto c) 1)
    , take 60 (DRN.findZero (\x -> x * x - DR.auto c) 1) ++ take 20 (DRN.findZeroNoEq (\x -> x * x * x - DR.auto c) 1) )
  g "inverse, fixedPoint (first 60 iterates)" $ over 25 n ((,) <$> uniform (-10) 10 <*> uniform 0 1) $ \(y, x0) ->
    ( label "(y, x0)" (y, x0)
    , take 60 (ADN.inverse (\x -> x * x * x + x) 0 y) ++ take 60 (ADN.fixedPoint cos x0)
    , take 60 (DRN.inverse (\x -> x * x * x + x) 0 y) ++ take 60 (DRN.fixedPoint cos x0) )
  g "extremum (first 60 iterates)" $ over 26 n (uniform (-3) 3) $ \a ->
    ( label "a" a
    , take 60 (ADN.extremum (\x -> cosh (x - AD.auto a) + x * x / 2) 0)
    , take 60 (DRN.extremum (\x -> cosh (x - DR.auto a) + x * x / 2) 0) )
  g "the documented Newton examples" $
    [ ( "findZero, inverse, fixedPoint, extremum"
      , take 10 (ADN.findZero (\x -> x ^ (2 :: Int) - 4) 1) ++ [last (take 10 (ADN.inverse sqrt 1 (sqrt 10))), last (take 10 (ADN.fixedPoint cos 1)), last (take 10 (ADN.extremum cos 1))]
      , take 10 (DRN.findZero (\x -> x ^ (2 :: Int) - 4) 1) ++ [last (take 10 (DRN.inverse sqrt 1 (sqrt 10))), last (take 10 (DRN.fixedPoint cos 1)), last (take 10 (DRN.extremum cos 1))] ) ]

  -- gradient descent
  -- iterates: a last-bit difference in a gradient (the adjoints are summed in
  -- another order) grows along a descent, and changes the first one past
  -- 1e-12 after some 30 steps of these; the comparisons stop before
  g "gradientDescent (first 20 iterates)" $ over 27 n (int 1 4 >>= \k -> vec k dbl) $ \xs ->
    ( label "trig" xs
    , concat (take 20 (AD.gradientDescent trig xs)) ++ concat (take 20 (AD.gradientDescent rosenbrock (take 2 (xs ++ xs))))
    , concat (take 20 (DR.gradientDescent trig xs)) ++ concat (take 20 (DR.gradientDescent rosenbrock (take 2 (xs ++ xs)))) )
  g "gradientAscent (first 20 iterates)" $ over 28 n (int 1 4 >>= \k -> vec k dbl) $ \xs ->
    ( label "-trig" xs
    , concat (take 20 (AD.gradientAscent (negate . trig) xs))
    , concat (take 20 (DR.gradientAscent (negate . trig) xs)) )
  g "stochasticGradientDescent (first 50 iterates)" $ over 29 n (vec 2 dbl) $ \w0 ->
    let examples = [(x, 3 * x - 1) | x <- [-1, -0.5 .. 1]] :: [(Double, Double)]
    in ( label "least squares from" w0
       , concat (take 50 (AD.stochasticGradientDescent (\(a, b) v -> (head v * AD.auto a + v !! 1 - AD.auto b) ^ (2 :: Int)) examples w0))
       , concat (take 50 (DR.stochasticGradientDescent (\(a, b) v -> (head v * DR.auto a + v !! 1 - DR.auto b) ^ (2 :: Int)) examples w0)) )
  -- each line search is 20 Newton steps to a zero of a derivative that
  -- cancels to rounding noise near it, so a step length is only as exact as
  -- that noise; on a function that is not convex along the line the steps
  -- can also wander, and a last-bit difference sends them elsewhere: the
  -- first step on Rosenbrock, all iterates on a quadratic
  g "conjugateGradientDescent: the first step on Rosenbrock" $ over 30 n (vec 2 dbl) $ \x0 ->
    ( label "from" x0
    , concat (take 2 (AD.conjugateGradientDescent rosenbrock x0))
    , concat (take 2 (DR.conjugateGradientDescent rosenbrock x0)) )
  g "conjugateGradientDescent of the documentation" $
    [ ( "rosenbrock from [0, 0], 6 iterates"
      , concat (take 6 (AD.conjugateGradientDescent rosenbrock [0, 0]))
      , concat (take 6 (DR.conjugateGradientDescent rosenbrock [0, 0])) ) ]
  g "conjugateGradientAscent of a concave quadratic" $ over 31 n (vec 3 dbl) $ \x0 ->
    let f v = negate (sum (zipWith (*) [1, 2, 3] (map (\x -> (x - 1) * (x - 1)) v)) + head v * v !! 2)
    in (label "from" x0, concat (take 4 (AD.conjugateGradientAscent f x0)), concat (take 4 (DR.conjugateGradientAscent f x0)))

  -- documented examples from ad's haddocks
  g "grad, jacobian, hessian, hessianF, diff examples of ad's documentation" $
    [ ( "grad", AD.grad (\v -> head v * v !! 1 + v !! 2) [1, 2, 3], DR.grad (\v -> head v * v !! 1 + v !! 2) [1, 2, 3] )
    , ( "jacobian", concat (AD.jacobian (\v -> [v !! 1, head v, head v * v !! 1]) [2, 1]), concat (DR.jacobian (\v -> [v !! 1, head v, head v * v !! 1]) [2, 1]) )
    , ( "hessian", concat (AD.hessian (\v -> head v * v !! 1) [1, 2]), concat (DR.hessian (\v -> head v * v !! 1) [1, 2]) )
    , ( "hessianF", concatMap concat (AD.hessianF (\v -> [head v * v !! 1, head v + v !! 1, exp (head v) * cos (v !! 1)]) [1, 2])
      , concatMap concat (DR.hessianF (\v -> [head v * v !! 1, head v + v !! 1, exp (head v) * cos (v !! 1)]) [1, 2]) )
    , ( "diff', diffF'", [AD.diff sin 0] ++ pairs [AD.diff' sin 0, AD.diff' exp 0] ++ pairs (AD.diffF' (\a -> [sin a, cos a]) 0)
      , [DR.diff sin 0] ++ pairs [DR.diff' sin 0, DR.diff' exp 0] ++ pairs (DR.diffF' (\a -> [sin a, cos a]) 0) ) ]

  -- derivatives of every order
  g "grads of trig (depths 0 to 3)" $ over 40 n (int 1 3 >>= \k -> vec k dbl) $ \xs ->
    (label "trig" xs, depths 3 (AD.grads trig xs), depths 3 (DR.grads trig xs))
  g "grads of random polynomials (depths 0 to 3)" $ over 41 n genPoly $ \(p, xs) ->
    (label "poly" (p, xs), depths 3 (AD.grads (evalPoly p) xs), depths 3 (DR.grads (evalPoly p) xs))
  g "jacobians of a tall function (depths 0 to 2)" $ over 42 n (vec 2 dbl) $ \xs ->
    (label "tall" xs, concatMap (depths 2) (AD.jacobians tall xs), concatMap (depths 2) (DR.jacobians tall xs))
  g "hessianF' of a tall function" $ over 43 n (vec 2 dbl) $ \xs ->
    let flat h = concat [v : concat [d : r | (d, r) <- rows] | (v, rows) <- h]
    in (label "tall" xs, flat (AD.hessianF' tall xs), flat (DR.hessianF' tall xs))
  g "Jet: levels 0 to 2 of jet (grads trig)" $ over 44 n (int 1 3 >>= \k -> vec k dbl) $ \xs ->
    let ja = ADJ.jet (AD.grads trig xs)
        jd = DRJ.jet (DR.grads trig xs)
    in ( label "trig" xs
       , ADJ.headJet ja : ADJ.headJet (ADJ.tailJet ja) ++ concat (ADJ.headJet (ADJ.tailJet (ADJ.tailJet ja)))
       , DRJ.headJet jd : DRJ.headJet (DRJ.tailJet jd) ++ concat (DRJ.headJet (DRJ.tailJet (DRJ.tailJet jd))) )
  g "unjet (three levels of the stream) and Newton's eval" $ over 57 n ((,) <$> dbl <*> vec 2 dbl) $ \(x, xs) ->
    let levels3 (a :< Identity (b :< Identity (c :< _))) = [a, b, c]
        cube (Identity t) = t * sin t + t * t * t
    in ( label "(x, xs)" (x, xs)
       , levels3 (ADJ.unjet (ADJ.jet (AD.grads cube (Identity x)))) ++ [ADN.eval trig xs]
       , levels3 (DRJ.unjet (DRJ.jet (DR.grads cube (Identity x)))) ++ [DRN.eval trig xs] )
  g "vgrad, vgrad', vgrads (depths 0 to 2) of a curried function" $ over 45 n ((,,) <$> dbl <*> dbl <*> dbl) $ \(x, y, z) ->
    let fa a b c = a * sin b + exp (c / 3) * a * b
        fd a b c = a * sin b + exp (c / 3) * a * b
        (va, ga) = AD.vgrad' fa x y z
        (vd, gd) = DR.vgrad' fd x y z
    in ( label "(x, y, z)" (x, y, z)
       , AD.vgrad fa x y z ++ va : ga ++ depths 2 (AD.vgrads fa x y z)
       , DR.vgrad fd x y z ++ vd : gd ++ depths 2 (DR.vgrads fd x y z) )

  -- towers
  g "diffs, diffs0, diffsF, diffs0F (first 6)" $ over 46 n dbl $ \x ->
    ( label "scalar, curve" x
    , take 6 (AD.diffs scalar x) ++ take 6 (AD.diffs0 (\u -> u * u) x) ++ concatMap (take 6) (AD.diffsF curve x) ++ concatMap (take 6) (AD.diffs0F curve x)
    , take 6 (DR.diffs scalar x) ++ take 6 (DR.diffs0 (\u -> u * u) x) ++ concatMap (take 6) (DR.diffsF curve x) ++ concatMap (take 6) (DR.diffs0F curve x) )
  g "dus, dus0, dusF (first 5)" $ over 47 n (int 1 4 >>= \k -> (,) <$> vec k dbl <*> vec k dbl) $ \(xs, vs) ->
    let line = zipWith (\a b -> [a, b]) xs vs
    in ( label "trig, wide" (xs, vs)
       , take 5 (AD.dus trig line) ++ take 5 (AD.dus0 trig line) ++ concatMap (take 5) (AD.dusF wide line)
       , take 5 (DR.dus trig line) ++ take 5 (DR.dus0 trig line) ++ concatMap (take 5) (DR.dusF wide line) )
  g "taylor, taylor0, maclaurin, maclaurin0 (first 8 terms)" $ over 48 n ((,) <$> uniform (-1) 1 <*> uniform (-0.5) 0.5) $ \(x, dx) ->
    ( label "scalar" (x, dx)
    , take 8 (AD.taylor scalar x dx) ++ take 8 (AD.taylor0 (\u -> u * u) x dx) ++ take 8 (AD.maclaurin scalar dx) ++ take 8 (AD.maclaurin0 (\u -> u * u) dx)
    , take 8 (DR.taylor scalar x dx) ++ take 8 (DR.taylor0 (\u -> u * u) x dx) ++ take 8 (DR.maclaurin scalar dx) ++ take 8 (DR.maclaurin0 (\u -> u * u) dx) )
  g "Mode.Tower diff', du', duF' (on towers)" $ over 49 n ((,) <$> dbl <*> (zip <$> vec 2 dbl <*> vec 2 dbl)) $ \(x, xvs) ->
    ( label "scalar, trig, wide" (x, xvs)
    , let (v, d) = ADT.diff' scalar x; (w, e) = ADT.du' trig xvs in [ADT.diff scalar x, v, d, w, e, ADT.du trig xvs] ++ pairs (ADT.duF' wide xvs) ++ ADT.duF wide xvs
    , let (v, d) = DRT.diff' scalar x; (w, e) = DRT.du' trig xvs in [DRT.diff scalar x, v, d, w, e, DRT.du trig xvs] ++ pairs (DRT.duF' wide xvs) ++ DRT.duF wide xvs )

  -- the rest of the names, and signatures naming the mode types
  g "jacobianWith', jacobianWithT, hessianProduct, duF, diffF" $ over 50 n (vec 2 dbl) $ \xs ->
    ( label "tall" xs
    , concat [v : r | (v, r) <- AD.jacobianWith' (+) tall xs] ++ concat (AD.jacobianWithT (*) tall xs) ++ AD.hessianProduct trig (zip xs xs) ++ AD.duF tall (zip xs xs) ++ AD.diffF curve (head xs)
    , concat [v : r | (v, r) <- DR.jacobianWith' (+) tall xs] ++ concat (DR.jacobianWithT (*) tall xs) ++ DR.hessianProduct trig (zip xs xs) ++ DR.duF tall (zip xs xs) ++ DR.diffF curve (head xs) )
  g "AD s (Forward a), (Kahn a), (Sparse a), (Tower a) signatures" $ over 51 n (vec 3 dbl) $ \xs ->
    ( label "xs" xs
    , [ADF.diff forwardAD (head xs)] ++ ADK.grad kahnAD xs ++ ADS.grad sparseAD xs ++ take 5 (ADT.diffs towerAD (head xs))
    , [DRF.diff forwardDR (head xs)] ++ DRK.grad kahnDR xs ++ DRS.grad sparseDR xs ++ take 5 (DRT.diffs towerDR (head xs)) )
  g "Rank1: Forward diff', du; Kahn grad; Sparse jacobian, hessian, grads; Tower diffs; Newton" $ over 54 n (vec 2 dbl) $ \xs ->
    let x = head xs
        xvs = zip xs (reverse xs)
    in ( label "xs" xs
       , let (v, d) = AD1F.diff' scalar x in [v, d, AD1F.du trig xvs] ++ AD1K.grad trig xs ++ concat (AD1S.jacobian tall xs)
           ++ concat (AD1S.hessian trig xs) ++ depths 2 (AD1S.grads trig xs) ++ take 5 (AD1T.diffs scalar x)
           ++ take 20 (AD1N.findZero (\u -> u * u * u - 2 - fromRational (toRational (abs x))) 1) ++ concat (take 10 (AD1N.gradientDescent trig xs))
       , let (v, d) = DR1F.diff' scalar x in [v, d, DR1F.du trig xvs] ++ DR1K.grad trig xs ++ concat (DR1S.jacobian tall xs)
           ++ concat (DR1S.hessian trig xs) ++ depths 2 (DR1S.grads trig xs) ++ take 5 (DR1T.diffs scalar x)
           ++ take 20 (DR1N.findZero (\u -> u * u * u - 2 - fromRational (toRational (abs x))) 1) ++ concat (take 10 (DR1N.gradientDescent trig xs)) )
  g "Halley: findZero(NoEq), inverse(NoEq), fixedPoint(NoEq), extremum(NoEq) (first 30)" $ over 55 n ((,) <$> uniform 0.1 100 <*> uniform (-3) 3) $ \(c, a) ->
    let cube x = x * x * x + x
    in ( label "(c, a)" (c, a)
       , take 30 (AD1H.findZero (\x -> x * x - fromRational (toRational c)) 1) ++ take 10 (AD1H.findZeroNoEq (\x -> x * x * x - 2) 1)
           ++ take 30 (AD1H.inverse cube 0 a) ++ take 10 (AD1H.inverseNoEq cube 0 a) ++ take 30 (AD1H.fixedPoint cos 1) ++ take 10 (AD1H.fixedPointNoEq cos a)
           ++ take 30 (AD1H.extremum (\x -> cosh (x - fromRational (toRational a)) + x * x / 2) 0) ++ take 10 (AD1H.extremumNoEq cos 1)
           ++ take 30 (ADHD.findZero (\x -> x * x - fromRational (toRational c)) 1)
       , take 30 (DR1H.findZero (\x -> x * x - fromRational (toRational c)) 1) ++ take 10 (DR1H.findZeroNoEq (\x -> x * x * x - 2) 1)
           ++ take 30 (DR1H.inverse cube 0 a) ++ take 10 (DR1H.inverseNoEq cube 0 a) ++ take 30 (DR1H.fixedPoint cos 1) ++ take 10 (DR1H.fixedPointNoEq cos a)
           ++ take 30 (DR1H.extremum (\x -> cosh (x - fromRational (toRational a)) + x * x / 2) 0) ++ take 10 (DR1H.extremumNoEq cos 1)
           ++ take 30 (DRHD.findZero (\x -> x * x - fromRational (toRational c)) 1) )
  g "Newton's NoEq forms: inverseNoEq, fixedPointNoEq, extremumNoEq (first 30)" $ over 56 n (uniform (-3) 3) $ \a ->
    ( label "a" a
    , take 30 (ADN.inverseNoEq (\x -> x * x * x + x) 0 a) ++ take 30 (ADN.fixedPointNoEq cos a) ++ take 30 (ADN.extremumNoEq (\x -> cosh (x - AD.auto a) + x * x / 2) 0)
    , take 30 (DRN.inverseNoEq (\x -> x * x * x + x) 0 a) ++ take 30 (DRN.fixedPointNoEq cos a) ++ take 30 (DRN.extremumNoEq (\x -> cosh (x - DR.auto a) + x * x / 2) 0) )
  g "log1pexp, log1mexp and their derivatives" $ over 52 n (uniform (-30) (-0.01)) $ \x ->
    ( label "x" x
    , let (a, b) = AD.diff' log1pexp x; (c, d) = AD.diff' log1mexp x in [a, b, c, d]
    , let (a, b) = DR.diff' log1pexp x; (c, d) = DR.diff' log1mexp x in [a, b, c, d] )
  g "constrainedDescent (first 40 pairs, then the 400th point)" $ over 53 n ((,) <$> uniform (-3) 3 <*> uniform 0.5 2) $ \(x0, r) ->
    let objA v = (head v - 3) ^ (2 :: Int) + (v !! 1 + 1) ^ (2 :: Int)
        conA = [ADN.CC (\v -> head v * head v + v !! 1 * v !! 1 - AD.auto (r * r))]
        conD = [DRN.CC (\v -> head v * head v + v !! 1 * v !! 1 - DR.auto (r * r))]
        flat ps = concat [v : p | (v, p) <- ps]
        ra = ADN.constrainedDescent objA conA [x0, x0]
        rd = DRN.constrainedDescent objA conD [x0, x0]
    in ( label "(x0, r)" (x0, r)
       , flat (take 40 ra) ++ map (\u -> fromIntegral (round (u * 1e6) :: Integer)) (snd (ra !! 400))
       , flat (take 40 rd) ++ map (\u -> fromIntegral (round (u * 1e6) :: Integer)) (snd (rd !! 400)) )

  -- Float: ad computes in Float, dualrev in Double rounded back, so only
  -- Float's precision is shared
  floatBad <- newIORef (0 :: Int)
  let floats = over 32 n (int 1 6 >>= \k -> vec k dbl) $ \xs ->
        let xf = map realToFrac xs :: [Float]
        in (label "trig at Float" xs, map realToFrac (AD.grad trig xf), map realToFrac (DR.grad trig xf))
      floatWrong = [c | c@(_, a, d) <- floats, not (and (zipWith (\u v -> abs (u - v) <= 1e-5 * max 1 (abs u)) a d))]
  printf "  %-58s %5d  %s\n" "grad at Float (1e-5: Float's precision)" (length floats)
    (if null floatWrong then "ok" else show (length floatWrong) ++ " MISMATCHED")
  writeIORef floatBad (length floatWrong)

  -- where the two rules differ (at a tie, at a kink, where ad gives NaN):
  -- shown, not counted
  putStrLn "Known differences (not counted):"
  printf "  grad (\\[x,y] -> x**y) [0,2]:   ad %s, dualrev %s\n"
    (show (AD.grad (\v -> head v ** v !! 1) [0, 2 :: Double])) (show (DR.grad (\v -> head v ** v !! 1) [0, 2 :: Double]))
  printf "  diff (\\x -> max x 3) 3:        ad %s, dualrev %s\n"
    (show (AD.diff (\x -> max x 3) (3 :: Double))) (show (DR.diff (\x -> max x 3) (3 :: Double)))
  printf "  diff significand 2.3:          ad %s, dualrev %s\n"
    (show (AD.diff significand (2.3 :: Double))) (show (DR.diff significand (2.3 :: Double)))
  -- ad's dus0F does not pad (its documentation says it does, as dus0 does)
  printf "  take 4 (dus0F (\\[x] -> [x*x]) [[1,1]]): ad %s, dualrev %s\n"
    (show (map (take 4) (AD.dus0F (\v -> [head v * head v]) [[1, 1 :: Double]]))) (show (map (take 4) (DR.dus0F (\v -> [head v * head v]) [[1, 1 :: Double]])))

  Totals gs cs bs <- readIORef ref
  fb <- readIORef floatBad
  printf "%d groups, %d cases, %d mismatched\n" (gs + 1) (cs + length floats) (bs + fb)
  when (bs + fb > 0) exitFailure
  unless (bs + fb > 0) (putStrLn "ad comparison: all equal")
