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
-- block is the gradient of its residual with respect to its own copy of
-- those 15 numbers.  Written for speed, as dualrev-c's: every observation
-- at once over arrays (each of the 15 numbers a vector over the
-- observations), and the gradient of the sum of each residual over the
-- observations (taped), whose entry i is observation i's derivative, as no
-- two observations share a copy.  Where a camera has no rotation (its
-- angle-axis vector 0, a branch of its own), each observation's Jacobian
-- is taken from the scalar residuals instead.  The blocks go into
-- compressed sparse rows.
module Ba (functions, Obs, observations, residuals, baObjective, baJacobian, blockwise, inputArrays, Csr (..)) where

import Control.DeepSeq (NFData (..))
import Control.Monad (when)
import Control.Monad.ST (runST)
import Data.Aeson (object, (.=))
import Data.Aeson.Types (Parser, Value)
import qualified Data.Vector.Storable as VS
import qualified Data.Vector.Storable.Mutable as MVS
import Numeric.DualRev
import Numeric.DualRev.Array

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

  -- every observation's two reprojection errors at once: each of the
  -- camera's 11 numbers, the point's 3 and the weight a vector over the
  -- observations (observation i's copy at i), the features data; a
  -- rotation in every camera (1 - cos theta as 2 sin^2 (theta / 2))
  reprojections :: ([Vec], [Vec], Vec, Constant (Vec, Vec)) -> (Vec, Vec)
  reprojections (cam, x, w, feat) = (vmul w (vsub px fx), vmul w (vsub py fy))
    where
      (fx, fy) = constant feat
      [r0, r1, r2, c0, c1, c2, f, u0, v0, k1, k2] = cam
      [p0, p1, p2] = zipWith vsub x [c0, c1, c2]
      theta = vsqrt (vadd (vadd (vsquare r0) (vsquare r1)) (vsquare r2))
      [a0, a1, a2] = map (\r -> vdiv r theta) [r0, r1, r2]
      co = vcos theta
      si = vsin theta
      tmp = vmul (vadd (vadd (vmul a0 p0) (vmul a1 p1)) (vmul a2 p2))
                 (vscale 2 (vsquare (vsin (vscale 0.5 theta))))
      turned pj cj aj = vadd (vadd (vmul pj co) (vmul cj si)) (vmul aj tmp)
      xc = turned p0 (vsub (vmul a1 p2) (vmul a2 p1)) a0
      yc = turned p1 (vsub (vmul a2 p0) (vmul a0 p2)) a1
      zc = turned p2 (vsub (vmul a0 p1) (vmul a1 p0)) a2
      u = vdiv xc zc
      v = vdiv yc zc
      rsq = vadd (vsquare u) (vsquare v)
      -- a f (1 + k1 rsq + k2 rsq^2)
      distorted a = let af = vmul a f
                    in vadd af (vmul af (vadd (vmul k1 rsq) (vmul k2 (vsquare rsq))))
      px = vadd (distorted u) u0
      py = vadd (distorted v) v0

  -- the sums over the observations of each residual: their gradients hold
  -- every observation's rows of the Jacobian
  sumX :: ([Vec], [Vec], Vec, Constant (Vec, Vec)) -> Double
  sumX a = vsum (fst (reprojections a))

  sumY :: ([Vec], [Vec], Vec, Constant (Vec, Vec)) -> Double
  sumY a = vsum (snd (reprojections a))

  -- (the sum of 1 - w^2 less the constant)
  sumW :: Vec -> Double
  sumW w = negate (vsum (vsquare w))
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
data Csr = Csr (VS.Vector Int) (VS.Vector Int) (VS.Vector Double)

instance NFData Csr where
  rnf (Csr r c v) = rnf r `seq` rnf c `seq` rnf v

-- | The problem as arrays: the cameras (n x 11, a camera a row), the
-- points (m x 3), each observation's camera and point, its weight and its
-- feature's two coordinates.
data Arrays = Arrays (VS.Vector Double) (VS.Vector Double) (VS.Vector Int) (VS.Vector Int)
                     (VS.Vector Double) (VS.Vector Double) (VS.Vector Double)

instance NFData Arrays where
  rnf (Arrays a b c d e f g) = rnf a `seq` rnf b `seq` rnf c `seq` rnf d `seq` rnf e `seq` rnf f `seq` rnf g

baJacobian :: (Problem, Arrays) -> Csr
baJacobian (problem@(n, m, _), Arrays cams points camOf pointOf ws fxs fys)
  | any unrotated [0 .. n - 1] = blockwise problem
  | otherwise = Csr rows cols vals
  where
    p = VS.length ws
    -- (the scalar residuals' test: a rotation whose squares underflow is none)
    unrotated c = sum [ r * r | j <- [0, 1, 2], let r = cams VS.! (11 * c + j) ] == 0
    -- observation i's copy of number j of its camera, of its point
    camCopy j = vecFromStorable (VS.generate p (\i -> VS.unsafeIndex cams (11 * VS.unsafeIndex camOf i + j)))
    pointCopy j = vecFromStorable (VS.generate p (\i -> VS.unsafeIndex points (3 * VS.unsafeIndex pointOf i + j)))
    arg = (map camCopy [0 .. 10], map pointCopy [0 .. 2], vecFromStorable ws,
           Constant (vecFromStorable fxs, vecFromStorable fys))
    rows = VS.generate (3 * p + 1) (\r -> if r <= 2 * p then 15 * r else 30 * p + r - 2 * p)
    w0 = 11 * n + 3 * m
    -- each residual's gradient: a vector over the observations per number
    -- (the camera's 11, the point's 3, the weight), one after the other;
    -- entry i of each goes to observation i's rows, written in order (a
    -- pass per number wrote every 30th entry: a cache line a store)
    flat (gc, gx, gw, _) = VS.concat (map vecToStorable (gc ++ gx ++ [gw]))
    (cols, vals) = runST $ do
      cs <- MVS.unsafeNew (31 * p)
      vs <- MVS.unsafeNew (31 * p)
      let dX = flat (sumXGrad arg)
          dY = flat (sumYGrad arg)
      upTo p $ \i -> upTo 15 $ \j -> do
        let e = 30 * i + j
            c = column j i
        MVS.unsafeWrite cs e c
        MVS.unsafeWrite cs (e + 15) c
        MVS.unsafeWrite vs e (VS.unsafeIndex dX (j * p + i))
        MVS.unsafeWrite vs (e + 15) (VS.unsafeIndex dY (j * p + i))
      let dW = vecToStorable (sumWGrad (vecFromStorable ws))
      upTo p $ \i -> do
        MVS.unsafeWrite vs (30 * p + i) (VS.unsafeIndex dW i)
        MVS.unsafeWrite cs (30 * p + i) (w0 + i)
      (,) <$> VS.unsafeFreeze cs <*> VS.unsafeFreeze vs
    -- a loop over 0 .. k - 1 (forM_ over [0 .. p - 1] here walked a list
    -- GHC had floated out and shared)
    upTo k f = let go i = when (i < k) (f i >> go (i + 1)) in go (0 :: Int)
    -- observation i's column of its number j
    column j i
      | j < 11 = 11 * VS.unsafeIndex camOf i + j
      | j < 14 = 11 * n + 3 * VS.unsafeIndex pointOf i + j - 11
      | otherwise = w0 + i

sumXGrad, sumYGrad :: ([Vec], [Vec], Vec, Constant (Vec, Vec)) -> ([Vec], [Vec], Vec, Constant (Vec, Vec))
sumXGrad = $(tapedGrad 'sumX)
{-# NOINLINE sumXGrad #-}
sumYGrad = $(tapedGrad 'sumY)
{-# NOINLINE sumYGrad #-}

sumWGrad :: Vec -> Vec
sumWGrad = $(tapedGrad 'sumW)
{-# NOINLINE sumWGrad #-}

-- | Each observation's 3 x 15 block a Jacobian of its own, from the scalar
-- residuals (any rotation, none included).
blockwise :: Problem -> Csr
blockwise (n, m, obs) = Csr (VS.fromList rows) (VS.fromList cols) (VS.fromList vals)
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
input v = fst <$> inputArrays v

-- | The problem, and as arrays: the input's camera, point, weight and
-- feature copied as 'observations' copies them.
inputArrays :: Value -> Parser (Problem, Arrays)
inputArrays v = do
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
    else pure ( (n, m, observations n m p cam x w feat)
              , Arrays (VS.concat (replicate n (VS.fromList cam))) (VS.concat (replicate m (VS.fromList x)))
                       (VS.generate p (`mod` n)) (VS.generate p (`mod` m)) (VS.replicate p w)
                       (VS.replicate p (head feat)) (VS.replicate p (feat !! 1)) )

-- | The first 30 entries and the last: what the eval compares.
shown :: VS.Storable a => VS.Vector a -> [a]
shown xs = VS.toList (VS.take 30 xs) ++ [VS.last xs]

functions :: [(String, Function)]
functions =
  [ ("objective", function input baObjective outObjective)
  , ("jacobian", function inputArrays baJacobian outJacobian) ]
  where
    -- every observation's residuals are the same: the first, and how many
    outObjective es@((e0 : e1 : ew : _) : _) =
      output "ba" (const [e0, e1, ew])
        (object [ "reproj_error" .= object ["elements" .= [e0, e1], "repeated" .= length es]
                , "w_err" .= object ["element" .= ew, "repeated" .= length es] ])
    outObjective _ = Left "ba: no residuals"
    outJacobian (Csr r c v) =
      output "ba" (const (shown v)) (object ["rows" .= shown r, "cols" .= shown c, "vals" .= shown v])
