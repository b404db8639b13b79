-- | dualrev-hs: a GradBench tool whose evals are ordinary Haskell,
-- differentiated by dualrev's Template Haskell front end
-- (gradbench/README.md).
module Main (main) where

import qualified Hello
import qualified Llsq
import qualified Lse
import Protocol (serve)

main :: IO ()
main = serve "dualrev-hs"
  [ ("hello", Hello.functions)
  , ("llsq", Llsq.functions)
  , ("lse", Lse.functions) ]
