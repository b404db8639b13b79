{-# LANGUAGE BangPatterns, TemplateHaskell #-}
-- | The eval "kmeans": the cost, each point's squared distance to its
-- nearest centroid summed, and the Newton step of the centroids J / H (the
-- Hessian is diagonal: a centroid's coordinates are each other's
-- constants, so its product with a vector of ones is its diagonal).
--
-- The cost is written over lists.  The Newton step is written for speed,
-- as dualrev-c's: each point's nearest centroid found in plain numbers
-- (storable vectors), and only the distances to those differentiated,
-- over arrays (the nearest centroid of each point gathered, four array
-- operations); the minimum's derivative is that of its nearest term.
module Kmeans (functions, cost, dir) where

import Data.Aeson.Types (Parser, Value)
import qualified Data.Vector.Storable as VS
import Numeric.DualRev
import Numeric.DualRev.Array

import Eval

differentiable [d|
  cost :: ([[Double]], Constant [[Double]]) -> Double
  cost (centroids, points) =
    sum [ minimum [ distance2 p c | c <- centroids ] | p <- constant points ]

  distance2 :: [Double] -> [Double] -> Double
  distance2 a b = sum (zipWith (\u v -> (u - v) * (u - v)) a b)

  -- each point's squared distance to the centroid given for it
  assignedCost :: (Mat, Constant (Mat, [Int])) -> Double
  assignedCost (centroids, c) =
    let (points, nearestOf) = constant c
    in msumAll (msquare (msub (gatherRows nearestOf centroids) points))
  |]

-- | The Newton step J / H, a centroid a row.
dir :: (Mat, Mat) -> Mat
dir (centroids, points) = mdiv j h
  where
    given = Constant (points, nearest centroids points)
    j = fst ($(grad 'assignedCost) (centroids, given))
    ones = fromRows (replicate (mrows centroids) (replicate (mcols centroids) 1))
    h = fst ($(hvp 'assignedCost) (centroids, given) (ones, given))

-- | The index of each point's nearest centroid (the first of equally near
-- ones), the squared distance summed in the coordinates' order, as
-- dualrev-c's.  Two centroids a step: their sums are two chains of
-- additions the processor runs side by side (one at a time, each waited
-- for the one before: a third of the dir evaluate at k = 100).
nearest :: Mat -> Mat -> [Int]
nearest centroids points = [ closest (i * d) | i <- [0 .. mrows points - 1] ]
  where
    d = mcols points
    k = mrows centroids
    cs = matToStorable centroids
    ps = matToStorable points
    closest !p = go 0 0 (1 / 0)
      where
        go !j !best !bestD
          | j + 1 < k =
              let (s, s') = dist2 p (j * d) ((j + 1) * d) 0 0 0
                  (best1, bestD1) = if s < bestD then (j, s) else (best, bestD)
              in if s' < bestD1 then go (j + 2) (j + 1) s' else go (j + 2) best1 bestD1
          | j < k = let s = dist p (j * d) 0 0 in if s < bestD then j else best
          | otherwise = best
    dist !p !c !l !acc
      | l == d = acc
      | otherwise = let u = VS.unsafeIndex ps (p + l) - VS.unsafeIndex cs (c + l)
                    in dist p c (l + 1) (acc + u * u)
    dist2 !p !c !c' !l !acc !acc'
      | l == d = (acc, acc')
      | otherwise = let x = VS.unsafeIndex ps (p + l)
                        u = x - VS.unsafeIndex cs (c + l)
                        u' = x - VS.unsafeIndex cs (c' + l)
                    in dist2 p c c' (l + 1) (acc + u * u) (acc' + u' * u')

-- | The centroids and the points.
input :: Value -> Parser ([[Double]], [[Double]])
input v = do
  points <- field "points" v
  centroids <- field "centroids" v
  pure (centroids, points)

functions :: [(String, Function)]
functions =
  [ ("cost", function input (\(c, p) -> cost (c, Constant p)) (scalar "kmeans"))
  , ("dir", function (fmap arrays . input) dir (output "kmeans" concat . toRows)) ]
  where arrays (c, p) = (fromRows c, fromRows p)
