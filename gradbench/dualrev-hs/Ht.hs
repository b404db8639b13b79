{-# LANGUAGE TemplateHaskell #-}
-- | The eval "ht" (ADBench's hand tracking): a skinned hand model (bones
-- with parents, base transforms, vertices weighted over bones) posed by 26
-- parameters theta (a global rotation and translation, the angles of the
-- fingers' joints); the residuals are the measured points minus the posed
-- model's points: a vertex each ("simple"), or a point of a triangle at
-- barycentric coordinates us ("complicated", us not empty).  The Jacobian
-- has a row per residual and a column per theta, after two columns
-- (complicated) for the derivatives in the point's own us.
module Ht (functions, Model, handSimple, handComplicated, simpleJacobian, complicatedJacobian) where

import Control.Monad (when)
import Data.Aeson.Types (Parser, Value)
import Data.List (transpose)
import Numeric.DualRev

import Eval

-- | The parents, the base relative transforms, the inverse base absolute
-- transforms (4 x 4, by rows), the base positions (homogeneous), each
-- vertex's weights over the bones, the triangles, and whether the model is
-- mirrored (a tuple: a data type of ours in a Constant is refused).
type Model = ([Int], [[[Double]]], [[[Double]]], [[Double]], [[Double]], [[Int]], Bool)

differentiable [d|
  -- each point minus its vertex
  handSimple :: ([Double], Constant (Model, [Int], [[Double]])) -> [Double]
  handSimple (theta, dat) = simpleResiduals (posedVertices theta model) corr points
    where (model, corr, points) = constant dat

  -- each point minus its triangle's point at us; d0 and d1 (given as 0)
  -- are added to every point's us, so that the Jacobian's columns in them
  -- are each residual's derivatives in its own point's us (a residual
  -- depends on no other point's), two columns rather than two per point
  handComplicated :: ((Double, Double), [Double], Constant (Model, [Int], [[Double]], [[Double]])) -> [Double]
  handComplicated (d, theta, dat) = complicatedResiduals d (posedVertices theta model) model corr points us
    where (model, corr, points, us) = constant dat

  -- the same residuals for the Jacobian, each vertex from posedFolded
  handSimpleJ :: ([Double], Constant (Model, [Int], [[Double]])) -> [Double]
  handSimpleJ (theta, dat) = simpleResiduals (posedFolded theta model) corr points
    where (model, corr, points) = constant dat

  handComplicatedJ :: ((Double, Double), [Double], Constant (Model, [Int], [[Double]], [[Double]])) -> [Double]
  handComplicatedJ (d, theta, dat) = complicatedResiduals d (posedFolded theta model) model corr points us
    where (model, corr, points, us) = constant dat

  simpleResiduals :: [[Double]] -> [Int] -> [[Double]] -> [Double]
  simpleResiduals verts corr points = concat [ zipWith (-) pt (verts !! c) | (c, pt) <- zip corr points ]

  complicatedResiduals :: (Double, Double) -> [[Double]] -> Model -> [Int] -> [[Double]] -> [[Double]] -> [Double]
  complicatedResiduals (d0, d1) verts (_, _, _, _, _, triangles, _) corr points us =
    concat [ zipWith (-) pt (barycentric (u0 + d0) (u1 + d1) (map (verts !!) (triangles !! c)))
           | (c, pt, [u0, u1]) <- zip3 corr points us ]
    where
      barycentric a b [p, q, r] = zipWith3 (\x y z -> a * x + b * y + (1 - a - b) * z) p q r
      barycentric _ _ _ = []

  -- posedVertices with the global rotation and the mirror folded into each
  -- bone's transform (G = R M T, its first three rows), so that a posed
  -- coordinate is one sum of products, its bones' entries of G times the
  -- constants weight * base position, plus the translation: one statement
  -- a coordinate on the tape, rather than a product and a sum per bone
  posedFolded :: [Double] -> Model -> [[Double]]
  posedFolded theta (parents, baseRelatives, inverseBaseAbsolutes, basePositions, weights, _, mirrored) =
    [ [ sum (zipWith (*) coefs (concat [ g !! c | (w, g) <- zip ws folded, w /= 0 ])) + tc
      | (c, tc) <- zip [0, 1, 2] translation ]
    | (p, ws) <- zip basePositions weights
    , let coefs = concat [ map (* w) p | w <- ws, w /= 0 ] ]
    where
      relatives = zipWith (\base angles -> matMul base (homogeneous (euler angles)))
                          baseRelatives (boneAngles theta (length parents))
      transforms = zipWith matMul (absolutes parents relatives) inverseBaseAbsolutes
      mirror (r : rest) = if mirrored then map negate r : rest else r : rest
      mirror [] = []
      folded = [ matMul global (mirror (take 3 t)) | t <- transforms ]
      global = angleAxis (take 3 theta)
      translation = take 3 (drop 3 theta)

  -- every vertex of the model posed by theta
  posedVertices :: [Double] -> Model -> [[Double]]
  posedVertices theta (parents, baseRelatives, inverseBaseAbsolutes, basePositions, weights, _, mirrored) =
    [ zipWith (+) translation (matVec global (mirror (skin p ws))) | (p, ws) <- zip basePositions weights ]
    where
      relatives = zipWith (\base angles -> matMul base (homogeneous (euler angles)))
                          baseRelatives (boneAngles theta (length parents))
      transforms = zipWith matMul (absolutes parents relatives) inverseBaseAbsolutes
      -- the weighted sum of the vertex under each of its bones
      skin p ws = foldr (zipWith (+)) [0, 0, 0]
                    [ map (* w) (take 3 (matVec t p)) | (w, t) <- zip ws transforms, w /= 0 ]
      mirror [x, y, z] = if mirrored then [negate x, y, z] else [x, y, z]
      mirror v = v
      global = angleAxis (take 3 theta)
      translation = take 3 (drop 3 theta)

  -- every bone's Euler angles (x, z, y) from theta: the wrist's and each
  -- finger's first bone none, a finger's next bone two, its next two one
  boneAngles :: [Double] -> Int -> [[Double]]
  boneAngles theta bones = take bones (none ++ none ++ concatMap finger (chunks 4 (drop 6 theta)) ++ replicate bones [0, 0, 0])
    where
      none = [[0, 0, 0]]
      finger [a, b, c, d] = [[a, b, 0], [c, 0, 0], [d, 0, 0], [0, 0, 0]]
      finger _ = []

  chunks :: Int -> [Double] -> [[Double]]
  chunks n xs = if null xs then [] else take n xs : chunks n (drop n xs)

  -- each bone's transform relative to the root: its parent's (computed
  -- before it) times its own
  absolutes :: [Int] -> [[[Double]]] -> [[[Double]]]
  absolutes parents relatives = foldl step [] (zip parents relatives)
    where step done (parent, rel) = done ++ [if parent < 0 then rel else matMul (done !! parent) rel]

  -- Rz Ry Rx for angles (x, z, y)
  euler :: [Double] -> [[Double]]
  euler [tx, tz, ty] = matMul (matMul rz ry) rx
    where
      rx = [[1, 0, 0], [0, cos tx, negate (sin tx)], [0, sin tx, cos tx]]
      ry = [[cos ty, 0, sin ty], [0, 1, 0], [negate (sin ty), 0, cos ty]]
      rz = [[cos tz, negate (sin tz), 0], [sin tz, cos tz, 0], [0, 0, 1]]
  euler _ = []

  -- the rotation of an angle-axis vector (the identity below a norm of
  -- 1e-4; the axis in the branch of a rotation only, as the code is strict)
  angleAxis :: [Double] -> [[Double]]
  angleAxis a =
    if norm < 1e-4
      then [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
      else let [x, y, z] = map (/ norm) a
               s = sin norm
               c = cos norm
           in [ [x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s]
              , [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s]
              , [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c] ]
    where norm = sqrt (sum (map (\v -> v * v) a))

  homogeneous :: [[Double]] -> [[Double]]
  homogeneous r = map (++ [0]) r ++ [[0, 0, 0, 1]]

  matMul :: [[Double]] -> [[Double]] -> [[Double]]
  matMul a b = [ [ sum (zipWith (*) row col) | col <- transpose b ] | row <- a ]

  matVec :: [[Double]] -> [Double] -> [Double]
  matVec m v = [ sum (zipWith (*) row v) | row <- m ]
  |]

-- | The Jacobians, a row per residual: the columns of us (complicated),
-- then theta's.
simpleJacobian :: ([Double], (Model, [Int], [[Double]])) -> [[Double]]
simpleJacobian (theta, dat) = [ dtheta | (dtheta, _) <- simpleTaped (theta, Constant dat) ]

complicatedJacobian :: ([Double], (Model, [Int], [[Double]], [[Double]])) -> [[Double]]
complicatedJacobian (theta, dat) =
  [ du0 : du1 : dtheta | ((du0, du1), dtheta, _) <- complicatedTaped ((0, 0), theta, Constant dat) ]

-- Both recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate).
simpleTaped :: ([Double], Constant (Model, [Int], [[Double]])) -> [([Double], Constant (Model, [Int], [[Double]]))]
simpleTaped = $(tapedJacobian 'handSimpleJ)
{-# NOINLINE simpleTaped #-}

complicatedTaped :: ((Double, Double), [Double], Constant (Model, [Int], [[Double]], [[Double]]))
                 -> [((Double, Double), [Double], Constant (Model, [Int], [[Double]], [[Double]]))]
complicatedTaped = $(tapedJacobian 'handComplicatedJ)
{-# NOINLINE complicatedTaped #-}

-- | theta, the model, the correspondences, the points and the us, checked
-- to fit together (the pose puts the fingers' angles on bones up to 21).
input :: Value -> Parser ([Double], Model, [Int], [[Double]], [[Double]])
input v = do
  theta <- field "theta" v
  us <- field "us" v
  dat <- field "data" v
  m <- field "model" dat
  model <- (,,,,,,) <$> field "parents" m <*> field "base_relatives" m <*> field "inverse_base_absolutes" m
                    <*> field "base_positions" m <*> field "weights" m <*> field "triangles" m
                    <*> field "is_mirrored" m
  corr <- field "correspondences" dat
  points <- field "points" dat
  let (parents, rel, inv, pos, ws, tris, _) = model
      nb = length parents
      nv = length pos
      limit = if null us then nv else length tris
      mat4 = all (\mm -> length mm == 4 && all ((== 4) . length) mm)
  when (length theta /= 26) $ fail "ht: \"theta\" must hold 26 numbers"
  when (nb < 22 || or [ p < -1 || p >= i | (i, p) <- zip [0 ..] parents ]) $
    fail "ht: the model needs 22 bones or more, each bone's parent -1 or an earlier bone"
  when (length rel /= nb || length inv /= nb || not (mat4 rel && mat4 inv)) $
    fail "ht: \"base_relatives\" and \"inverse_base_absolutes\" must hold a 4 x 4 matrix per bone"
  when (any ((/= 4) . length) pos || length ws /= nv || any ((/= nb) . length) ws) $
    fail "ht: \"base_positions\" must be rows of 4 numbers, \"weights\" a row of a weight per bone for each"
  when (any (\t -> length t /= 3 || any (\i -> i < 0 || i >= nv) t) tris) $
    fail "ht: \"triangles\" must be rows of 3 vertices of the model"
  when (null corr || length points /= length corr || any ((/= 3) . length) points) $
    fail "ht: \"points\" must be a row of 3 numbers for each correspondence"
  when (any (\c -> c < 0 || c >= limit) corr) $
    fail "ht: a correspondence is not a vertex (simple) or triangle (complicated) of the model"
  when (not (null us) && (length us /= length corr || any ((/= 2) . length) us)) $
    fail "ht: \"us\" must be empty or a row of 2 numbers for each point"
  pure (theta, model, corr, points, us)

functions :: [(String, Function)]
functions =
  [ ("objective", function input objective (vector "ht"))
  , ("jacobian", function input jac (output "ht" concat)) ]
  where
    objective (theta, model, corr, points, us)
      | null us = handSimple (theta, Constant (model, corr, points))
      | otherwise = handComplicated ((0, 0), theta, Constant (model, corr, points, us))
    jac (theta, model, corr, points, us)
      | null us = simpleJacobian (theta, (model, corr, points))
      | otherwise = complicatedJacobian (theta, (model, corr, points, us))
