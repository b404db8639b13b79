{-# LANGUAGE RankNTypes #-}
{-# LANGUAGE TypeFamilies #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- Every derivative of a function of one variable: a number carrying the
-- derivatives of all orders at once (a tower), for @ad@'s tower functions
-- ('diffs', 'taylor', 'dus', ...).  This mode is pure Haskell, not the C
-- engine: derivatives of every order in one pass are a forward,
-- coefficient-by-coefficient computation that a reverse tape does not
-- give.
--
-- A tower is the list of derivatives d0 (the value), d1, d2, ...; a list
-- that ends stands for zeros after it (a polynomial's tower ends).  A
-- product follows Leibniz's rule, a quotient solves it for the next
-- derivative, and each elementary function f is its value followed by the
-- tower of f'(u) u' (the derivatives of f(u) are those of its derivative,
-- shifted), built lazily: derivative n needs only those before it.
module Numeric.DualRev.Internal.Overloaded.Tower
  ( Derivatives, retag
    -- * Derivatives
  , diffs, diffs0, diffsF, diffs0F
    -- * Directional derivatives
  , dus, dus0, dusF, dus0F
    -- * Taylor and Maclaurin series
  , taylor, taylor0, maclaurin, maclaurin0
    -- * First derivatives in this mode (for "Numeric.DualRev.AD.Mode.Tower")
  , diff, diff', du, du', duF, duF'
  ) where

import Numeric.DualRev.Internal.Overloaded.Value (Mode (..))

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.AD

-- | A number with its derivatives of every order with respect to one
-- variable; @s@ keeps differentiations apart, as for 'Reverse'.
newtype Derivatives s a = Derivatives [a]

-- | The same derivatives under another differentiation's tag (for the
-- rank-1 functions, whose numbers have one fixed tag).
retag :: Derivatives s a -> Derivatives s' a
retag (Derivatives ds) = Derivatives ds

derivs :: Derivatives s a -> [a]
derivs (Derivatives ds) = ds

value :: Num a => Derivatives s a -> a
value (Derivatives (x : _)) = x
value (Derivatives []) = 0

constT :: a -> Derivatives s a
constT x = Derivatives [x]

-- | The tower of the function's derivative: every derivative one down.
shift :: Derivatives s a -> Derivatives s a
shift (Derivatives (_ : ds)) = Derivatives ds
shift (Derivatives []) = Derivatives []

-- | The function whose value is x and whose derivative has tower t.
withValue :: a -> Derivatives s a -> Derivatives s a
withValue x (Derivatives ds) = Derivatives (x : ds)

-- | Entry by entry, the shorter list padded with zeros.
zipLong :: Num a => (a -> a -> a) -> [a] -> [a] -> [a]
zipLong f (x : xs) (y : ys) = f x y : zipLong f xs ys
zipLong f xs [] = map (`f` 0) xs
zipLong f [] ys = map (0 `f`) ys

-- | The binomial coefficients C(n, 0) .. C(n, n).
binomials :: Num a => Int -> [a]
binomials n = map fromInteger (scanl (\c k -> c * fromIntegral (n - k) `div` fromIntegral (k + 1)) 1 [0 .. n - 1])

-- | Derivative n of a product by Leibniz's rule, from the first n + 1
-- derivatives of each factor (so a tower may be defined through its own
-- product, as exp's is); Nothing where n is past the product's last.
leibnizAt :: Num a => [a] -> [a] -> Int -> Maybe a
leibnizAt f g n
  | null fs || null gs || n > length fs + length gs - 2 = Nothing
  | otherwise = Just (sum (zipWith3 (\c a b -> c * a * b) (binomials n) (pad fs) (reverse (pad gs))))
  where
    fs = take (n + 1) f
    gs = take (n + 1) g
    pad xs = take (n + 1) (xs ++ repeat 0)

times :: Num a => Derivatives s a -> Derivatives s a -> Derivatives s a
times (Derivatives f) (Derivatives g) = Derivatives (go 0)
  where go n = maybe [] (: go (n + 1)) (leibnizAt f g n)

-- | q = a / b: derivative n of a = q b by Leibniz's rule, solved for q's.
-- Where b is a constant, q ends where a does (a polynomial's quotient is
-- one); that is looked at from q's second derivative on, so that b may be
-- defined through q (as sqrt's tower is).
divide :: Fractional a => Derivatives s a -> Derivatives s a -> Derivatives s a
divide (Derivatives a) (Derivatives b) = Derivatives q
  where
    b0 = case b of
      (x : _) -> x
      [] -> 0
    bConstant = length (take 2 b) <= 1
    q = go 0
    go n
      | n >= 1 && bConstant && null (drop n a) = []
      | otherwise = derivative n : go (n + 1)
    derivative n =
      let an = case drop n a of
            (x : _) -> x
            [] -> 0
          -- the terms of derivative n of q b with q's earlier derivatives
          known = sum (zipWith3 (\c qk bk -> c * qk * bk) (binomials n) (take n q) (reverse (take (n + 1) (b ++ repeat 0))))
      in (an - known) / b0

instance Num a => Num (Derivatives s a) where
  Derivatives a + Derivatives b = Derivatives (zipLong (+) a b)
  Derivatives a - Derivatives b = Derivatives (zipLong (-) a b)
  (*) = times
  negate (Derivatives a) = Derivatives (map negate a)
  abs u = withValue (abs (value u)) (constT (signum (value u)) * shift u)
  signum u = constT (signum (value u))
  -- a literal zero is the empty tower, as in ad (a constant zero's
  -- derivatives are a list that ends at once)
  fromInteger 0 = Derivatives []
  fromInteger n = constT (fromInteger n)

instance Fractional a => Fractional (Derivatives s a) where
  (/) = divide
  recip = divide 1
  fromRational 0 = Derivatives []
  fromRational r = constT (fromRational r)

instance Floating a => Floating (Derivatives s a) where
  pi = constT pi
  exp u = w where w = withValue (exp (value u)) (w * shift u)
  log u = withValue (log (value u)) (shift u / u)
  sqrt u = w where w = withValue (sqrt (value u)) (shift u / (2 * w))
  sin u = s where
    s = withValue (sin (value u)) (c * shift u)
    c = withValue (cos (value u)) (negate (s * shift u))
  cos u = c where
    s = withValue (sin (value u)) (c * shift u)
    c = withValue (cos (value u)) (negate (s * shift u))
  tan u = sin u / cos u
  asin u = withValue (asin (value u)) (shift u / sqrt (1 - u * u))
  acos u = withValue (acos (value u)) (negate (shift u / sqrt (1 - u * u)))
  atan u = withValue (atan (value u)) (shift u / (1 + u * u))
  sinh u = s where
    s = withValue (sinh (value u)) (c * shift u)
    c = withValue (cosh (value u)) (s * shift u)
  cosh u = c where
    s = withValue (sinh (value u)) (c * shift u)
    c = withValue (cosh (value u)) (s * shift u)
  tanh u = sinh u / cosh u
  asinh u = withValue (asinh (value u)) (shift u / sqrt (1 + u * u))
  acosh u = withValue (acosh (value u)) (shift u / sqrt (u * u - 1))
  atanh u = withValue (atanh (value u)) (shift u / (1 - u * u))
  u ** v = exp (log u * v)
  logBase b u = log u / log b

-- | Comparisons look at values.
instance (Num a, Eq a) => Eq (Derivatives s a) where
  a == b = value a == value b

instance (Num a, Ord a) => Ord (Derivatives s a) where
  compare a b = compare (value a) (value b)

-- | The value.
instance (Num a, Show a) => Show (Derivatives s a) where
  showsPrec p = showsPrec p . value

instance Num a => Mode (Derivatives s a) where
  type Scalar (Derivatives s a) = a
  auto = constT
  isKnownConstant (Derivatives ds) = length (take 2 ds) <= 1
  asKnownConstant t@(Derivatives ds)
    | length (take 2 ds) <= 1 = Just (value t)
    | otherwise = Nothing
  isKnownZero (Derivatives ds) = null ds

-- | The variable at x: value x, derivative 1.
var :: Num a => a -> Derivatives s a
var x = Derivatives [x, 1]

zeroPad :: Num a => [a] -> [a]
zeroPad xs = xs ++ repeat 0

-- | The value and every derivative of the function at a point, as far as
-- they go (a polynomial's list ends; 'diffs0' pads it with zeros).
--
-- >>> take 5 (diffs sin 0)
-- [0.0,1.0,0.0,-1.0,0.0]
-- >>> diffs (\x -> x ^ 3) 2
-- [8,12,12,6]
diffs :: Num a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
diffs f x = derivs (f (var x))

-- | 'diffs', padded with zeros.
diffs0 :: Num a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
diffs0 f x = zeroPad (diffs f x)

-- | 'diffs' of each output.
diffsF :: (Functor f, Num a) => (forall s. Derivatives s a -> f (Derivatives s a)) -> a -> f [a]
diffsF f x = fmap derivs (f (var x))

-- | 'diffsF', padded with zeros.
diffs0F :: (Functor f, Num a) => (forall s. Derivatives s a -> f (Derivatives s a)) -> a -> f [a]
diffs0F f x = fmap (zeroPad . derivs) (f (var x))

-- | Every derivative along a curve: each input given as its own
-- derivatives (@[x, dx]@ for a direction, more for a curve).
--
-- >>> dus (\[x, y] -> x * y) [[1, 1], [2, 0]]
-- [2,2,0]
dus :: (Functor f, Num a) => (forall s. f (Derivatives s a) -> Derivatives s a) -> f [a] -> [a]
dus f xs = derivs (f (fmap Derivatives xs))

-- | 'dus', padded with zeros.
dus0 :: (Functor f, Num a) => (forall s. f (Derivatives s a) -> Derivatives s a) -> f [a] -> [a]
dus0 f xs = zeroPad (dus f xs)

-- | 'dus' of each output.
dusF :: (Functor f, Functor g, Num a) => (forall s. f (Derivatives s a) -> g (Derivatives s a)) -> f [a] -> g [a]
dusF f xs = fmap derivs (f (fmap Derivatives xs))

-- | 'dusF', padded with zeros.
dus0F :: (Functor f, Functor g, Num a) => (forall s. f (Derivatives s a) -> g (Derivatives s a)) -> f [a] -> g [a]
dus0F f xs = fmap (zeroPad . derivs) (f (fmap Derivatives xs))

-- | The terms of the Taylor series of the function at x, at x + dx: term k
-- is the k-th derivative times dx^k / k!.
--
-- >>> sum (take 20 (taylor exp 0 1))
-- 2.7182818284590455
taylor :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> a -> [a]
taylor f x dx = zipWith (*) (diffs f x) (scanl (\w k -> w * dx / k) 1 (iterate (+ 1) 1))

-- | 'taylor', padded with zeros.
taylor0 :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> a -> [a]
taylor0 f x dx = zeroPad (taylor f x dx)

-- | The Maclaurin series: 'taylor' at 0.
maclaurin :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
maclaurin f = taylor f 0

-- | 'maclaurin', padded with zeros.
maclaurin0 :: Fractional a => (forall s. Derivatives s a -> Derivatives s a) -> a -> [a]
maclaurin0 f = taylor0 f 0


------------------------------------------------------------------------------
-- First derivatives, in this mode

-- | The derivative (@ad@'s tower-mode 'diff': the function's type names
-- this mode, so it reads the second entry of its tower).
diff :: Num a => (forall s. Derivatives s a -> Derivatives s a) -> a -> a
diff f x = snd (diff' f x)

-- | The value and the derivative.
diff' :: Num a => (forall s. Derivatives s a -> Derivatives s a) -> a -> (a, a)
diff' f x = firstTwo (diffs f x)

-- | The derivative in a direction: each input paired with its direction.
du :: (Functor f, Num a) => (forall s. f (Derivatives s a) -> Derivatives s a) -> f (a, a) -> a
du f xvs = snd (du' f xvs)

-- | The value and the derivative in a direction.
du' :: (Functor f, Num a) => (forall s. f (Derivatives s a) -> Derivatives s a) -> f (a, a) -> (a, a)
du' f xvs = firstTwo (dus f (fmap line xvs))

-- | 'du' of each output.
duF :: (Functor f, Functor g, Num a) => (forall s. f (Derivatives s a) -> g (Derivatives s a)) -> f (a, a) -> g a
duF f xvs = fmap snd (duF' f xvs)

-- | 'du'' of each output.
duF' :: (Functor f, Functor g, Num a) => (forall s. f (Derivatives s a) -> g (Derivatives s a)) -> f (a, a) -> g (a, a)
duF' f xvs = fmap firstTwo (dusF f (fmap line xvs))

-- | The tower of the line x + t v at t = 0: x, then v, then zeros.
line :: (a, a) -> [a]
line (x, v) = [x, v]

-- | The value and first derivative of a tower (zeros past its end).
firstTwo :: Num a => [a] -> (a, a)
firstTwo ds = case ds ++ [0, 0] of
  v : d : _ -> (v, d)
  _ -> (0, 0)
