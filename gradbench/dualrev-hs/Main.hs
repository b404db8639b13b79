-- | dualrev-hs: a GradBench tool whose evals are ordinary Haskell,
-- differentiated by dualrev's Template Haskell front end
-- (gradbench/README.md).
module Main (main) where

import qualified Ba
import qualified Det
import qualified Gmm
import qualified Hello
import qualified Ht
import qualified Kmeans
import qualified Llsq
import qualified Lse
import qualified Lstm
import qualified Ode
import qualified Particle
import Protocol (serve)
import qualified Saddle

main :: IO ()
main = serve "dualrev-hs"
  [ ("hello", Hello.functions)
  , ("llsq", Llsq.functions)
  , ("lse", Lse.functions)
  , ("det", Det.functions)
  , ("ode", Ode.functions)
  , ("kmeans", Kmeans.functions)
  , ("saddle", Saddle.functions)
  , ("particle", Particle.functions)
  , ("gmm", Gmm.functions)
  , ("lstm", Lstm.functions)
  , ("ba", Ba.functions)
  , ("ht", Ht.functions) ]
