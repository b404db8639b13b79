{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE MultiWayIf #-}
{-# LANGUAGE TemplateHaskell #-}
-- | Language constructs: lambdas, let and where, guards, if, case with nested
-- patterns, as-patterns, wildcards, literal patterns, tuples, multi-clause
-- functions with fall-through guards, pattern guards, sections, ($), (.),
-- partial application, list comprehensions, list literals, arithmetic
-- sequences.
module Corpus.Syntax where

import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  -- lambdas: several arguments, tuple patterns, a lambda bound by let and
  -- applied twice, a lambda returning a lambda
  lambdasP :: Floating a => (a, a, a) -> a
  lambdasP (x, y, z) =
    let sq = \v -> v * v
        add = \a -> \b -> a + b
    in (\(a, b) c -> a * c + sin b) (x, y) z + sq (sq x) + add (sq y) z + (\_ w -> w) x y

  lambdas :: (Double, Double, Double) -> Double
  lambdas p = lambdasP p

  -- let and where: several bindings, nested, tuple pattern bindings, a
  -- where shared between guards, local signatures
  letWhereP :: (Ord a, Floating a) => a -> a -> a
  letWhereP x y
    | s > 1 = t * s
    | otherwise = t - s
    where
      s = let u = x * y
              (v, w) = (u + 1, u - 1)
          in v * w / (1 + x * x)
      t = sq (x + y) + c
        where sq :: Floating b => b -> b
              sq q = q * q
              c = 2

  letWhere :: (Double, Double) -> Double
  letWhere (x, y) = letWhereP x y

  -- if: nested, inside arithmetic, on a Bool computed from Doubles
  ifsP :: (Ord a, Floating a) => [a] -> a
  ifsP xs = sum [ (if x > 0 then (if x > 1 then x * x else sin x) else negate x) + (if null xs then 0 else 1) | x <- xs ]

  ifs :: [Double] -> Double
  ifs xs = ifsP xs

  -- case: nested patterns (lists, tuples, Maybe), as-patterns, wildcards, literals
  casesP :: Floating a => ([a], Maybe (a, Int)) -> a
  casesP (xs, m) =
    let a = case xs of
              [] -> 0
              [x] -> x * x
              (x : rest@(y : _)) -> x * y + sum rest
        b = case m of
              Nothing -> 1
              Just (v, 0) -> v
              Just (v, 1) -> v * v
              Just (v, _) -> sin v
    in a * b + (case (xs, b) of { (_ : _ : _ : _, w) -> w * 3; (_, w) -> w })

  cases :: ([Double], Maybe (Double, Int)) -> Double
  cases p = casesP p

  -- literal patterns: Int, Char, Double, String (as a list of Char)
  literalPats :: (Int, Char, Double, [Char]) -> Double
  literalPats (n, c, x, s) =
    (case n of { 0 -> x; 1 -> x * x; _ -> x * 3 })
    + (case c of { 'a' -> sin x; _ -> cos x })
    + (case x of { 0 -> 100; 1.5 -> 200; _ -> x })
    + (case s of { "dual" -> x * 5; _ -> x })

  -- multi-clause functions; guards that fail fall through to the next clause
  clipP :: (Ord a, Num a) => a -> a -> a
  clipP lim x | x > lim = lim
  clipP lim x | x < negate lim = negate lim
              | x == 0 = 0
  clipP _ x = x * 2

  sumClipP :: (Ord a, Num a) => [a] -> a
  sumClipP [] = 0
  sumClipP [x] = clipP 1 x
  sumClipP (x : y : rest) | x > y = clipP 1 x + sumClipP rest
                          | x < y - 1 = clipP 1 y + sumClipP (y : rest)
  sumClipP (x : rest) = x * x + sumClipP rest

  sumClip :: [Double] -> Double
  sumClip xs = sumClipP xs

  -- pattern guards: binding a Maybe, let in a guard, boolean after a binding
  patGuardsP :: (Ord a, Floating a) => ([(Int, a)], a) -> a
  patGuardsP (table, x)
    | Just v <- lookup 1 table, v > 0 = v * x
    | Just v <- lookup 2 table, let w = v * v, w > 0.25 = w + x
    | (_, v) : _ <- table = v - x
    | otherwise = x * x * x

  patGuards :: ([(Int, Double)], Double) -> Double
  patGuards p = patGuardsP p

  -- tuples: nested tuple patterns and results, a tuple-returning local function
  tuplesP :: Floating a => ((a, a), (a, (a, a))) -> a
  tuplesP ((a, b), (c, (d, e))) =
    let swap (p, q) = (q, p)
        (u, v) = swap (a * b, c + d)
        ((w, _), z) = ((e, a), (u, v))
    in u * v + w * fst z + snd z

  tuples :: ((Double, Double), (Double, (Double, Double))) -> Double
  tuples p = tuplesP p

  -- sections on both sides, backquoted sections, (-) via subtract
  sectionsP :: Floating a => ([a], a) -> a
  sectionsP (xs, y) =
    sum (map (* 2) xs) + sum (map (2 *) xs) + sum (map (/ y) xs) + sum (map (y /) xs)
    + sum (map (subtract y) xs) + sum (map (`logBase` y) (map (+ 2) xs))
    + sum (map (y `atan2'` ) xs) + sum (map (^ (2 :: Int)) xs) + sum (map (** y) (map (+ 3) xs))
    where atan2' a b = a * b + 1

  sections :: ([Double], Double) -> Double
  sections p = sectionsP p

  -- ($) and (.): application, composition chains, composition as a value,
  -- ($ x) sections
  composeP :: Floating a => (a, a) -> a
  composeP (x, y) =
    let f = sin . (* 2) . (+ y)
        g = foldr (.) id [exp . negate, (* y), cos]
    in f x + g x + ((sqrt . (+ 1) . (* x)) $ x) + sum (map ($ x) [sin, cos, (* y)]) + (id $ y * y)
       + (sin $ cos $ x * y)

  compose :: (Double, Double) -> Double
  compose p = composeP p

  -- partial application: of top-level, local, Prelude and constructor functions
  scaleP :: Num a => a -> a -> a
  scaleP k v = k * v

  partialP :: (Ord a, Floating a) => ([a], a) -> a
  partialP (xs, k) =
    let poly a b c = a * c * c + b * c
        f = poly k 2
        pairs = zipWith (,) xs (map (scaleP k) xs)
    in sum (map (scaleP 3) xs) + sum (map f xs) + foldr max 0 xs + sum (map (uncurry (*)) pairs)
       + sum (zipWith3 poly xs xs xs)

  partial :: ([Double], Double) -> Double
  partial p = partialP p

  -- list comprehensions: several generators, guards, let, patterns in generators
  comprehP :: (Ord a, Floating a) => ([a], [(a, a)]) -> a
  comprehP (xs, ps) =
    sum [ x * y | x <- xs, y <- xs, x < y ]
    + sum [ z | (a, b) <- ps, let z = a * b, z > 0 ]
    + sum [ sin a | Just a <- [Just 1, Nothing, Just (head xs)] ]
    + product [ 1 + x * 0.1 | x <- xs ]

  comprehs :: ([Double], [(Double, Double)]) -> Double
  comprehs p = comprehP p

  -- list literals and arithmetic sequences (Int and Double)
  listLitsP :: (Ord a, Enum a, Floating a) => (a, a) -> a
  listLitsP (x, y) =
    sum [x, y, 2 * x, x * y] + sum [x .. x + 3] + sum [y, y + 0.5 .. y + 2]
    + fromIntegral (sum [1 .. 4 :: Int]) * x + sum (map fromIntegral [10, 8 .. 1 :: Int]) * y
    + product [x]

  listLits :: (Double, Double) -> Double
  listLits p = listLitsP p

  -- multi-way if, strictness annotations and irrefutable patterns in bindings
  misc :: (Double, Double) -> Double
  misc (x, y) =
    let !a = x * y
        ~(b, c) = (x + 1, y - 1)
    in a + b * c + g x
    where g v = if | v > 1 -> v * v | v > 0 -> sin v | otherwise -> negate v
  |]

spec :: Spec
spec = describe "constructs" $ do
  checkGradFwd "lambdas" ((,,) <$> dbl <*> dbl <*> dbl) lambdas lambdasP $(grad 'lambdas)
  checkGradFwd "let and where" ((,) <$> dbl <*> dbl) letWhere (\(x, y) -> letWhereP x y) $(grad 'letWhere)
  checkGradFwd "if" (listOf1N 6 dbl) ifs ifsP $(grad 'ifs)
  checkGradFwd "case, nested patterns, as-patterns, wildcards"
    ((,) <$> listOf1N 5 dbl <*> oneof [pure Nothing, (\a b -> Just (a, b)) <$> dbl <*> choose (0, 3)])
    cases casesP $(grad 'cases)
  checkGrad "literal patterns"
    ((,,,) <$> choose (0, 2) <*> elements "ab" <*> dbl <*> elements ["dual", "rev"])
    literalPats $(grad 'literalPats)
  it "literal patterns at the literals (Double)" $ do
    -- x == 0 and x == 1.5 select constant branches: no derivative through them
    $(grad 'literalPats) (2, 'a', 0, "dual") `shouldBe` (2, 'a', 3 + cos 0 + 0 + 5, "dual")
    $(grad 'literalPats) (1, 'b', 1.5, "rev") `shouldBe` (1, 'b', 2 * 1.5 - sin 1.5 + 0 + 1, "rev")
  checkGradFwd "multi-clause functions with fall-through guards" (listOf1N 7 (choose (-3, 3))) sumClip sumClipP $(grad 'sumClip)
  checkGradFwd "pattern guards"
    ((,) <$> listOf1N 3 ((,) <$> choose (0, 3) <*> dbl) <*> dbl) patGuards patGuardsP $(grad 'patGuards)
  checkGradFwd "tuples"
    ((\a b c d e -> ((a, b), (c, (d, e)))) <$> dbl <*> dbl <*> dbl <*> dbl <*> dbl) tuples tuplesP $(grad 'tuples)
  checkGradFwd "operator sections" ((,) <$> listOf1N 5 pos <*> pos) sections sectionsP $(grad 'sections)
  checkGradFwd "($) and (.)" ((,) <$> pos <*> dbl) compose composeP $(grad 'compose)
  checkGradFwd "partial application" ((,) <$> listOf1N 5 dbl <*> dbl) partial partialP $(grad 'partial)
  checkGradFwd "list comprehensions" ((,) <$> listOf1N 5 dbl <*> listOf1N 4 ((,) <$> dbl <*> dbl)) comprehs comprehP $(grad 'comprehs)
  checkGradFwd "list literals and arithmetic sequences" ((,) <$> dbl <*> dbl) listLits listLitsP $(grad 'listLits)
  checkGrad "multi-way if, bang and lazy patterns" ((,) <$> dbl <*> dbl) misc $(grad 'misc)
