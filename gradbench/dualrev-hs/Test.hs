{-# LANGUAGE OverloadedStrings #-}
-- | dualrev-hs's tests, without GradBench: every eval's functions called as
-- the protocol calls them (JSON in, JSON out), each derivative checked
-- against central finite differences of the eval's own primal.
module Test (main) where

import Control.Monad (unless, when)
import Data.Aeson (Value, object, toJSON, (.=))
import qualified Data.Aeson as A
import Data.Aeson.Encoding (encodingToLazyByteString)
import Data.Aeson.Types (parseEither)
import Data.IORef
import System.Exit (exitFailure)
import Text.Printf (printf)

import Eval
import qualified Hello
import qualified Llsq
import qualified Lse

-- | A function of an eval on a JSON input, its output read back as a.
call :: A.FromJSON a => [(String, Function)] -> String -> Value -> a
call fs name input = case lookup name fs of
  Nothing -> error ("no function " ++ name)
  Just (Function parse f out) -> either error id $ do
    a <- parseEither parse input
    enc <- out (f a)
    A.eitherDecode (encodingToLazyByteString enc)

-- | Central differences of a scalar function in each coordinate.
centralDiff :: ([Double] -> Double) -> [Double] -> [Double]
centralDiff f x = [ (f (bump i h) - f (bump i (-h))) / (2 * h) | i <- [0 .. length x - 1] ]
  where h = 1e-6
        bump i d = [ if j == i then v + d else v | (j, v) <- zip [0 :: Int ..] x ]

-- | Records a failure where got and want differ by more than tol relative
-- to want's size.
close :: IORef Int -> String -> Double -> [Double] -> [Double] -> IO ()
close failures what tol got want = do
  let scale = maximum (1 : map abs want)
      err = maximum (0 : zipWith (\g w -> abs (g - w)) got want) / scale
      ok = length got == length want && err <= tol
  unless ok $ modifyIORef' failures (+ 1)
  printf "%-40s %s (relative error %.2e)\n" what (if ok then "ok" else "FAILED" :: String) err

main :: IO ()
main = do
  failures <- newIORef 0
  let check = close failures
  -- hello
  check "hello double = square'" 1e-7 [call Hello.functions "double" (toJSON (1.5 :: Double))]
    (centralDiff (\[x] -> call Hello.functions "square" (toJSON x)) [1.5])
  -- llsq: a cubic fit at 7 points
  let llsqIn x = object ["n" .= (7 :: Int), "x" .= x]
      x0 = [0.3, -0.2, 0.7, 0.1]
  check "llsq gradient" 1e-6 (call Llsq.functions "gradient" (llsqIn x0))
    (centralDiff (call Llsq.functions "primal" . llsqIn) x0)
  -- lse, with entries far apart (the shift by the maximum matters)
  let lseIn x = object ["x" .= x]
      x1 = [0.5, -3, 2.25, 40, 39.5]
  check "lse gradient" 1e-6 (call Lse.functions "gradient" (lseIn x1))
    (centralDiff (call Lse.functions "primal" . lseIn) x1)
  n <- readIORef failures
  when (n > 0) $ do
    printf "test-dualrev-hs: %d failed\n" n
    exitFailure
  putStrLn "test-dualrev-hs: ok"
