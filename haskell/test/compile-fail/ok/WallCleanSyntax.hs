-- Must compile with -Wall -Werror (run.sh): what do blocks, view patterns,
-- \case and tuple sections are desugared into draws no warning.
{-# LANGUAGE TemplateHaskell, LambdaCase, TupleSections, ViewPatterns #-}
module WallCleanSyntax (loss, gradLoss) where
import Control.Monad (guard)
import Numeric.DualRev

differentiable [d|
  safeDiv :: Double -> Double -> Maybe Double
  safeDiv a b = if b == 0 then Nothing else Just (a / b)

  norm :: [Double] -> Double
  norm xs = sqrt (sum (map (\x -> x * x) xs))

  clip :: [Double] -> Double
  clip (norm -> n) | n > 2 = n
  clip (reverse -> (x : _)) = x
  clip _ = 0

  loss :: (Double, [Double]) -> Double
  loss (a, xs) = maybe 0 id r + sum (map (\case { (u, v) -> u * v }) (map (, a) xs)) + clip xs
    where r = do
            q <- safeDiv a 2
            Just t <- pure (Just q)
            guard (t > 0)
            pure (sum [t * x | x <- xs])
  |]

gradLoss :: (Double, [Double]) -> (Double, [Double])
gradLoss = $(grad 'loss)
