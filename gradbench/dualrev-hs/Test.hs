{-# LANGUAGE OverloadedStrings #-}
-- | dualrev-hs's tests, without GradBench: every eval's functions called as
-- the protocol calls them (JSON in, JSON out), each derivative checked
-- against central finite differences of the eval's own primal.
module Test (main) where

import Control.DeepSeq (force)
import Control.Exception (evaluate)
import Control.Monad (unless, when)
import Data.Aeson (Value, object, toJSON, (.=))
import qualified Data.Aeson as A
import Data.Aeson.Encoding (encodingToLazyByteString)
import Data.Aeson.Types (parseEither)
import Data.IORef
import Data.List (transpose)
import System.Exit (exitFailure)
import Text.Printf (printf)

import Numeric.DualRev.Internal.Run.Driver.Taped (tapedRecordings)

import Eval
import qualified Ba
import qualified Data.Vector.Storable as VS
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
import qualified Saddle

-- | A function of an eval on a JSON input, its output read back as a.
call :: A.FromJSON a => [(String, Function)] -> String -> Value -> a
call fs name input = case lookup name fs of
  Nothing -> error ("no function " ++ name)
  Just (Function parse f out) -> either error id $ do
    a <- parseEither parse input
    enc <- out (f a)
    A.eitherDecode (encodingToLazyByteString enc)

-- | Whether a function of an eval refuses an input (as the protocol
-- does, with a message), before computing anything.
refuses :: [(String, Function)] -> String -> Value -> Bool
refuses fs name input = case lookup name fs of
  Nothing -> error ("no function " ++ name)
  Just (Function parse _ _) -> either (const True) (const False) (parseEither parse input)

-- | Central differences of a scalar function in each coordinate.
centralDiff :: ([Double] -> Double) -> [Double] -> [Double]
centralDiff f x = [ (f (bump i h) - f (bump i (-h))) / (2 * h) | i <- [0 .. length x - 1] ]
  where h = 1e-6
        bump i d = [ if j == i then v + d else v | (j, v) <- zip [0 :: Int ..] x ]

-- | Second differences in each coordinate: a diagonal Hessian.
secondDiff :: ([Double] -> Double) -> [Double] -> [Double]
secondDiff f x = [ (f (bump i h) - 2 * f x + f (bump i (-h))) / (h * h) | i <- [0 .. length x - 1] ]
  where h = 1e-3
        bump i d = [ if j == i then v + d else v | (j, v) <- zip [0 :: Int ..] x ]

-- | Records a failure where got and want differ by more than tol relative
-- to want's size.
close :: IORef Int -> String -> Double -> [Double] -> [Double] -> IO ()
close failures what tol got want = do
  let scale = maximum (1 : map abs want)
      errs = zipWith (\g w -> abs (g - w) / scale) got want
      -- (a NaN among them fails: maximum would pass it over)
      err = if any isNaN errs then 0 / 0 else maximum (0 : errs)
      ok = length got == length want && all (<= tol) errs
  unless ok $ modifyIORef' failures (+ 1)
  printf "%-40s %s (relative error %.2e)\n" what (if ok then "ok" else "FAILED" :: String) err

main :: IO ()
main = do
  failures <- newIORef 0
  let check = close failures
      refused :: String -> Bool -> IO ()
      refused what ok = do
        unless ok $ modifyIORef' failures (+ 1)
        printf "%-40s %s\n" what (if ok then "refused" else "NOT REFUSED" :: String)
      -- a taped derivative checked, and the recordings computing it made:
      -- one at a new shape or where a guard flips, none at a second input
      -- of the recorded shape (a replay).  It is computed between the two
      -- counts by evaluate: a pure value checked later could be computed
      -- at any time before.
      checkTaped :: Int -> String -> Double -> [Double] -> [Double] -> IO ()
      checkTaped k what tol got want = do
        r0 <- tapedRecordings
        g <- evaluate (force got)
        r1 <- tapedRecordings
        unless (r1 - r0 == k) $ modifyIORef' failures (+ 1)
        printf "%-40s %s\n" (what ++ (if k == 0 then ": replayed" else ": recorded"))
          (if r1 - r0 == k then "ok" else "NO, " ++ show (r1 - r0) ++ " recordings" :: String)
        check what tol g want
      -- perturbed, for the second input
      moved :: [Double] -> [Double]
      moved = zipWith (\i v -> v + 0.05 * sin (fromIntegral (i :: Int) * 2.9 + 0.4)) [0 ..]
  -- hello
  check "hello double = square'" 1e-7 [call Hello.functions "double" (toJSON (1.5 :: Double))]
    (centralDiff (\[x] -> call Hello.functions "square" (toJSON x)) [1.5])
  -- llsq: a cubic fit at 7 points
  let llsqIn x = object ["n" .= (7 :: Int), "x" .= x]
      x0 = [0.3, -0.2, 0.7, 0.1]
  sequence_
    [ checkTaped recs ("llsq gradient" ++ which) 1e-6 (call Llsq.functions "gradient" (llsqIn x))
        (centralDiff (call Llsq.functions "primal" . llsqIn) x)
    | (recs, which, x) <- [(1, "", x0), (0, ", again", moved x0)] ]
  -- lse, with entries far apart (the shift by the maximum matters)
  let lseIn x = object ["x" .= x]
      x1 = [0.5, -3, 2.25, 40, 39.5]
  sequence_
    [ checkTaped recs ("lse gradient" ++ which) 1e-6 (call Lse.functions "gradient" (lseIn x))
        (centralDiff (call Lse.functions "primal" . lseIn) x)
    | (recs, which, x) <- [(1, "", x1), (0, ", again", moved x1)] ]
  -- the maximum moved to another entry: one array node, whose replay finds
  -- the maximum again (no guard), so replayed too
  checkTaped 0 "lse gradient, another maximum" 1e-6 (call Lse.functions "gradient" (lseIn (reverse x1)))
    (centralDiff (call Lse.functions "primal" . lseIn) (reverse x1))
  -- det of a 4 x 4 matrix
  let detIn a = object ["ell" .= (4 :: Int), "A" .= a]
      a0 = [ sin (fromIntegral i * 1.7) | i <- [1 .. 16 :: Int] ]
  sequence_
    [ checkTaped recs ("det gradient" ++ which) 1e-6 (call Det.functions "gradient" (detIn a))
        (centralDiff (call Det.functions "primal" . detIn) a)
    | (recs, which, a) <- [(1, "", a0), (0, ", again", moved a0)] ]
  -- ode: the last entry after 3 steps, in each of 5 parameters
  let odeIn x = object ["s" .= (3 :: Int), "x" .= x]
      x2 = [0.9, -0.4, 1.3, 0.6, -1.1]
  sequence_
    [ checkTaped recs ("ode gradient" ++ which) 1e-6 (call Ode.functions "gradient" (odeIn x))
        (centralDiff (last . (call Ode.functions "primal" :: Value -> [Double]) . odeIn) x)
    | (recs, which, x) <- [(1, "", x2), (0, ", again", moved x2)] ]
  -- kmeans: 3 centroids of 2 coordinates, 9 points, no ties; the cost is
  -- quadratic near the centroids, so the differences are exact to rounding
  let points = [ [sin (fromIntegral i), cos (fromIntegral i * 2.3)] | i <- [1 .. 9 :: Int] ] :: [[Double]]
      kmIn c = object ["points" .= points, "centroids" .= chunks c]
      chunks (u : v : rest) = [u, v] : chunks rest
      chunks _ = []
      c0 = [0.5, 0.4, -0.6, 0.1, 0.2, -0.7]
      kcost = call Kmeans.functions "cost" . kmIn
  check "kmeans dir = J / H" 1e-5 (concat (call Kmeans.functions "dir" (kmIn c0) :: [[Double]]))
    (zipWith (/) (centralDiff kcost c0) (secondDiff kcost c0))
  -- gmm: d = 3, k = 2, n = 4, every parameter
  let (gd, gk) = (3, 2) :: (Int, Int)
      lsz = gd * (gd - 1) `div` 2
      vals :: Double -> [Double]
      vals c = [ sin (fromIntegral i * c) | i <- [1 :: Int ..] ]
      takes sizes xs = case sizes of
        [] -> []
        (sz : rest) -> take sz xs : takes rest (drop sz xs)
      -- the parameters from one flat vector, as the input's fields
      gmmIn :: [Double] -> Value
      gmmIn p = let [alpha, mu, q, l] = takes [gk, gk * gd, gk * gd, gk * lsz] p
                in object [ "d" .= gd, "k" .= gk, "n" .= (4 :: Int), "alpha" .= alpha
                          , "mu" .= takes (replicate gk gd) mu, "q" .= takes (replicate gk gd) q
                          , "l" .= takes (replicate gk lsz) l
                          , "x" .= takes (replicate 4 gd) (take (4 * gd) (vals 0.9))
                          , "gamma" .= (1.5 :: Double), "m" .= (2 :: Int) ]
      p0 = take (2 * gk * gd + gk + gk * lsz) (vals 1.3)
      gmmGrad p = call Gmm.functions "jacobian" (gmmIn p) :: A.Object
      flat p = let part k = either error id (parseEither (A..: k) (gmmGrad p))
               in part "alpha" ++ concat (part "mu" :: [[Double]]) ++ concat (part "q" :: [[Double]])
                  ++ concat (part "l" :: [[Double]])
  sequence_
    [ checkTaped recs ("gmm jacobian" ++ which) 1e-6 (flat p)
        (centralDiff (call Gmm.functions "objective" . gmmIn) p)
    | (recs, which, p) <- [(1, "", p0), (0, ", again", moved p0)] ]
  -- lstm: l = 2 layers of b = 3 cells over 4 characters, every parameter
  -- (main_params, then extra_params, as the output lists them)
  let (ll, lb) = (2, 3) :: (Int, Int)
      lstmIn = lstmInWith [[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]]
      lstmInWith :: [[Double]] -> [Double] -> Value
      lstmInWith sq p = let (m, e) = splitAt (8 * ll * lb) p
                        in object [ "main_params" .= takes (replicate (2 * ll) (4 * lb)) m
                                  , "extra_params" .= takes (replicate 3 lb) e
                                  , "state" .= takes (replicate (2 * ll) lb) (map (* 0.5) (vals 0.7))
                                  , "sequence" .= sq ]
      lp0 = take (8 * ll * lb + 3 * lb) (vals 0.37)
  sequence_
    [ checkTaped recs ("lstm jacobian" ++ which) 1e-6 (call Lstm.functions "jacobian" (lstmIn p))
        (centralDiff (call Lstm.functions "objective" . lstmIn) p)
    | (recs, which, p) <- [(1, "", lp0), (0, ", again", moved lp0)] ]
  refused "lstm: a sequence of one character" (refuses Lstm.functions "jacobian" (lstmInWith [[1, 0, 1]] lp0))
  refused "lstm: rows of the wrong length" (refuses Lstm.functions "objective" (lstmInWith [[1, 0, 1, 1], [0, 1, 1, 0]] lp0))
  -- ba: 3 cameras, 5 points, 20 observations; the entries the output
  -- shows (the first observation's two reprojection rows, the last
  -- weight's entry), their rows and columns, with a rotation and without
  let (bn, bm, bp) = (3, 5, 20) :: (Int, Int, Int)
      baIn :: [Double] -> Value
      baIn q = let (cam, rest) = splitAt 11 q
                   (x, [w]) = splitAt 3 rest
               in object [ "n" .= bn, "m" .= bm, "p" .= bp, "cam" .= cam, "x" .= x, "w" .= w
                         , "feat" .= [1.5, -2 :: Double] ]
      baRes :: Value -> [Double]
      baRes v = let o = call Ba.functions "objective" v :: A.Object
                    get k = either error id (parseEither (A..: k) o) :: A.Object
                    num k o' = either error id (parseEither (A..: k) o') :: Value
                in [ either error id (parseEither A.parseJSON e) | e <- either error id
                       (parseEither A.parseJSON (num "elements" (get "reproj_error"))) :: [Value] ]
                   ++ [either error id (parseEither A.parseJSON (num "element" (get "w_err")))]
      baCols = let cs = [0 .. 10] ++ [11 * bn .. 11 * bn + 2] ++ [11 * bn + 3 * bm] in take 30 (cs ++ cs) ++ [11 * bn + 3 * bm + bp - 1]
      baRows = take 30 [0, 15 ..] ++ [31 * bp]
  sequence_
    [ do let jac = call Ba.functions "jacobian" (baIn q) :: A.Object
             entry k = either error id (parseEither (A..: k) jac)
             fd = [ centralDiff ((!! r) . baRes . baIn) q | r <- [0 .. 2] ]
         check ("ba jacobian entries, " ++ what) 1e-6 (entry "vals")
           (take 15 (head fd) ++ take 15 (fd !! 1) ++ [last (fd !! 2)])
         check ("ba jacobian rows and columns, " ++ what) 0
           (map fromIntegral (entry "rows" ++ entry "cols" :: [Int])) (map fromIntegral (baRows ++ baCols))
    | (what, rot) <- [("rotated", [0.3, -0.2, 0.1]), ("no rotation", [0, 0, 0])]
    , let q = rot ++ [0.4, -0.6, -3, 2.5, 0.1, -0.2, 0.05, -0.02, 0.7, -0.5, 4, 0.8] ]
  -- every entry of the Jacobian over arrays against each observation's own
  -- Jacobian, its rows and columns the same; and a rotation whose squares
  -- underflow, which the scalar residuals take for none (no 0 / 0)
  sequence_
    [ do let baWhole = either error id (parseEither Ba.inputArrays (baIn (rot ++ [0.4, -0.6, -3, 2.5, 0.1, -0.2, 0.05, -0.02, 0.7, -0.5, 4, 0.8])))
             Ba.Csr ar ac av = Ba.baJacobian baWhole
             Ba.Csr br bc bv = Ba.blockwise (fst baWhole)
         check ("ba jacobian over arrays, every entry, " ++ what) 1e-12 (VS.toList av) (VS.toList bv)
         check ("ba jacobian over arrays, rows and columns, " ++ what) 0
           (map fromIntegral (VS.toList ar ++ VS.toList ac)) (map fromIntegral (VS.toList br ++ VS.toList bc))
    | (what, rot) <- [("rotated", [0.3, -0.2, 0.1]), ("underflowing", [1e-170, 0, 0])] ]
  refused "ba: a camera of 10 numbers" (refuses Ba.functions "jacobian"
    (object ["n" .= bn, "m" .= bm, "p" .= bp, "cam" .= replicate 10 (1 :: Double), "x" .= [1, 2, 3 :: Double]
            , "w" .= (1 :: Double), "feat" .= [1, 2 :: Double]]))
  -- ht: a model of 22 bones (a binary tree) and 8 vertices, 4 points,
  -- mirrored and not; every column of the simple and the complicated
  -- Jacobian, the columns of us against differences in each point's own us
  let mat4 :: Double -> [[Double]]
      mat4 c = [ [ sin (c * fromIntegral (4 * i + j + 1)) | j <- [0 .. 3 :: Int] ] | i <- [0 .. 2 :: Int] ] ++ [[0, 0, 0, 1]]
      nbones = 22 :: Int
      npts = 4 :: Int
      htModel :: Bool -> Value
      htModel mirrored = object
        [ "parents" .= [ if i == 0 then -1 else (i - 1) `div` 2 | i <- [0 .. nbones - 1] ]
        , "base_relatives" .= [ mat4 (0.3 + 0.1 * fromIntegral i) | i <- [0 .. nbones - 1] ]
        , "inverse_base_absolutes" .= [ mat4 (0.7 + 0.05 * fromIntegral i) | i <- [0 .. nbones - 1] ]
        , "base_positions" .= [ [sin (fromIntegral v), cos (fromIntegral v * 1.3), 0.5 * fromIntegral v, 1 :: Double] | v <- [0 .. 7 :: Int] ]
        , "weights" .= [ [ if b `elem` [v, v + 7, 2 * v + 6] then 0.2 + 0.1 * fromIntegral (b `mod` 3) else 0 :: Double
                         | b <- [0 .. nbones - 1] ] | v <- [0 .. 7 :: Int] ]
        , "triangles" .= [[0, 1, 2], [2, 3, 4], [5, 6, 7], [1, 4, 6 :: Int]]
        , "is_mirrored" .= mirrored ]
      -- us then theta, flat
      htIn :: Bool -> Bool -> [Double] -> Value
      htIn mirrored complicated q =
        let (u, theta) = splitAt (if complicated then 2 * npts else 0) q
        in object [ "theta" .= theta, "us" .= takes (replicate (length u `div` 2) 2) u
                  , "data" .= object [ "model" .= htModel mirrored
                                     , "correspondences" .= [3, 0, 2, 1 :: Int]
                                     , "points" .= takes (replicate npts 3) (take (3 * npts) (vals 2.1)) ] ]
      htName complicated mirrored = "ht jacobian, " ++ (if complicated then "complicated" else "simple")
                                    ++ (if mirrored then ", mirrored" else "")
      theta0 = [0.4, -0.3, 0.2] ++ take 23 (vals 0.61)
      us0 = take (2 * npts) (map (\v -> 0.3 + 0.2 * v) (vals 1.7))
  sequence_
    [ do let q = (if complicated then us0 else []) ++ move theta0
             obj = call Ht.functions "objective" . htIn mirrored complicated :: [Double] -> [Double]
             fd = transpose [ centralDiff ((!! r) . obj) q | r <- [0 .. 3 * npts - 1] ] -- columns
             want | complicated = [ [ fd !! (2 * (r `div` 3) + k) !! r | k <- [0, 1] ] ++ [ fd !! (2 * npts + t) !! r | t <- [0 .. 25] ]
                                  | r <- [0 .. 3 * npts - 1] ]
                  | otherwise = transpose fd
             got = call Ht.functions "jacobian" (htIn mirrored complicated q) :: [[Double]]
         checkTaped recs (htName complicated mirrored ++ which) 1e-6 (concat got) (concat want)
    | complicated <- [False, True], mirrored <- [False, True]
    , (recs, which, move) <- [(1, "", id), (0, ", again", moved)] ]
  refused "ht: theta of 25 numbers" (refuses Ht.functions "jacobian" (htIn False False (take 25 theta0)))
  -- saddle and particle, each pair of modes (outer, inner): the outer
  -- gradient against differences of the outer objective (which runs the
  -- inner optimisation), and the whole descent against GradBench's result
  let modes = [(o, i) | o <- [False, True], i <- [False, True]]
      mode (o, i) = [if o then 'f' else 'r', if i then 'f' else 'r']
  sequence_
    [ do check ("saddle " ++ mode m ++ " outer gradient") 1e-5
           (snd (Saddle.outer o i [1, 1] xs)) (centralDiff (fst . Saddle.outer o i [1, 1]) xs)
         check ("saddle " ++ mode m) 1e-6 (call Saddle.functions (mode m) (object ["start" .= [1, 1 :: Double]]))
           (replicate 4 8.246324826140356e-06)
         check ("particle " ++ mode m ++ " outer derivative") 1e-5
           [snd (Particle.objective o i 0.3)] (centralDiff (fst . Particle.objective o i . head) [0.3])
         check ("particle " ++ mode m) 1e-6 [call Particle.functions (mode m) (object ["w" .= (0 :: Double)])]
           [0.2071918746486116]
    | m@(o, i) <- modes, let xs = [0.7, -0.4] ]
  n <- readIORef failures
  when (n > 0) $ do
    printf "test-dualrev-hs: %d failed\n" n
    exitFailure
  putStrLn "test-dualrev-hs: ok"
