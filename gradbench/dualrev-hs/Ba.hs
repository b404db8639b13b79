{-# LANGUAGE TemplateHaskell, OverloadedStrings #-}
-- | The eval "ba" (ADBench's bundle adjustment): n cameras of 11
-- parameters (an angle-axis rotation, the centre, the focal length, the
-- principal point, two radial distortion coefficients), m points, and p
-- observations, observation i of point i mod m by camera i mod n with a
-- weight w_i and a feature f_i.  Its residuals are w_i (project(camera,
-- point) - f_i), two, and 1 - w_i^2.  The input is one camera, point,
-- weight and feature, copied n, m and p times, and every copy is
-- computed.  The Jacobian is sparse: an observation's residuals depend on
-- its camera, its point and its weight alone, so each observation's 3 x 15
-- block is a Jacobian of its own, placed in compressed sparse rows.
module Ba (functions, Obs, observations, residuals, baObjective, baJacobian, Csr (..)) where

import Control.DeepSeq (NFData (..))
import Data.Aeson (object, (.=))
import Data.Aeson.Types (Parser, Value)
import Numeric.DualRev

import Eval

differentiable [d|
  -- one observation's residuals from its camera, point and weight, the
  -- feature constant: the reprojection error's two, then the weight's
  residuals :: (([Double], [Double], Double), Constant [Double]) -> [Double]
  residuals ((cam, x, w), feat) = [w * (px - fx), w * (py - fy), 1 - w * w]
    where
      [fx, fy] = constant feat
      [px, py] = project cam x

  project :: [Double] -> [Double] -> [Double]
  project cam x = [u * distortion * f + u0, v * distortion * f + v0]
    where
      (rot, rest) = splitAt 3 cam
      (centre, [f, u0, v0, k1, k2]) = splitAt 3 rest
      [xc, yc, zc] = rodrigues rot (zipWith (-) x centre)
      u = xc / zc
      v = yc / zc
      rsq = u * u + v * v
      distortion = 1 + k1 * rsq + k2 * rsq * rsq

  -- p rotated by the angle-axis vector rot; without a rotation, to first
  -- order (the bindings of the rotation stay in its branch: the code is
  -- strict, and the unit axis is 0 / 0 there)
  rodrigues :: [Double] -> [Double] -> [Double]
  rodrigues rot p =
    if sqTheta /= 0
      then let theta = sqrt sqTheta
               axis = map (/ theta) rot
               c = cos theta
               s = sin theta
               tmp = sum (zipWith (*) axis p) * (1 - c)
           in zipWith3 (\pj cj aj -> pj * c + cj * s + aj * tmp) p (cross axis p) axis
      else zipWith (+) p (cross rot p)
    where sqTheta = sum (map (\r -> r * r) rot)

  cross :: [Double] -> [Double] -> [Double]
  cross [a0, a1, a2] [b0, b1, b2] = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
  cross _ _ = []
  |]

-- | An observation: its camera's and point's numbers, its camera, point,
-- weight and feature.
type Obs = (Int, Int, [Double], [Double], Double, [Double])

-- | The problem: n, m, and the observations.
type Problem = (Int, Int, [Obs])

-- | The observations of the input's copies: observation i sees point
-- i mod m from camera i mod n.
observations :: Int -> Int -> Int -> [Double] -> [Double] -> Double -> [Double] -> [Obs]
observations n m p cam x w feat =
  take p [ (j, k, cam, x, w, feat) | (j, k) <- zip (cycle [0 .. n - 1]) (cycle [0 .. m - 1]) ]

baObjective :: Problem -> [[Double]]
baObjective (_, _, obs) = [ residuals ((cam, x, w), Constant feat) | (_, _, cam, x, w, feat) <- obs ]

-- | Compressed sparse rows: the rows' starts (and the end), the columns and
-- the values; the reprojection errors' rows (two per observation, 15
-- entries each: the camera's, the point's, the weight's), then the
-- weights' (one entry).
data Csr = Csr [Int] [Int] [Double]

instance NFData Csr where
  rnf (Csr r c v) = rnf r `seq` rnf c `seq` rnf v

baJacobian :: Problem -> Csr
baJacobian (n, m, obs) = Csr rows cols vals
  where
    p = length obs
    rows = scanl (+) 0 (replicate (2 * p) 15 ++ replicate p 1)
    weightCol i = 11 * n + 3 * m + i
    blockCols (i, (ci, pt, _, _, _, _)) =
      let cs = [11 * ci .. 11 * ci + 10] ++ [11 * n + 3 * pt .. 11 * n + 3 * pt + 2] ++ [weightCol i]
      in cs ++ cs
    blocks = [ $(jacobian 'residuals) ((cam, x, w), Constant feat) | (_, _, cam, x, w, feat) <- obs ]
    cols = concatMap blockCols (zip [0 ..] obs) ++ map weightCol [0 .. p - 1]
    vals = concat [ flat r0 ++ flat r1 | (r0 : r1 : _) <- blocks ]
           ++ [ dw | (_ : _ : ((_, _, dw), _) : _) <- blocks ]
    flat ((dcam, dx, dw), _) = dcam ++ dx ++ [dw]

input :: Value -> Parser Problem
input v = do
  n <- field "n" v
  m <- field "m" v
  p <- field "p" v
  cam <- field "cam" v
  x <- field "x" v
  w <- field "w" v
  feat <- field "feat" v
  if n <= 0 || m <= 0 || p <= (0 :: Int)
    then fail "ba: \"n\", \"m\" and \"p\" must be positive"
    else if length cam /= 11 || length x /= 3 || length feat /= 2
    then fail "ba: \"cam\", \"x\" and \"feat\" must hold 11, 3 and 2 numbers"
    else pure (n, m, observations n m p cam x w feat)

-- | The first 30 entries of a list and the last: what the eval compares.
shown :: [a] -> [a]
shown xs = take 30 xs ++ [last xs]

functions :: [(String, Function)]
functions =
  [ ("objective", function input baObjective outObjective)
  , ("jacobian", function input baJacobian outJacobian) ]
  where
    -- every observation's residuals are the same: the first, and how many
    outObjective es@((e0 : e1 : ew : _) : _) =
      output "ba" (const [e0, e1, ew])
        (object [ "reproj_error" .= object ["elements" .= [e0, e1], "repeated" .= length es]
                , "w_err" .= object ["element" .= ew, "repeated" .= length es] ])
    outObjective _ = Left "ba: no residuals"
    outJacobian (Csr r c v) =
      output "ba" (const (shown v)) (object ["rows" .= shown r, "cols" .= shown c, "vals" .= shown v])
