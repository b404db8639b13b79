-- | What a fork-join costs in GHC itself on this machine, without dualrev:
-- two halves of allocation-heavy work (~140 us each), the second forked
-- onto capability 1 with forkOn and joined with an MVar, as (|*|) does.
-- Prints the medians of when the first half ends, when the second starts
-- and ends, and when the join returns, in microseconds from the fork.
--
--   mkdir -p /tmp/gfl
--   ghc -O2 -threaded -rtsopts bench/hs/GhcForkLatency.hs -outputdir /tmp/gfl -o /tmp/gfl/gfl
--   /tmp/gfl/gfl +RTS -N2        (and -N1 for the halves in sequence)
module Main (main) where

import Control.Concurrent (forkOn, newEmptyMVar, putMVar, takeMVar)
import Control.Exception (evaluate)
import Control.Monad (forM)
import Data.List (sort)
import GHC.Clock (getMonotonicTimeNSec)

half :: Int -> Double
half k = sum (map (* 1.0001) (reverse [sin (fromIntegral i) * fromIntegral (k + i) | i <- [1 .. 6000 :: Int]]))

main :: IO ()
main = do
  rs <- forM [1 .. 3000 :: Int] $ \r -> do
    done <- newEmptyMVar
    t0 <- getMonotonicTimeNSec
    _ <- forkOn 1 $ do
      s <- getMonotonicTimeNSec
      v <- evaluate (half (r + 1))
      e <- getMonotonicTimeNSec
      putMVar done (v, s, e)
    a <- evaluate (half r)
    ta <- getMonotonicTimeNSec
    (b, s, e) <- takeMVar done
    tj <- getMonotonicTimeNSec
    _ <- evaluate (a + b)
    let us x = fromIntegral (x - t0) / 1000 :: Double
    pure [us ta, us s, us e, us tj]
  let med i = let v = sort (map (!! i) rs) in v !! (length v `div` 2)
  putStrLn ("medians (us): first half done " ++ show (med 0) ++ ", second half starts "
            ++ show (med 1) ++ ", ends " ++ show (med 2) ++ ", join returns " ++ show (med 3))
