{-# LANGUAGE TemplateHaskell #-}
-- | Data.List, Data.Maybe, Data.Either, Data.Function, Data.Ord, Data.Tuple
-- and the Functor / Applicative / Foldable / Traversable methods on lists,
-- Maybe, Either and pairs; infinite lists consumed lazily.
module Corpus.Library where

import Control.Applicative (liftA2, (<|>))
import Control.Monad (forM)
import Data.Either (fromLeft, fromRight, isLeft, isRight, lefts, partitionEithers, rights)
import Data.Foldable (foldr', toList)
import Data.Function (on, (&))
import Data.Functor (($>), (<&>))
import Data.List
  ( (\\), delete, dropWhileEnd, elemIndex, find, findIndex, foldl1', genericLength, group
  , groupBy, inits, insert, intercalate, intersect, intersperse, isInfixOf, isPrefixOf
  , isSuffixOf, mapAccumL, mapAccumR, maximumBy, minimumBy, nub, nubBy, partition, scanl'
  , sort, sortBy, sortOn, tails, transpose, unfoldr, union )
import Data.Maybe (catMaybes, fromJust, fromMaybe, isJust, isNothing, listToMaybe, mapMaybe, maybeToList)
import Data.Ord (Down (..), comparing)
import Data.Traversable (for)
import Data.Tuple (swap)
import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  -- sort insert: a median plus an order-weighted sum
  medianP :: (Ord a, Floating a) => [a] -> a
  medianP xs =
    let s = sort xs
        n = length s
        mid = if even n then (s !! (n `div` 2 - 1) + s !! (n `div` 2)) / 2 else s !! (n `div` 2)
    in mid + sum (zipWith (\i x -> fromIntegral i * x) [1 :: Int ..] (insert (head xs) s))

  median :: [Double] -> Double
  median xs = medianP xs

  -- sortBy sortOn comparing on Down flip compare: rank-weighted sums
  rankedP :: (Ord a, Floating a) => [a] -> a
  rankedP xs =
    let byNeg = sortBy (comparing negate) xs
        bySq = sortOn (\x -> x * x) xs
        desc = sortOn Down xs
        byAbs = sortBy (compare `on` abs) xs
        rev = sortBy (flip compare) xs
    in sum (zipWith (\x i -> x * fromIntegral i) byNeg [1 :: Int ..]) + sum (take 2 bySq) * 3
       + head desc * last byAbs + sum (zipWith (*) rev (map sin (reverse (sort xs))))

  ranked :: [Double] -> Double
  ranked xs = rankedP xs

  -- nearest neighbours: sortOn by distance, minimumBy, maximumBy
  knnP :: (Ord a, Floating a) => (a, [(a, a)]) -> a
  knnP (q, pts) =
    let near = take 3 (sortOn (\(p, _) -> abs (p - q)) pts)
        (_, best) = minimumBy (comparing (\(p, _) -> (p - q) * (p - q))) pts
        (_, worst) = maximumBy (compare `on` (\(p, _) -> abs (p - q))) pts
    in sum (map snd near) / fromIntegral (length near) + best - 0.5 * worst

  knn :: (Double, [(Double, Double)]) -> Double
  knn p = knnP p

  -- transpose: column means and matrix-vector products on [[Double]]
  columnsP :: Floating a => ([[a]], [a]) -> a
  columnsP (m, v) =
    let cols = transpose m
        means = map (\c -> sum c / fromIntegral (length c)) cols
        mv = map (\row -> sum (zipWith (*) row v)) m
        mtv = map (\col -> sum (zipWith (*) col (map sin v))) (transpose (transpose cols))
    in sum (map (\x -> x * x) means) + sum mv + product (map (\c -> 1 + c / 10) mtv)

  columns :: ([[Double]], [Double]) -> Double
  columns p = columnsP p

  -- a lookup table: lookup fromMaybe maybe isJust isNothing fromJust
  -- catMaybes listToMaybe maybeToList
  tableP :: Floating a => ([(Int, a)], [Int]) -> a
  tableP (tbl, keys) =
    let found = map (\k -> lookup k tbl) keys
        vals = catMaybes found
        dflt = fromMaybe 0 (listToMaybe (map snd tbl))
    in sum [fromMaybe dflt (lookup k tbl) * fromIntegral k | k <- keys]
       + sum vals + fromIntegral (length (filter isJust found) - length (filter isNothing found))
       + (if isJust (head found) then fromJust (head found) * 2 else 1)
       + sum (concatMap maybeToList found) + maybe 0 (* 3) (listToMaybe vals)

  table :: ([(Int, Double)], [Int]) -> Double
  table p = tableP p

  -- mapMaybe: a log-likelihood that skips the terms it cannot take
  safeLogsP :: (Ord a, Floating a) => [a] -> a
  safeLogsP xs =
    let safeLog x = if x > 0 then Just (log x) else Nothing
        ratio x y = if abs y > 0.1 then Just (x / y) else Nothing
    in sum (mapMaybe safeLog xs) + sum (mapMaybe (\(x, y) -> ratio x y) (zip xs (tail xs ++ [1])))
       + sum (mapMaybe (\x -> if x < 0 then Just (x * x) else Nothing) xs)

  safeLogs :: [Double] -> Double
  safeLogs xs = safeLogsP xs

  -- fmap (<$>) (<&>) (<$) ($>) on lists, Maybe, Either and pairs
  fmapsP :: Floating a => ([a], Maybe a, Either Int a, (Int, a)) -> a
  fmapsP (xs, m, e, p) =
    let m' = fmap (\x -> x * x + 1) m
        e' = (\x -> sin x * 2) <$> e
        p' = fmap exp p
        xs' = xs <&> \x -> x / 2
        consts = (0.5 <$ xs) ++ (m $> 0.25 & toList)
    in sum xs' + maybe 0 id m' + either fromIntegral id e' + snd p' * fromIntegral (fst p')
       + sum (fmap (* 3) xs) + sum consts + sum (catMaybes (fmap (fmap (* 2)) [m, Just 1]))

  fmaps :: ([Double], Maybe Double, Either Int Double, (Int, Double)) -> Double
  fmaps t = fmapsP t

  -- Foldable on Maybe, Either and pairs: sum product length null elem maximum
  -- minimum foldr foldl toList any all concatMap
  containersP :: (Ord a, Floating a) => (Maybe a, Either Int a, [a]) -> a
  containersP (m, e, xs) =
    sum m + product m * 2 + fromIntegral (length m) + (if null m then 1 else maximum m * minimum m)
    + foldr (\x acc -> x * acc + 1) 0.5 m + foldl (\acc x -> acc - x) 1 m + sum (toList m)
    + (if any (> 0) m then 1 else 0) + (if all (> 0) m then sum xs else product xs)
    + sum (concatMap (\x -> [x, x * x]) m) + (if 1.5 `elem` m then 0 else sum (fmap sin m))
    + sum e * 3 + product e + fromIntegral (length e) + foldr (+) 1 e
    + sum (head xs, last xs) + maximum (Just (head xs))

  containers :: (Maybe Double, Either Int Double, [Double]) -> Double
  containers t = containersP t

  -- traverse mapM sequence sequenceA for forM with Maybe, Either and list results
  traversalsP :: (Ord a, Floating a) => [a] -> a
  traversalsP xs =
    let checked x = if x > -1.9 then Right (x * x) else Left "too small"
        safeSqrt x = if x > 0 then Just (sqrt x) else Nothing
        shifted = traverse (\x -> Just (x + 1)) xs
        roots = mapM safeSqrt xs
        squares = mapM checked xs
        firsts = sequence [Just (head xs), Just 2]
        sines = for xs (\x -> if x < 10 then Just (sin x) else Nothing)
        both = forM (Just (last xs)) (\x -> [x, x * 2])
        spread = sequenceA (Just [head xs, 3])
    in maybe 0 sum shifted + maybe 1 product roots + either (const 0) sum squares
       + maybe 0 sum firsts + maybe 0 sum sines + sum (map (fromMaybe 0) both)
       + sum (map (fromMaybe 0) spread)

  traversals :: [Double] -> Double
  traversals xs = traversalsP xs

  -- Data.Either: lefts rights partitionEithers either isLeft isRight fromLeft fromRight
  eithersP :: Floating a => [Either a (a, a)] -> a
  eithersP es =
    let (ls, rs) = partitionEithers es
    in sum (lefts es) * 2 + sum (map (uncurry (*)) (rights es)) + sum ls - sum (map fst rs)
       + fromIntegral (length (filter isLeft es)) + sum [either sin (\(a, b) -> a - b) e | e <- es]
       + sum (map (fromLeft 1) es) + sum (map (fst . fromRight (0, 0)) es)
       + (if isRight (head es) then 1 else 0)

  eithers :: [Either Double (Double, Double)] -> Double
  eithers es = eithersP es

  -- infinite Int and Char ranges, consumed lazily: zip [0 ..], [1, 3 ..],
  -- take n [1 ..], takeWhile p [0, 2 ..]
  indexedP :: Floating a => [a] -> a
  indexedP xs =
    sum [fromIntegral i * x | (i, x) <- zip [0 :: Int ..] xs]
    + sum (zipWith (\k x -> x / fromIntegral k) [1 :: Int, 3 ..] xs)
    + fromIntegral (sum (take (length xs) [1 :: Int ..]))
    + fromIntegral (sum (takeWhile (< 10) [0 :: Int, 2 ..])) * head xs
    + sum (zipWith (\k x -> fromIntegral k * x) [length xs ..] xs)
    + sum [x | (c, x) <- zip ['a' ..] xs, c /= 'b']

  indexed :: [Double] -> Double
  indexed xs = indexedP xs

  -- cycle repeat
  cyclingP :: Floating a => ([a], a) -> a
  cyclingP (xs, c) =
    sum (zipWith (*) (cycle [1, -1]) xs) + sum (zipWith (*) (repeat c) xs)
    + sum (take 3 (repeat (c * c))) + sum (zipWith (+) (cycle xs) (replicate 7 c))
    + sum (map fst (zip xs (cycle [c]))) + sum (take 5 (cycle (map sin xs)))

  cycling :: ([Double], Double) -> Double
  cycling p = cyclingP p

  -- infinite Double ranges from active and constant starts (monomorphic:
  -- see rampRef below for the polymorphic twin)
  ramp :: (Double, Double, [Double]) -> Double
  ramp (x, y, ws) =
    sum (zipWith (*) [x ..] ws) + sum (take 3 [x, y ..]) + sum (zipWith (*) [y, x ..] (reverse ws))
    + sum (takeWhile (< x + 3.5) [y ..]) * 0.5 + sum (zipWith (*) [1.5 ..] ws)
    + product (take 2 [0.5, 0.75 ..]) + [x ..] !! 4 + sum (take 2 (drop 3 [x, 2 * y ..]))

  -- elements of an infinite range as outputs: recorded when the output is read
  rampOut :: (Double, Int) -> [Double]
  rampOut (x, n) = take n [x, x * x ..] ++ zipWith (*) [x ..] (replicate n x)

  -- span break partition maximumBy minimumBy
  splittingP :: (Ord a, Floating a) => [a] -> a
  splittingP xs =
    let (neg, rest) = span (< 0) xs
        (small, big) = break (> 1) xs
        (positive, nonpos) = partition (> 0) xs
    in sum neg * 2 + product (map (\x -> 1 + x / 4) rest) + sum small - sum big * 3
       + sum (map sin positive) + sum (map (\x -> x * x) nonpos)
       + maximumBy (comparing sin) xs + minimumBy (compare `on` negate) xs

  splitting :: [Double] -> Double
  splitting xs = splittingP xs

  -- scanl1 scanr1 scanl' foldl1' foldr': running extremes and sums
  runningP :: (Ord a, Floating a) => [a] -> a
  runningP xs =
    sum (scanl1 max xs) + sum (scanr1 (+) xs) * 0.5 + last (scanl' (\acc x -> acc * 0.9 + x) 0 xs)
    + foldl1' (\a b -> a * 0.5 + b) xs + foldr' (\x acc -> sin x + acc) 0 xs
    + sum (scanl1 (\a b -> a * b) (map (\x -> 1 + x / 3) xs))

  running :: [Double] -> Double
  running xs = runningP xs

  -- group groupBy nub nubBy: values binned by their half-unit interval
  histogramP :: (RealFrac a, Floating a) => [a] -> a
  histogramP xs =
    let bin x = floor (x * 2) :: Int
        groups = groupBy ((==) `on` bin) (sort xs)
        reps = nubBy (\a b -> bin a == bin b) xs
        uniq = nub (xs ++ reverse xs)
        same = group (sort (xs ++ take 2 xs))
    in sum (map (\g -> fromIntegral (length g) * product g) groups) + sum (map (\x -> x * x) reps)
       + sum (map sin uniq) + sum (map (\g -> head g * fromIntegral (length g)) same)

  histogram :: [Double] -> Double
  histogram xs = histogramP xs

  -- unfoldr (an infinite one, taken from lazily) and until (Newton's method)
  unfoldingP :: (Ord a, Floating a) => (a, a) -> a
  unfoldingP (x, r) =
    let geometric = unfoldr (\v -> Just (v, v * r * 0.5)) x
        countdown = unfoldr (\v -> if v > 0 then Just (v * v, v - 0.7) else Nothing) (abs x + 1)
        root = until (\g -> abs (g * g - r) < 1e-12) (\g -> 0.5 * (g + r / g)) r
    in sum (take 5 geometric) + sum countdown + root

  unfolding :: (Double, Double) -> Double
  unfolding p = unfoldingP p

  -- mapAccumL mapAccumR: exponential smoothing, a running state from the right
  smoothingP :: Floating a => (a, [a]) -> a
  smoothingP (alpha, xs) =
    let step s x = let s' = alpha * x + (1 - alpha) * s in (s', s' * s')
        (final, smoothed) = mapAccumL step (head xs) xs
        (back, rs) = mapAccumR (\s x -> (s * 0.5 + x, s - x)) 0 xs
        (m, inMaybe) = mapAccumL step 1 (Just (last xs))
    in final + sum smoothed + back * 2 + sum (zipWith (*) rs xs) + m * sum inMaybe

  smoothing :: (Double, [Double]) -> Double
  smoothing p = smoothingP p

  -- Data.Function (&) ($!) on, Data.Tuple swap, Data.List genericLength
  plumbingP :: Floating a => ([a], (a, a)) -> a
  plumbingP (xs, p) =
    let mean = sum xs / genericLength xs
        (a, b) = swap p
        sq x = x * x
    in (xs & map sq & sum) + (sq $! mean) + ((+) `on` sq) a b + (p & fst) * b

  plumbing :: ([Double], (Double, Double)) -> Double
  plumbing t = plumbingP t

  -- Applicative and Monad on Maybe and lists: (<*>) liftA2 (>>=) (=<<) pure return (<|>)
  applicativeP :: (Ord a, Floating a) => ([(Int, a)], a) -> a
  applicativeP (tbl, x) =
    let get k = lookup k tbl
        both = (+) <$> get 0 <*> get 1
        prod = liftA2 (\a b -> a * b) (get 1) (pure x)
        chained = get 0 >>= \v -> if v > 0 then Just (sqrt v) else Nothing
        fallback = (\v -> Just (v * x)) =<< (get 2 <|> get 1 <|> return x)
        pairs = [(+ 1), (* 2)] <*> [x, x * x]
    in fromMaybe 0 both + fromMaybe 1 prod + fromMaybe 0 chained + fromMaybe 0 fallback + sum pairs

  applicative :: ([(Int, Double)], Double) -> Double
  applicative p = applicativeP p

  -- tails inits intercalate intersperse isPrefixOf isSuffixOf isInfixOf
  -- elemIndex find findIndex dropWhileEnd delete (\\) union intersect
  windowsP :: (Ord a, Floating a) => [a] -> a
  windowsP xs =
    let pairwise = [take 2 t | t <- tails xs, length t >= 2]
        prefixes = filter (not . null) (inits xs)
        joined = intercalate [0.5] [xs, reverse xs]
        spaced = intersperse 1 xs
        flags = take 1 xs `isPrefixOf` xs && [last xs] `isSuffixOf` xs && take 2 xs `isInfixOf` xs
    in sum (map product pairwise) + sum (map (\q -> sum q / fromIntegral (length q)) prefixes)
       + sum (zipWith (*) joined (cycle [1, 2])) + product (map (\x -> 1 + x / 5) spaced)
       + (if flags then 1 else 0)
       + maybe 0 fromIntegral (elemIndex (last xs) xs) + fromMaybe 0 (find (> 0) xs)
       + maybe 0 fromIntegral (findIndex (< 0) xs) + sum (dropWhileEnd (< 0) xs)
       + sum (delete (head xs) xs) + sum (xs \\ take 1 xs) + sum (union xs [1])
       + sum (intersect xs (take 2 xs))

  windows :: [Double] -> Double
  windows xs = windowsP xs
  |]

-- | The polymorphic twin of 'ramp' for the forward-mode reference: in
-- differentiable code an infinite range over a type variable has no dual
-- (the Enum constraint of a signature gives the finite ranges only).
rampRef :: (Enum a, Ord a, Floating a) => (a, a, [a]) -> a
rampRef (x, y, ws) =
  sum (zipWith (*) [x ..] ws) + sum (take 3 [x, y ..]) + sum (zipWith (*) [y, x ..] (reverse ws))
  + sum (takeWhile (< x + 3.5) [y ..]) * 0.5 + sum (zipWith (*) [1.5 ..] ws)
  + product (take 2 [0.5, 0.75 ..]) + [x ..] !! 4 + sum (take 2 (drop 3 [x, 2 * y ..]))

spec :: Spec
spec = describe "Data.List, Data.Maybe, Data.Either, Functor, Foldable, Traversable" $ do
  let pairs = listOf1N 5 ((,) <$> dbl <*> dbl)
      tableGen = (,) <$> listOf1N 4 ((,) <$> choose (0, 4) <*> dbl) <*> listOf1N 5 (choose (0, 5))
      maybeGen = oneof [pure Nothing, Just <$> dbl]
      eitherGen = oneof [Left <$> choose (0, 3), Right <$> dbl]
  checkGradFwd "sort insert (median)" (listOf1N 7 dbl) median medianP $(grad 'median)
  checkGradFwd "sortBy sortOn comparing on Down" (listOf1N 6 dbl) ranked rankedP $(grad 'ranked)
  checkGradFwd "nearest neighbours: sortOn minimumBy maximumBy" ((,) <$> dbl <*> pairs) knn knnP $(grad 'knn)
  checkGradFwd "transpose"
    (do { r <- choose (1, 4); c <- choose (1, 4); (,) <$> matOf r c dbl <*> vecOf c dbl })
    columns columnsP $(grad 'columns)
  checkGradFwd "lookup table: fromMaybe catMaybes isJust isNothing fromJust listToMaybe maybeToList"
    tableGen table tableP $(grad 'table)
  checkGradFwd "mapMaybe" (listOf1N 6 dbl) safeLogs safeLogsP $(grad 'safeLogs)
  checkGradFwd "fmap (<$>) (<&>) (<$) ($>) on lists, Maybe, Either, pairs"
    ((,,,) <$> listOf1N 4 dbl <*> maybeGen <*> eitherGen <*> ((,) <$> choose (0, 3) <*> dbl))
    fmaps fmapsP $(grad 'fmaps)
  checkGradFwd "Foldable on Maybe, Either, pairs"
    ((,,) <$> maybeGen <*> eitherGen <*> listOf1N 4 dbl) containers containersP $(grad 'containers)
  checkGradFwd "traverse mapM sequence sequenceA for forM" (listOf1N 5 dbl) traversals traversalsP $(grad 'traversals)
  checkGradFwd "lefts rights partitionEithers isLeft isRight fromLeft fromRight"
    (listOf1N 5 (oneof [Left <$> dbl, (\a b -> Right (a, b)) <$> dbl <*> dbl])) eithers eithersP $(grad 'eithers)
  checkGradFwd "infinite Int and Char ranges" (listOf1N 6 dbl) indexed indexedP $(grad 'indexed)
  checkGradFwd "cycle repeat" ((,) <$> listOf1N 5 dbl <*> dbl) cycling cyclingP $(grad 'cycling)
  checkGradFwd "infinite Double ranges"
    (choose (1, 6) >>= \n -> (,,) <$> dbl <*> dbl <*> vecOf n dbl) ramp rampRef $(grad 'ramp)
  checkJac "infinite Double ranges as outputs" ((,) <$> dbl <*> choose (0, 4)) rampOut $(jacobian 'rampOut)
  checkDiff "infinite Double ranges as outputs" ((,) <$> dbl <*> choose (0, 4)) rampOut $(differentiate 'rampOut)
  checkGradFwd "span break partition maximumBy minimumBy" (listOf1N 6 dbl) splitting splittingP $(grad 'splitting)
  checkGradFwd "scanl1 scanr1 scanl' foldl1' foldr'" (listOf1N 6 dbl) running runningP $(grad 'running)
  checkGradFwd "group groupBy nub nubBy" (listOf1N 6 dbl) histogram histogramP $(grad 'histogram)
  checkGradFwd "unfoldr until" ((,) <$> dbl <*> choose (1, 3)) unfolding unfoldingP $(grad 'unfolding)
  checkGradFwd "mapAccumL mapAccumR" ((,) <$> choose (0.1, 0.9) <*> listOf1N 5 dbl) smoothing smoothingP $(grad 'smoothing)
  checkGradFwd "(&) ($!) on swap genericLength" ((,) <$> listOf1N 5 dbl <*> ((,) <$> dbl <*> dbl))
    plumbing plumbingP $(grad 'plumbing)
  checkGradFwd "(<*>) liftA2 (>>=) (=<<) pure return (<|>) on Maybe and lists" ((,) <$> (fst <$> tableGen) <*> dbl)
    applicative applicativeP $(grad 'applicative)
  checkGradFwd "tails inits intercalate intersperse isPrefixOf find elemIndex dropWhileEnd delete union"
    (listOf1N 6 dbl) windows windowsP $(grad 'windows)
