{-# LANGUAGE TemplateHaskell, OverloadedStrings #-}
-- | The eval "gmm" (ADBench's Gaussian mixture): the log-posterior of n
-- points under k Gaussian components in d dimensions, each with a weight
-- alpha, a mean mu and the Cholesky factor Q of its inverse covariance
-- (diagonal exp q, strictly lower part l, column by column), with a
-- Wishart prior on the Q; and its gradient in alpha, mu, q and l.  The
-- objective is written over lists; its gradient over arrays, as one writes
-- it for speed (as dualrev-c does): each component's factor Q built by a
-- scatter, all the points centred and multiplied by it at once (dgemm), and
-- a log-sum-exp over the components of each point.
module Gmm (functions, Params, Data, objective, objectiveGrad) where

import Data.Aeson (object, (.=))
import Data.Aeson.Types (Parser, Value)
import Numeric.DualRev
import Numeric.DualRev.Array hiding (logSumExp)
import qualified Numeric.DualRev.Array as A

import Eval

-- | alpha, mu, q and l: what the gradient is taken in.
type Params = ([Double], [[Double]], [[Double]], [[Double]])

-- | The points, the Wishart prior's gamma and m, and its constant term
-- (a tuple: a data type of ours in a Constant is refused, its dual version
-- lacks the front end's Carrier instance).
type Data = ([[Double]], Double, Int, Double)

differentiable [d|
  gmm :: (Params, Constant Data) -> Double
  gmm ((alphas, mus, qs, ls), dat) =
    -0.5 * fromIntegral (n * d) * log (2 * pi)
      + sum [ logSumExp [ a + sum q - 0.5 * squaredNorm (qTimes (map exp q) l (zipWith (-) x mu))
                        | (a, mu, (q, l)) <- comps ]
            | x <- xs ]
      - fromIntegral n * logSumExp alphas
      + fromIntegral (length qs) * prior
      - sum [ 0.5 * gamma * gamma * (squaredNorm (map exp q) + squaredNorm l) - fromIntegral m * sum q
            | (q, l) <- zip qs ls ]
    where
      (xs, gamma, m, prior) = constant dat
      n = length xs
      d = length (head mus)
      comps = zip3 alphas mus (zip qs ls)

  -- Q v for Q of diagonal qdiag and strictly lower part l, column by column
  qTimes :: [Double] -> [Double] -> [Double] -> [Double]
  qTimes qdiag l v =
    foldl (zipWith (+)) (zipWith (*) qdiag v)
          [ replicate (i + 1) 0 ++ map (* vi) col | (i, vi, col) <- zip3 [0 :: Int ..] v (columns (length v - 1) l) ]

  columns :: Int -> [Double] -> [[Double]]
  columns len l = if len <= 0 then [] else take len l : columns (len - 1) (drop len l)

  squaredNorm :: [Double] -> Double
  squaredNorm v = sum (map (\a -> a * a) v)

  logSumExp :: [Double] -> Double
  logSumExp v = log (sum (map (\a -> exp (a - top)) v)) + top
    where top = maximum v

  -- the same over arrays: alpha (k), and mu, q, l with a component a row;
  -- the points (n x d), where exp q and l go in a d x d factor (row-major),
  -- the prior's gamma and m, and the constant terms
  gmmArrays :: ((Vec, Mat, Mat, Mat), Constant (Mat, [Int], Double, Int, Double)) -> Double
  gmmArrays ((alphas, mus, qs, ls), dat) =
    vsum (logSumExpRows (addRowVec (hstack (map term [0 .. k - 1])) (vadd alphas (sumRows qs))))
      - fromIntegral n * A.logSumExp alphas
      - (0.5 * gamma * gamma * (msumAll (msquare qd) + msumAll (msquare ls)) - fromIntegral m * msumAll qs)
      + consts
    where
      (xs, tri, gamma, m, consts) = constant dat
      n = mrows xs
      k = mrows mus
      d = mcols mus
      qd = mexp qs
      row i a = mflatten (mslice i 1 a)
      -- -0.5 |Q_i (x - mu_i)|^2 for every point x, a column
      term i =
        let factor = reshape d d (scatter (d * d) tri (vconcat [row i qd, row i ls]))
            z = matMulT False (addRowVec xs (vscale (-1) (row i mus))) True factor
        in reshape n 1 (vscale (-0.5) (sumRows (msquare z)))
  |]

foreign import ccall unsafe "math.h lgamma" lgamma :: Double -> Double

-- | The Wishart prior's constant term of one component: the log of its
-- normalising constant, with the multivariate log-gamma function.
wishartConstant :: Int -> Double -> Int -> Double
wishartConstant d gamma m =
  fromIntegral (dof * d) * (log gamma - 0.5 * log 2)
    - (0.25 * fromIntegral (d * (d - 1)) * log pi
       + sum [ lgamma (0.5 * fromIntegral dof + 0.5 * fromIntegral (1 - j)) | j <- [1 .. d] ])
  where dof = d + m + 1

objective :: (Params, Data) -> Double
objective (p, dat) = gmm (p, Constant dat)

-- | The gradient, from the arrays: shaped as the parameters (written out
-- as lists outside the timed runs, as the input is read into arrays).
objectiveGrad :: ((Vec, Mat, Mat, Mat), DataA) -> (Vec, Mat, Mat, Mat)
objectiveGrad (p, dat) = fst (gmmGrad (p, Constant dat))

-- | The points, where exp q and l go in a factor, gamma, m and the
-- constant terms (of the likelihood, and k times the prior's).
type DataA = (Mat, [Int], Double, Int, Double)

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate; the data compared with the recorded).
gmmGrad :: ((Vec, Mat, Mat, Mat), Constant DataA) -> ((Vec, Mat, Mat, Mat), Constant DataA)
gmmGrad = $(tapedGrad 'gmmArrays)
{-# NOINLINE gmmGrad #-}

input :: Value -> Parser (Params, Data)
input v = do
  d <- field "d" v
  mus <- field "mu" v
  params <- (,,,) <$> field "alpha" v <*> pure mus <*> field "q" v <*> field "l" v
  xs <- field "x" v
  gamma <- field "gamma" v
  m <- field "m" v
  pure (params, (xs, gamma, m, wishartConstant d gamma m))

-- | The input as arrays (read once, before the runs, as the lists are).
inputArrays :: Value -> Parser ((Vec, Mat, Mat, Mat), DataA)
inputArrays v = do
  ((alphas, mus, qs, ls), (xs, gamma, m, prior)) <- input v
  let d = length (head mus)
      k = length alphas
      n = length xs
      -- exp q_j at (j, j), then l column by column below the diagonal
      tri = [j * d + j | j <- [0 .. d - 1]] ++ [j * d + i | i <- [0 .. d - 1], j <- [i + 1 .. d - 1]]
      consts = -0.5 * fromIntegral (n * d) * log (2 * pi) + fromIntegral k * prior
  pure ( (vfromList alphas, fromRows mus, fromRows qs, fromRows ls)
       , (fromRows xs, tri, gamma, m, consts) )

functions :: [(String, Function)]
functions =
  [ ("objective", function input objective (scalar "gmm"))
  , ("jacobian", function inputArrays objectiveGrad (out . lists)) ]
  where
    lists (ga, gm, gq, gl) = (vtoList ga, toRows gm, toRows gq, toRows gl)
    -- the gradient shaped as the input's parameters
    out (alphas, mus, qs, ls) =
      output "gmm" (const (alphas ++ concat mus ++ concat qs ++ concat ls))
        (object ["alpha" .= alphas, "mu" .= mus, "q" .= qs, "l" .= ls])
