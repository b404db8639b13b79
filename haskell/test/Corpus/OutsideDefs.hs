-- | Ordinary Haskell, in a module without any differentiable block: data
-- types and polymorphic numeric helpers that "Corpus.Outside" uses from
-- its blocks.
module Corpus.OutsideDefs
  ( Particle (..)
  , Segment (..)
  , softplus
  , logSumExp
  , polyEval
  , moments
  , countPositive
  ) where

data Particle = Particle { ppos :: (Double, Double), pvel :: (Double, Double), pmass :: Double }
  deriving (Eq, Show)

data Segment = Segment Particle Particle
  deriving (Eq, Show)

softplus :: Floating a => a -> a
softplus x = log (1 + exp x)

-- | The usual max-shifted form: comparisons and Prelude folds on the scalar.
logSumExp :: (Ord a, Floating a) => [a] -> a
logSumExp xs = let m = maximum xs in m + log (sum [exp (x - m) | x <- xs])

polyEval :: Num a => [a] -> a -> a
polyEval cs x = foldr (\c acc -> c + x * acc) 0 cs

-- | A lazily built result: mean and second moment.
moments :: Fractional a => [a] -> (a, a)
moments xs = let n = fromIntegral (length xs) in (sum xs / n, sum (map (^ (2 :: Int)) xs) / n)

countPositive :: [Int] -> Int
countPositive = length . filter (> 0)
