{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE FunctionalDependencies #-}
{-# LANGUAGE MultiParamTypeClasses #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# LANGUAGE UndecidableInstances #-}
-- | Test helpers: a forward-mode dual number (the reference), flattening of
-- structured values into vectors of their Double parts, central finite
-- differences, tolerant comparisons, and the hspec/QuickCheck checks every
-- corpus program goes through.
module Check
  ( -- * Forward mode
    F (..), fwdGrad
    -- * Flattening
  , Vec (..), fromVec, Lift (..)
    -- * Numerics
  , fdGrad, closeRel, closeFD
    -- * Checks
  , gradProp, gradFwdProp, jacProp, diffProp
  , checkGrad, checkGradFwd, checkJac, checkDiff
    -- * Errors
  , dualRevError
    -- * Generators
  , dbl, pos, unit, vecOf, listOf1N, matOf
  ) where

import Control.Exception (evaluate, try)
import Control.Monad (replicateM)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev (DualRevError (..))

-- | The message of the DualRevError that evaluating x raises, or
-- "no error".
dualRevError :: a -> IO String
dualRevError x = do
  r <- try (evaluate x)
  pure $ case r of
    Left (DualRevError m) -> m
    Right _ -> "no error"

------------------------------------------------------------------------------
-- Forward mode: value and tangent

data F = F { fval :: !Double, ftan :: !Double }

instance Show F where
  show (F a b) = "F " ++ show a ++ " " ++ show b

instance Eq F where
  F a _ == F b _ = a == b

instance Ord F where
  compare (F a _) (F b _) = compare a b

instance Num F where
  F a a' + F b b' = F (a + b) (a' + b')
  F a a' - F b b' = F (a - b) (a' - b')
  F a a' * F b b' = F (a * b) (a' * b + a * b')
  negate (F a a') = F (negate a) (negate a')
  abs (F a a') = F (abs a) (signum a * a')
  signum (F a _) = F (signum a) 0
  fromInteger n = F (fromInteger n) 0

instance Fractional F where
  F a a' / F b b' = F (a / b) ((a' * b - a * b') / (b * b))
  recip (F a a') = F (recip a) (negate a' / (a * a))
  fromRational r = F (fromRational r) 0

instance Floating F where
  pi = F pi 0
  exp (F a a') = F (exp a) (exp a * a')
  log (F a a') = F (log a) (a' / a)
  sqrt (F a a') = F (sqrt a) (a' / (2 * sqrt a))
  sin (F a a') = F (sin a) (cos a * a')
  cos (F a a') = F (cos a) (negate (sin a) * a')
  tan (F a a') = F (tan a) (a' / (cos a * cos a))
  asin (F a a') = F (asin a) (a' / sqrt (1 - a * a))
  acos (F a a') = F (acos a) (negate a' / sqrt (1 - a * a))
  atan (F a a') = F (atan a) (a' / (1 + a * a))
  sinh (F a a') = F (sinh a) (cosh a * a')
  cosh (F a a') = F (cosh a) (sinh a * a')
  tanh (F a a') = F (tanh a) (a' / (cosh a * cosh a))
  asinh (F a a') = F (asinh a) (a' / sqrt (a * a + 1))
  acosh (F a a') = F (acosh a) (a' / sqrt (a * a - 1))
  atanh (F a a') = F (atanh a) (a' / (1 - a * a))
  F a a' ** F b b' =
    F (a ** b) ((if a' == 0 then 0 else b * a ** (b - 1) * a')
                + (if b' == 0 then 0 else a ** b * log a * b'))
  logBase x y = log y / log x

-- | Arithmetic sequences: the tangent of the start carries to every element.
instance Enum F where
  toEnum n = F (fromIntegral n) 0
  fromEnum (F a _) = fromEnum a
  enumFrom x = [x + fromIntegral k | k <- [0 :: Int ..]]
  enumFromThen x x2 = [x + fromIntegral k * (x2 - x) | k <- [0 :: Int ..]]
  enumFromTo x@(F a _) (F b _) = [x + fromIntegral k | k <- [0 .. floor (b + 0.5 - a) :: Int]]
  enumFromThenTo x@(F a _) x2@(F a2 _) (F b _) =
    [x + fromIntegral k * (x2 - x) | (k, _) <- zip [0 :: Int ..] (takeWhile ok [a, a2 ..])]
    where ok v = if a2 >= a then v <= b + (a2 - a) / 2 else v >= b + (a2 - a) / 2

instance Real F where
  toRational (F a _) = toRational a

instance RealFrac F where
  properFraction (F a a') = let (n, r) = properFraction a in (n, F r a')

instance RealFloat F where
  floatRadix _ = floatRadix (0 :: Double)
  floatDigits _ = floatDigits (0 :: Double)
  floatRange _ = floatRange (0 :: Double)
  decodeFloat (F a _) = decodeFloat a
  encodeFloat m e = F (encodeFloat m e) 0
  isNaN (F a _) = isNaN a
  isInfinite (F a _) = isInfinite a
  isDenormalized (F a _) = isDenormalized a
  isNegativeZero (F a _) = isNegativeZero a
  isIEEE _ = True
  atan2 (F y y') (F x x') = F (atan2 y x) ((x * y' - y * x') / (x * x + y * y))

------------------------------------------------------------------------------
-- Flattening: the Double parts of a value, left to right

class Vec x where
  toVec :: x -> [Double]
  -- | Rebuild a value shaped like the template from a vector (discrete parts
  -- are the template's); returns the unused rest.
  fromVecS :: x -> [Double] -> (x, [Double])

fromVec :: Vec x => x -> [Double] -> x
fromVec t v = fst (fromVecS t v)

instance Vec Double where
  toVec x = [x]
  fromVecS _ (v : vs) = (v, vs)
  fromVecS _ [] = error "fromVec: vector too short"

discrete :: x -> [Double] -> (x, [Double])
discrete x vs = (x, vs)

instance Vec Int where { toVec _ = []; fromVecS = discrete }
instance Vec Integer where { toVec _ = []; fromVecS = discrete }
instance Vec Bool where { toVec _ = []; fromVecS = discrete }
instance Vec Char where { toVec _ = []; fromVecS = discrete }
instance Vec () where { toVec _ = []; fromVecS = discrete }

instance Vec a => Vec [a] where
  toVec = concatMap toVec
  fromVecS [] vs = ([], vs)
  fromVecS (t : ts) vs = let (x, r) = fromVecS t vs; (xs, r') = fromVecS ts r in (x : xs, r')

instance (Vec a, Vec b) => Vec (a, b) where
  toVec (a, b) = toVec a ++ toVec b
  fromVecS (a, b) vs = let (a', r) = fromVecS a vs; (b', r') = fromVecS b r in ((a', b'), r')

instance (Vec a, Vec b, Vec c) => Vec (a, b, c) where
  toVec (a, b, c) = toVec a ++ toVec b ++ toVec c
  fromVecS (a, b, c) vs =
    let (a', r) = fromVecS a vs; (b', r') = fromVecS b r; (c', r'') = fromVecS c r'
    in ((a', b', c'), r'')

instance (Vec a, Vec b, Vec c, Vec d) => Vec (a, b, c, d) where
  toVec (a, b, c, d) = toVec a ++ toVec b ++ toVec c ++ toVec d
  fromVecS (a, b, c, d) vs =
    let ((a', b'), r) = fromVecS (a, b) vs; ((c', d'), r') = fromVecS (c, d) r
    in ((a', b', c', d'), r')

instance Vec a => Vec (Maybe a) where
  toVec = maybe [] toVec
  fromVecS Nothing vs = (Nothing, vs)
  fromVecS (Just a) vs = let (a', r) = fromVecS a vs in (Just a', r)

instance (Vec a, Vec b) => Vec (Either a b) where
  toVec = either toVec toVec
  fromVecS (Left a) vs = let (a', r) = fromVecS a vs in (Left a', r)
  fromVecS (Right b) vs = let (b', r) = fromVecS b vs in (Right b', r)

-- | The same structure with Double replaced by the forward-mode type.
class Lift x y | x -> y where
  liftS :: x -> [F] -> (y, [F])

instance Lift Double F where
  liftS _ (v : vs) = (v, vs)
  liftS _ [] = error "liftS: vector too short"

instance Lift Int Int where liftS x vs = (x, vs)
instance Lift Integer Integer where liftS x vs = (x, vs)
instance Lift Bool Bool where liftS x vs = (x, vs)
instance Lift Char Char where liftS x vs = (x, vs)
instance Lift () () where liftS x vs = (x, vs)

instance Lift a b => Lift [a] [b] where
  liftS [] vs = ([], vs)
  liftS (t : ts) vs = let (x, r) = liftS t vs; (xs, r') = liftS ts r in (x : xs, r')

instance (Lift a a', Lift b b') => Lift (a, b) (a', b') where
  liftS (a, b) vs = let (a', r) = liftS a vs; (b', r') = liftS b r in ((a', b'), r')

instance (Lift a a', Lift b b', Lift c c') => Lift (a, b, c) (a', b', c') where
  liftS (a, b, c) vs =
    let (a', r) = liftS a vs; (b', r') = liftS b r; (c', r'') = liftS c r' in ((a', b', c'), r'')

instance (Lift a a', Lift b b', Lift c c', Lift d d') => Lift (a, b, c, d) (a', b', c', d') where
  liftS (a, b, c, d) vs =
    let ((a', b'), r) = liftS (a, b) vs; ((c', d'), r') = liftS (c, d) r in ((a', b', c', d'), r')

instance Lift a b => Lift (Maybe a) (Maybe b) where
  liftS Nothing vs = (Nothing, vs)
  liftS (Just a) vs = let (a', r) = liftS a vs in (Just a', r)

instance (Lift a a', Lift b b') => Lift (Either a b) (Either a' b') where
  liftS (Left a) vs = let (a', r) = liftS a vs in (Left a', r)
  liftS (Right b) vs = let (b', r) = liftS b vs in (Right b', r)

-- | The gradient by forward mode: one pass per input direction.
fwdGrad :: (Vec x, Lift x y) => (y -> F) -> x -> [Double]
fwdGrad f x =
  [ ftan (f (fst (liftS x [F v (if j == i then 1 else 0) | (j, v) <- zip [0 :: Int ..] xs])))
  | i <- [0 .. length xs - 1] ]
  where xs = toVec x

------------------------------------------------------------------------------
-- Finite differences and comparisons

-- | Central finite differences of a scalar function, each with its step:
-- at h and at h / 100.  Where the function is not smooth (a comparison, max
-- or abs flips between x - h and x + h) the first is off; the second then
-- almost surely straddles nothing.  A wrong gradient disagrees with both.
fdGrad :: Vec x => (x -> Double) -> x -> [[(Double, Double)]]
fdGrad f x =
  [ [ ((f (at (xi + h)) - f (at (xi - h))) / (2 * h), h) | h <- [h0, h0 / 100] ]
  | (i, xi) <- zip [0 :: Int ..] xs
  , let h0 = 1e-5 * max 1 (abs xi)
        at v = fromVec x [if j == i then v else xj | (j, xj) <- zip [0 ..] xs] ]
  where xs = toVec x

closeRel :: Double -> Double -> Double -> Bool
closeRel tol a b = abs (a - b) <= tol * (1 + abs a + abs b)

-- | A gradient against finite differences: truncation error O(h^2) plus
-- rounding error of the function's value over h.
closeFD :: Double -> Double -> [(Double, Double)] -> Bool
closeFD fx g = any (\(d, h) -> abs (g - d) <= 2e-4 * (1 + abs g + abs d) + 1e-12 * (1 + abs fx) / h)

------------------------------------------------------------------------------
-- Properties

-- | Gradient against finite differences; the gradient has the input's shape
-- and the input's discrete parts.
gradProp :: (Vec x, Eq x, Show x) => (x -> Double) -> (x -> x) -> x -> Property
gradProp f g x =
  let gx = g x
      gv = toVec gx
      fd = fdGrad f x
  in counterexample ("gradient " ++ show gx ++ "\nfinite differences " ++ show (map (map fst) fd)) $
       (fromVec x gv == gx) .&&. (length gv == length fd)
       .&&. and (zipWith (closeFD (f x)) gv fd)

-- | The same, and against forward mode on the polymorphic original.
gradFwdProp :: (Vec x, Lift x y, Eq x, Show x) => (x -> Double) -> (y -> F) -> (x -> x) -> x -> Property
gradFwdProp f fF g x =
  let gv = toVec (g x)
      fw = fwdGrad fF x
  in gradProp f g x
     .&&. counterexample ("gradient " ++ show gv ++ "\nforward mode " ++ show fw)
            (length gv == length fw && and (zipWith (closeRel 1e-9) gv fw))
     .&&. counterexample "primal of the forward type differs" (closeRel 1e-12 (f x) (fval (fF (fst (liftS x (map (`F` 0) (toVec x)))))))

-- | Jacobian rows against finite differences of each output scalar.
jacProp :: (Vec x, Vec y, Eq x, Show x) => (x -> y) -> (x -> [x]) -> x -> Property
jacProp f jac x =
  let rows = jac x
      m = length (toVec (f x))
  in counterexample ("rows " ++ show rows) $
       (length rows == m)
       .&&. conjoin [ gradProp (\z -> toVec (f z) !! i) (const r) x | (i, r) <- zip [0 ..] rows ]

-- | Backpropagator: value, vector-Jacobian products against finite
-- differences, several cotangents on one tape, linearity.
diffProp :: (Vec x, Vec y, Eq x, Show x, Show y)
         => (x -> y) -> (x -> (y, y -> x)) -> x -> Property
diffProp f df x = forAll (cot y0) $ \c1 -> forAll (cot y0) $ \c2 -> forAll (choose (-3, 3)) $ \a ->
    let (y, back) = df x
        b1 = back c1
        b2 = back c2
        c3 = fromVec y0 (zipWith (\u v -> a * u + v) (toVec c1) (toVec c2))
        b3 = back c3
        lin = zipWith (\u v -> a * u + v) (toVec b1) (toVec b2)
        vjp c z = sum (zipWith (*) (toVec c) (toVec (f z)))
    in counterexample ("value " ++ show y ++ " vs " ++ show y0) (and (zipWith (closeRel 1e-12) (toVec y) (toVec y0)))
       .&&. gradProp (vjp c1) (const b1) x
       .&&. gradProp (vjp c2) (const b2) x
       .&&. counterexample ("linearity " ++ show (toVec b3) ++ " vs " ++ show lin)
              (and (zipWith (closeRel 1e-9) (toVec b3) lin))
       .&&. counterexample "the first cotangent again" (toVec (back c1) == toVec b1)
  where
    y0 = f x
    cot t = fromVec t <$> vectorOf (length (toVec t)) (choose (-2, 2))

checkGrad :: (Vec x, Eq x, Show x) => String -> Gen x -> (x -> Double) -> (x -> x) -> Spec
checkGrad name gen f g = it name $ property $ forAll gen (gradProp f g)

checkGradFwd :: (Vec x, Lift x y, Eq x, Show x)
             => String -> Gen x -> (x -> Double) -> (y -> F) -> (x -> x) -> Spec
checkGradFwd name gen f fF g = it (name ++ " (finite differences and forward mode)") $
  property $ forAll gen (gradFwdProp f fF g)

checkJac :: (Vec x, Vec y, Eq x, Show x) => String -> Gen x -> (x -> y) -> (x -> [x]) -> Spec
checkJac name gen f jac = it (name ++ " jacobian") $ property $ forAll gen (jacProp f jac)

checkDiff :: (Vec x, Vec y, Eq x, Show x, Show y) => String -> Gen x -> (x -> y) -> (x -> (y, y -> x)) -> Spec
checkDiff name gen f df = it (name ++ " differentiate") $ property $ forAll gen (diffProp f df)

------------------------------------------------------------------------------
-- Generators

dbl, pos, unit :: Gen Double
-- | Away from 0, ±0.5 and ±1, where the corpus programs have kinks
-- (comparisons, abs, max) that finite differences cannot straddle.
dbl = choose (-2, 2) `suchThat` \x -> all (\k -> abs (abs x - k) > 1e-3) [0, 0.5, 1]
pos = choose (0.5, 3)
unit = choose (-0.9, 0.9)

vecOf :: Int -> Gen a -> Gen [a]
vecOf = vectorOf

listOf1N :: Int -> Gen a -> Gen [a]
listOf1N n g = choose (1, n) >>= \k -> vectorOf k g

matOf :: Int -> Int -> Gen a -> Gen [[a]]
matOf r c g = replicateM r (vectorOf c g)
