{-# LANGUAGE DeriveFunctor #-}
{-# LANGUAGE TemplateHaskell #-}
-- | Classes and instances in differentiable blocks: the standard numeric
-- classes instantiated for user types (a 2-vector, complex numbers,
-- quaternions), user classes with methods, default methods, superclasses
-- and constants, and polymorphic code over them.
module Corpus.Classes (spec) where

import Test.Hspec
import Test.QuickCheck (choose)

import Check
import Numeric.DualRev

differentiable [d|
  data V2 = V2 Double Double
    deriving (Eq, Show)

  instance Num V2 where
    V2 a b + V2 c d = V2 (a + c) (b + d)
    V2 a b - V2 c d = V2 (a - c) (b - d)
    V2 a b * V2 c d = V2 (a * c) (b * d)
    abs (V2 a b) = V2 (abs a) (abs b)
    signum (V2 a b) = V2 (signum a) (signum b)
    fromInteger n = V2 (fromInteger n) (fromInteger n)

  instance Fractional V2 where
    V2 a b / V2 c d = V2 (a / c) (b / d)
    fromRational r = V2 (fromRational r) (fromRational r)

  -- only some methods: the others are the class's defaults
  instance Floating V2 where
    pi = V2 pi pi
    exp (V2 a b) = V2 (exp a) (exp b)
    log (V2 a b) = V2 (log a) (log b)
    sin (V2 a b) = V2 (sin a) (sin b)
    cos (V2 a b) = V2 (cos a) (cos b)
    asin (V2 a b) = V2 (asin a) (asin b)
    acos (V2 a b) = V2 (acos a) (acos b)
    atan (V2 a b) = V2 (atan a) (atan b)
    sinh (V2 a b) = V2 (sinh a) (sinh b)
    cosh (V2 a b) = V2 (cosh a) (cosh b)
    asinh (V2 a b) = V2 (asinh a) (asinh b)
    acosh (V2 a b) = V2 (acosh a) (acosh b)
    atanh (V2 a b) = V2 (atanh a) (atanh b)

  dot2 :: V2 -> V2 -> Double
  dot2 (V2 a b) (V2 c d) = a * c + b * d

  -- arithmetic, literals, a negation through the class default, a default
  -- sqrt (x ** 0.5 = exp (log x * 0.5)) and tanh (sinh / cosh)
  vecArith :: (Double, Double) -> Double
  vecArith (x, y) =
    let v = V2 x y
        w = v * v + 1 - negate v / 2
    in dot2 w (sin v) + dot2 (sqrt (v * v + 1)) (tanh v)

  -- a polymorphic function of the block used at the user type and at Double
  horner :: Num a => [a] -> a -> a
  horner cs x = foldr (\c acc -> c + x * acc) 0 cs

  polyBoth :: ([Double], Double) -> Double
  polyBoth (cs, x) = dot2 (horner (map (\c -> V2 c (2 * c)) cs) (V2 x 0.5)) (V2 1 1) + horner cs x

  -- complex numbers of our own, a few iterations of z^2 + c
  data Cx = Cx Double Double
    deriving (Eq, Show)

  instance Num Cx where
    Cx a b + Cx c d = Cx (a + c) (b + d)
    Cx a b - Cx c d = Cx (a - c) (b - d)
    Cx a b * Cx c d = Cx (a * c - b * d) (a * d + b * c)
    negate (Cx a b) = Cx (negate a) (negate b)
    abs z = Cx (magnitude z) 0
    signum _ = error "signum on Cx"
    fromInteger n = Cx (fromInteger n) 0

  instance Fractional Cx where
    Cx a b / Cx c d = let m = c * c + d * d in Cx ((a * c + b * d) / m) ((b * c - a * d) / m)
    fromRational r = Cx (fromRational r) 0

  magnitude :: Cx -> Double
  magnitude (Cx a b) = sqrt (a * a + b * b)

  escape :: (Double, Double) -> Double
  escape (re, im) =
    let c = Cx re im
        zs = take 4 (iterate (\z -> z * z / (1 + z * z) + c) 0)
    in sum (map magnitude zs)

  -- quaternions: the Hamilton product rotates a vector
  data Q = Q Double Double Double Double
    deriving (Eq, Show)

  instance Num Q where
    Q a b c d + Q e f g h = Q (a + e) (b + f) (c + g) (d + h)
    Q a b c d * Q e f g h =
      Q (a * e - b * f - c * g - d * h)
        (a * f + b * e + c * h - d * g)
        (a * g - b * h + c * e + d * f)
        (a * h + b * g - c * f + d * e)
    negate (Q a b c d) = Q (negate a) (negate b) (negate c) (negate d)
    abs = error "abs on Q"
    signum = error "signum on Q"
    fromInteger n = Q (fromInteger n) 0 0 0

  conj :: Q -> Q
  conj (Q a b c d) = Q a (negate b) (negate c) (negate d)

  rotate :: ((Double, Double, Double), (Double, Double, Double)) -> Double
  rotate ((t, ax, ay), (x, y, z)) =
    let n = sqrt (ax * ax + ay * ay + 1)
        s = sin (t / 2) / n
        q = Q (cos (t / 2)) (s * ax) (s * ay) s
        Q _ rx ry rz = q * Q 0 x y z * conj q
    in rx + 2 * ry + 3 * rz

  -- a user class: methods, a default method, instances for two types
  class Shape a where
    area :: a -> Double
    perimeter :: a -> Double
    cost :: a -> Double
    cost s = area s + 2 * perimeter s

  data Circle = Circle Double
  data Rect = Rect Double Double

  instance Shape Circle where
    area (Circle r) = pi * r * r
    perimeter (Circle r) = 2 * pi * r

  instance Shape Rect where
    area (Rect w h) = w * h
    perimeter (Rect w h) = 2 * (w + h)
    cost r = area r + perimeter r / 4

  totalCost :: Shape s => [s] -> Double
  totalCost ss = sum (map cost ss)

  shapes :: (Double, Double) -> Double
  shapes (r, w) = totalCost [Circle r, Circle w] + totalCost [Rect r w, Rect w 2]

  -- a superclass, a constant method, a method taking two arguments
  class Shape a => Solid a where
    height :: a -> Double
    volume :: a -> Double
    volume s = area s * height s

  data Can = Can Double Double

  instance Shape Can where
    area (Can r _) = pi * r * r
    perimeter (Can r _) = 2 * pi * r

  instance Solid Can where
    height (Can _ h) = h

  cans :: (Double, Double) -> Double
  cans (r, h) = volume (Can r h) + cost (Can h r)

  -- a vector-space class with an operator method, a scaling method and a
  -- zero; a polymorphic explicit-Euler step over it
  class VectorSpace v where
    (^+^) :: v -> v -> v
    (*^) :: Double -> v -> v
    zeroV :: v

  infixl 6 ^+^
  infixl 7 *^

  instance VectorSpace V2 where
    V2 a b ^+^ V2 c d = V2 (a + c) (b + d)
    k *^ V2 a b = V2 (k * a) (k * b)
    zeroV = V2 0 0

  sumV :: VectorSpace v => [v] -> v
  sumV = foldr (^+^) zeroV

  euler :: VectorSpace v => Double -> (v -> v) -> Int -> v -> v
  euler dt f n x0 = if n == 0 then x0 else euler dt f (n - 1) (x0 ^+^ dt *^ f x0)

  orbit :: (Double, Double) -> Double
  orbit (px, py) =
    let force (V2 x y) = let r = sqrt (x * x + y * y) in V2 (negate x / (r * r * r)) (negate y / (r * r * r))
        V2 fx fy = euler 0.1 force 5 (V2 px py)
        V2 sx sy = sumV [V2 px py, 2 *^ V2 py px, zeroV]
    in fx + 2 * fy + sx * sy

  -- a class method passed to map, unsaturated
  perimeters :: [Double] -> Double
  perimeters rs = sum (map perimeter (map Circle rs))

  -- Ord at a user type, through its own compare
  data Item = Item Double Double

  instance Eq Item where
    Item a _ == Item b _ = a == b

  instance Ord Item where
    compare (Item a _) (Item b _) = compare a b

  weight :: Item -> Double
  weight (Item _ w) = w

  heaviest :: [(Double, Double)] -> Double
  heaviest ps = weight (maximum [Item k w | (k, w) <- ps]) * weight (minimum [Item k w | (k, w) <- ps])

  -- a Semigroup/Monoid of running statistics
  data Stats = Stats Double Double Double

  instance Semigroup Stats where
    Stats n a b <> Stats m c d = Stats (n + m) (a + c) (b + d)

  instance Monoid Stats where
    mempty = Stats 0 0 0

  -- deriving Functor: fmap with differentiable functions on a type reused
  -- as is and on one with a dual twin
  data FPair a = FPair a a
    deriving (Show, Functor)

  data FTagged a = FTagged a Double [a]
    deriving Functor

  fmaps :: [Double] -> Double
  fmaps xs =
    let FPair a b = fmap (* 2) (FPair (head xs) (last xs))
        FTagged t w us = fmap sin (FTagged (sum xs) 3 xs)
    in a * b + t * w + sum us + sum (fmap exp (Just (head xs)))

  -- class-polymorphic in the monad, and in an Enum with an infinite range
  stepM :: Monad m => (Double -> m Double) -> Double -> m Double
  stepM g x = do
    y <- g x
    z <- g (y * x)
    return (y + z)

  safeLog :: Double -> Maybe Double
  safeLog x = if x > 0 then Just (log x) else Nothing

  ramp :: (Enum a, Floating a) => a -> a
  ramp x = sum (take 3 [x ..])

  monadPoly :: Double -> Double
  monadPoly x = case stepM safeLog x of
    Just v -> v + sum (stepM (\t -> [t, 2 * t]) x) + ramp x * x
    Nothing -> 0

  variance :: [Double] -> Double
  variance xs =
    let Stats n s q = mconcat [Stats 1 x (x * x) | x <- xs]
        mean = s / n
    in q / n - mean * mean
  |]

spec :: Spec
spec = describe "classes and instances" $ do
  checkGrad "Num, Fractional, Floating for a vector type (defaults included)" ((,) <$> pos <*> pos) vecArith $(grad 'vecArith)
  checkGrad "a polymorphic block function at a user type and at Double"
    ((,) <$> listOf1N 4 dbl <*> unit) polyBoth $(grad 'polyBoth)
  checkGrad "complex numbers (Num, Fractional)" ((,) <$> unit <*> unit) escape $(grad 'escape)
  checkGrad "quaternion rotation" ((,) <$> ((,,) <$> dbl <*> dbl <*> dbl) <*> ((,,) <$> dbl <*> dbl <*> dbl))
    rotate $(grad 'rotate)
  checkGrad "user class with a default method" ((,) <$> pos <*> pos) shapes $(grad 'shapes)
  checkGrad "superclass and default using it" ((,) <$> pos <*> pos) cans $(grad 'cans)
  -- Starting at least sqrt 2 from the origin keeps the five Euler steps
  -- more than 1.1 away from the force's singularity; nearer starts can
  -- fall onto it, where the function is too ill-conditioned for finite
  -- differences to check anything.
  checkGrad "vector-space class with operators, a constant, a polymorphic integrator"
    ((,) <$> choose (1, 3) <*> choose (1, 3)) orbit $(grad 'orbit)
  checkGrad "a method unsaturated" (listOf1N 5 dbl) perimeters $(grad 'perimeters)
  checkGrad "Eq and Ord instances" (listOf1N 5 ((,) <$> dbl <*> dbl)) heaviest $(grad 'heaviest)
  checkGrad "deriving Functor: fmap on user types" (listOf1N 4 dbl) fmaps $(grad 'fmaps)
  checkGrad "polymorphic in the monad (Maybe, list) and in Enum" pos monadPoly $(grad 'monadPoly)
  checkGrad "Semigroup and Monoid instances" (listOf1N 6 dbl) variance $(grad 'variance)
