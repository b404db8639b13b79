{-# LANGUAGE TemplateHaskell #-}
-- | The eval "kmeans": the cost, each point's squared distance to its
-- nearest centroid summed, and the Newton step of the centroids J / H (the
-- Hessian is diagonal: a centroid's coordinates are each other's
-- constants, so its product with a vector of ones is its diagonal).
module Kmeans (functions, cost, dir) where

import Data.Aeson.Types (Parser, Value)
import Numeric.DualRev

import Eval

differentiable [d|
  cost :: ([[Double]], Constant [[Double]]) -> Double
  cost (centroids, points) =
    sum [ minimum [ distance2 p c | c <- centroids ] | p <- constant points ]

  distance2 :: [Double] -> [Double] -> Double
  distance2 a b = sum (zipWith (\u v -> (u - v) * (u - v)) a b)
  |]

dir :: ([[Double]], Constant [[Double]]) -> [[Double]]
dir cp@(centroids, points) = zipWith (zipWith (/)) j h
  where
    j = fst ($(grad 'cost) cp)
    h = fst ($(hvp 'cost) cp (map (map (const 1)) centroids, points))

-- | The centroids and the points (read as plain lists: Constant has no
-- NFData instance, which the protocol needs to read the input whole)
input :: Value -> Parser ([[Double]], [[Double]])
input v = do
  points <- field "points" v
  centroids <- field "centroids" v
  pure (centroids, points)

functions :: [(String, Function)]
functions =
  [ ("cost", function input (\(c, p) -> cost (c, Constant p)) (scalar "kmeans"))
  , ("dir", function input (\(c, p) -> dir (c, Constant p)) (output "kmeans" concat)) ]
