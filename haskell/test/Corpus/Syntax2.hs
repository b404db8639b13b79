{-# LANGUAGE BangPatterns #-}
{-# LANGUAGE LambdaCase #-}
{-# LANGUAGE MultiWayIf #-}
{-# LANGUAGE NamedFieldPuns #-}
{-# LANGUAGE RecordWildCards #-}
{-# LANGUAGE TemplateHaskell #-}
{-# LANGUAGE TupleSections #-}
{-# LANGUAGE ViewPatterns #-}
-- | The syntax people write: do-notation in Maybe, Either, lists and
-- Identity with the Control.Monad functions, (<*>) and liftA2, \case,
-- multi-way if inside do, tuple sections, bang patterns, view patterns,
-- record wildcards and puns, user operators with fixity declarations and
-- their sections, let with guards, case alternatives with where.
module Corpus.Syntax2 where

import Control.Applicative (liftA2, (<|>))
import Control.Monad
import Data.Functor.Identity (Identity (..))
import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  data Shape = Circle Double | Rect Double Double | Tri Double Double Double
    deriving (Eq, Show)

  data Particle = Particle { position :: Double, velocity :: Double, mass :: Double }
    deriving (Eq, Show)

  -- what the front end used to reject, as first written
  formerlyRejected :: [Double] -> Double
  formerlyRejected xs =
    sum (do { x <- xs; [x, x * 2] })
    + (\case { [] -> 0; (x : _) -> x }) xs
    + sum (map (uncurry (*)) (map (, 2) xs))
    + lastOf xs
    where
      lastOf (reverse -> (x : _)) = x
      lastOf _ = 0

  -- a safe-division pipeline in Maybe: binds, let, guard, a pattern that
  -- can fail (Nothing), multi-way if as the last statement
  safeDiv :: Double -> Double -> Maybe Double
  safeDiv a b = if abs b < 0.1 then Nothing else Just (a / b)

  safeLog :: Double -> Maybe Double
  safeLog x
    | x > 0 = Just (log x)
    | otherwise = Nothing

  pipeline :: (Double, Double, Double) -> Double
  pipeline (a, b, c) = case r of
    Nothing -> a * 0.5
    Just v -> v
    where
      r = do
        q <- safeDiv a b
        let s = q * c
        guard (s > -3)
        Just t <- pure (safeLog (s * s + 1))
        u <- safeDiv (t + a) (c + 3)
        if | u > 1 -> return (sqrt u)
           | u < -1 -> Nothing
           | otherwise -> pure (u * u + q)

  -- the list monad: a sum over ordered pairs, with guard, a failing pattern
  -- (Nothing elements are skipped) and a nested do
  pairSum :: ([Double], [Maybe Double]) -> Double
  pairSum (xs, ms) = sum ps + sum qs
    where
      n = length xs
      ps = do
        (i, x) <- zip [0 .. n - 1] xs
        (j, y) <- zip [0 .. n - 1] xs
        guard (i < j)
        return (x * y)
      qs = do
        Just m <- ms
        x <- xs
        [m * x, sum (do { y <- [x, m]; [sin y] })]

  -- Either with an error message: mapM, when, unless, forM_, Left
  checked :: Double -> Either String Double
  checked x = do
    when (x > 1.9) (Left "too large")
    unless (x > -1.9) (Left "too small")
    return (x * x)

  validated :: [Double] -> Double
  validated xs = either (const 0) sum $ do
    ys <- mapM checked xs
    forM_ ys $ \y -> when (y > 100) (Left "unreachable")
    z <- foldM (\acc y -> if y > 50 then Left "big" else Right (acc + y * acc + y)) 1 ys
    pure (z : ys)

  -- Identity: runIdentity over a do block, replicateM_ and a bang pattern
  idChain :: (Double, Double) -> Double
  idChain (x, y) = runIdentity $ do
    !a <- Identity (x * y)
    b <- return (sin a + y)
    replicateM_ 2 (Identity b)
    (c, d) <- pure (a + b, a - b)
    pure (c * d + a)

  -- the Control.Monad functions in Maybe and lists
  monadFns :: ([Double], [Double]) -> Double
  monadFns (xs, ys) =
    maybe 0 sum (mapM safeLog (map (\x -> x * x + 0.5) xs))
    + maybe 1 sum (forM ys (\y -> safeDiv 1 (y + 5)))
    + maybe 2 sum (zipWithM safeDiv xs (map (+ 5) ys))
    + maybe 3 id (foldM (\acc x -> safeDiv (acc + x) 2) 1 xs)
    + maybe 4 sum (sequence [Just (head xs), safeLog 2, return (last ys)])
    + sum (concat (replicateM 2 (take 2 xs)))
    + sum (join [xs, ys])
    + maybe 5 id (safeLog =<< safeDiv 3 (head ys + 5))
    + maybe 6 id ((safeLog >=> safeDiv 2) (head xs * head xs + 2))
    + maybe 8 id (msum [Nothing, Just (head ys), Just 7])

  -- applicative style on Maybe: pure f <*> a <*> b, liftA2, (<|>)
  applicative :: (Double, Double) -> Double
  applicative (x, y) =
    let f a b = a * b + sin a
        ma = safeDiv x 2
        mb = safeLog (y * y + 1)
        r1 = pure f <*> ma <*> mb
        r2 = liftA2 (+) ma (Nothing <|> mb)
        r3 = Just (\v -> v * v) <*> (safeDiv 1 0 <|> Just y)
    in maybe 0 id r1 + maybe 0 id r2 + maybe 0 id r3 + maybe 9 id (ma >> mb) + maybe 9 id (mb <* ma)

  -- \case on a data type of shapes
  area :: Shape -> Double
  area = \case
    Circle r -> pi * r * r
    Rect w h | w > 0, h > 0 -> w * h
             | otherwise -> 0
    Tri a b c -> let s = (a + b + c) / 2 in sqrt (abs (s * (s - a) * (s - b) * (s - c)) + 1)

  shapes :: [Double] -> Double
  shapes ps = sum (map area (build ps)) + sum (map (\case { Circle r -> r; _ -> 1 }) (build ps))
    where
      build (a : b : c : rest) = Circle a : Rect b c : Tri a b c : build rest
      build [a] = [Circle a]
      build _ = []

  -- tuple sections: (, x), (x, ), (x, , y); the present parts first
  sections :: ([Double], Double) -> Double
  sections (xs, k) =
    sum (map (uncurry (*)) (map (, k * k) xs))
    + sum (map (uncurry (/)) (map (sin k,) (map (+ 3) xs)))
    + sum [a * b + c | (a, b, c) <- map (k,, 2) xs]
    + sum [a * b * c | (a, b, c) <- zipWith (, k,) xs (map (+ 1) xs)]
    + sum (map (\f -> let (a, b) = f 2 in a * b) [(,) k, (k,)])

  -- view patterns: a norm extracted in function arguments (falling through
  -- to the next equation), in case alternatives with guards and where, in a
  -- lambda, nested under a constructor, with a partially applied block
  -- function and a Prelude function as the view
  norm :: [Double] -> Double
  norm xs = sqrt (sum (map (\x -> x * x) xs) + 0.01)

  scaled :: Double -> [Double] -> [Double]
  scaled k = map (* k)

  clip :: [Double] -> Double
  clip (norm -> n) | n > 2 = 2 + 0.1 * n
  clip (reverse -> (x : _)) = x * x
  clip _ = 0

  views :: ([Double], Double) -> Double
  views (xs, k) =
    clip xs + clip (scaled k xs)
    + (case Just (scaled k xs) of
         Just (norm -> n) | n > m -> n - m
                          | n < 0 -> 100
           where m = 1.5
         Just (sum -> s) -> s * k
         Nothing -> 0)
    + (\(norm -> n) (scaled 2 -> (y : _)) -> n * y) xs xs
    + sum [ n | Just (norm -> n) <- [Just xs, Nothing, Just (scaled k xs)] ]
    + vsum (zip xs (map (* k) xs))
    where
      vsum (lookup 0 -> Just v) = v
      vsum ((fst -> a) : rest@(map snd -> (b : _))) = a * b + vsum rest
      vsum [snd -> b] = b
      vsum _ = 0

  -- records: wildcards and puns in patterns and construction, for a type
  -- with Double fields declared in the block
  step :: Double -> Particle -> Particle
  step dt Particle{..} =
    let v' = velocity - dt * position / mass
        x' = position + dt * v'
    in Particle { position = x', velocity = v', .. }

  energy :: Particle -> Double
  energy Particle{position, velocity, mass} = 0.5 * mass * velocity * velocity + 0.5 * position * position

  mkParticle :: Double -> Double -> Particle
  mkParticle position velocity = let mass = 2 in Particle{..}

  records :: (Double, Double) -> Double
  records (x, v) = energy (step 0.1 (step 0.1 (mkParticle x v)))
    + (let Particle{mass} = mkParticle v x in mass * x)

  -- user operators with fixity declarations: chains, mixed precedence,
  -- both sections, a backquoted function with its own fixity
  infixl 6 <+>
  (<+>) :: (Double, Double) -> (Double, Double) -> (Double, Double)
  (a, b) <+> (c, d) = (a + c, b + d)

  infixl 7 *.
  (*.) :: Double -> (Double, Double) -> (Double, Double)
  k *. (a, b) = (k * a, k * b)

  infixl 7 `dotP`
  dotP :: (Double, Double) -> (Double, Double) -> Double
  dotP (a, b) (c, d) = a * c + b * d

  operators :: ((Double, Double), (Double, Double), Double) -> Double
  operators (u, v, k) =
    let w = u <+> k *. v <+> 2 *. u
        ws = map (<+> v) [u, w] ++ map (u <+>) [v, w] ++ map (k *.) [u, v]
    in w `dotP` w + sum (map (`dotP` u) ws) + u `dotP` v * k

  -- let with guards, case alternatives with where, where over guards
  guardsWhere :: (Double, Double) -> Double
  guardsWhere (x, y) =
    let r | x > y = x - y
          | x < -1 = x * x
          | otherwise = y
        (p, q) | r > 0 = (r, x)
               | otherwise = (x, r)
    in p * q + classify x + (case compare x y of
                               LT -> lo * 2 where lo = x * y
                               GT | d > 1 -> d
                                  | otherwise -> d * d
                                  where d = x - y
                               EQ -> 0)
    where
      classify v
        | v > t = v * t
        | v < negate t = sin v
        | otherwise = c
        where t = 1.2
              c = v * v * v
  |]

spec :: Spec
spec = describe "syntax: do, monads, \\case, sections, view patterns, records, operators" $ do
  checkGrad "do, \\case, a tuple section, a view pattern" (listOf1N 4 dbl) formerlyRejected $(grad 'formerlyRejected)
  checkGrad "do in Maybe: a safe-division pipeline" ((,,) <$> dbl <*> dbl <*> dbl) pipeline $(grad 'pipeline)
  checkGrad "do in lists: pairs, guard, failing patterns, nested do"
    ((,) <$> listOf1N 5 dbl <*> listOf1N 3 (oneof [pure Nothing, Just <$> dbl])) pairSum $(grad 'pairSum)
  checkGrad "do in Either: mapM, when, unless, forM_, foldM" (listOf1N 4 dbl) validated $(grad 'validated)
  checkGrad "do in Identity, bang and tuple patterns in binds" ((,) <$> dbl <*> dbl) idChain $(grad 'idChain)
  checkGrad "Control.Monad functions in Maybe and lists"
    ((,) <$> listOf1N 4 dbl <*> listOf1N 4 dbl) monadFns $(grad 'monadFns)
  checkGrad "(<*>), liftA2, (<|>), (>>), (<*)" ((,) <$> dbl <*> dbl) applicative $(grad 'applicative)
  checkGrad "\\case on a data type" (listOf1N 7 pos) shapes $(grad 'shapes)
  checkGrad "tuple sections" ((,) <$> listOf1N 4 dbl <*> dbl) sections $(grad 'sections)
  checkGrad "view patterns" ((,) <$> listOf1N 4 dbl <*> dbl) views $(grad 'views)
  checkGrad "record wildcards and puns" ((,) <$> dbl <*> pos) records $(grad 'records)
  checkGrad "user operators with fixities, their sections"
    ((,,) <$> ((,) <$> dbl <*> dbl) <*> ((,) <$> dbl <*> dbl) <*> dbl) operators $(grad 'operators)
  checkGrad "let with guards, case with where, where over guards" ((,) <$> dbl <*> dbl) guardsWhere $(grad 'guardsWhere)
  it "do in Maybe: the failing branches" $ do
    -- b near 0: Nothing from safeDiv, so the result is a * 0.5
    $(grad 'pipeline) (3, 0.05, 1) `shouldBe` (0.5, 0, 0)
    -- s <= -3: guard fails
    $(grad 'pipeline) (-2, 0.5, 2) `shouldBe` (0.5, 0, 0)
  it "do in Either: a Left stops the rest" $
    $(grad 'validated) [1, 1.95, 0.3] `shouldBe` [0, 0, 0]
  it "a failing pattern in the list monad skips the element" $
    $(grad 'pairSum) ([2], [Nothing]) `shouldBe` ([0], [Nothing])
