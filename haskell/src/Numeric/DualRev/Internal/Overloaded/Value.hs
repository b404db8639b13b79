{-# LANGUAGE ConstraintKinds #-}
{-# LANGUAGE DerivingVia #-}
{-# LANGUAGE FlexibleContexts #-}
{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE MultiParamTypeClasses #-}
{-# LANGUAGE RoleAnnotations #-}
{-# LANGUAGE StandaloneDeriving #-}
{-# LANGUAGE TypeFamilies #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- The differentiable scalar of the overloaded mode ("Numeric.DualRev.AD"):
-- a number that records each operation on the C tape as it is evaluated,
-- through the same recording functions, and so the same derivative rules,
-- as the code the splices generate ("Numeric.DualRev.Internal.Run.Scalar.Ops").
--
-- A value carries the tape its node is on.  Every level of a nested
-- derivative records on one tape (the outermost differentiation's), so
-- @Reverse s (Reverse s' Double)@ has the representation of @Reverse s
-- Double@; the type parameters only keep levels and calls apart at compile
-- time, as in @ad@.
module Numeric.DualRev.Internal.Overloaded.Value
  ( Val (..)
  , Reverse (..)
  , Element, toVal, fromVal, numbersOnly, toDouble, fromDouble
  , TapeMismatch (..)
  , constVal, primalVal, isActive, recast, ioValue
  , Mode (..)
  , Reifies, Tape
  ) where

import Control.Exception (Exception, throw)
import Data.Int (Int64)
import Foreign.Ptr (Ptr, nullPtr)
import GHC.Exts (runRW#)
import GHC.Float (double2Float, float2Double)
import GHC.IO (IO (..))
import Unsafe.Coerce (unsafeCoerce)

import Foreign.C.Types (CInt)

import Numeric.DualRev.Internal.Engine.FFI (CTape)
import Numeric.DualRev.Internal.Engine.ReplayFFI (c_fe_guard, c_fe_round)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD (..), D (..))
import Numeric.DualRev.Internal.Run.Driver.Guard
import Numeric.DualRev.Internal.Run.Scalar.Lifted

-- | A value, the id of its tape node (-1: a constant, on no tape) and the
-- tape (meaningless for a constant).
data Val = Val {-# UNPACK #-} !Double {-# UNPACK #-} !Int64 {-# UNPACK #-} !(Ptr CTape)

constVal :: Double -> Val
constVal x = Val x (-1) nullPtr
{-# INLINE constVal #-}

primalVal :: Val -> Double
primalVal (Val x _ _) = x
{-# INLINE primalVal #-}

isActive :: Val -> Bool
isActive (Val _ i _) = i /= -1
{-# INLINE isActive #-}

-- | The differentiable scalar: @s@ names the differentiation it belongs to
-- (a rank-2 type variable, so values of two calls cannot meet), @a@ the
-- type of its value (Double, Float, or the scalar of an enclosing
-- differentiation).
newtype Reverse s a = Reverse Val
type role Reverse nominal nominal

-- | The same scalar seen as one of another level: every level has the same
-- representation, so a function given for one level serves another.
recast :: Reverse s a -> Reverse s' b
recast (Reverse v) = Reverse v
{-# INLINE recast #-}

-- | Two active values of different tapes met in one operation.  Only a
-- nested differentiation whose inputs are all constants can cause it (it
-- starts on a tape of its own and meets a variable of the enclosing one);
-- that differentiation catches it and starts again on the enclosing tape.
data TapeMismatch = TapeMismatch (Ptr CTape) (Ptr CTape)

instance Show TapeMismatch where
  show _ = "dualrev: values of two differentiations met in one operation"

instance Exception TapeMismatch

------------------------------------------------------------------------------
-- Operations: the dual scalar's recording functions, run on the tape of the
-- active argument

un :: (D -> AD D) -> Val -> Val
un op (Val x i t) = case record (unAD (op (D x i)) t) of
  D v k -> Val v k t
{-# INLINE un #-}

bin :: (D -> D -> AD D) -> Val -> Val -> Val
bin op (Val x i t) (Val y j u) =
  case record (unAD (op (D x i) (D y j)) tape) of
    D v k -> Val v k tape
  where
    tape | i == -1 = u
         | j == -1 || t == u = t
         | otherwise = throw (TapeMismatch t u)
{-# INLINE bin #-}

-- | Runs one recording as a pure value.  This is unsafeDupablePerformIO
-- without its 'lazy': the result is taken apart at once, so GHC can return
-- the node's value and id in registers instead of allocating a 'D' per
-- operation (two thirds of a dot product's allocation).  Recording twice is
-- harmless (an unused node), as with unsafeDupablePerformIO.
record :: IO D -> D
record = ioValue
{-# INLINE record #-}

-- | unsafeDupablePerformIO for an action that may run twice and whose
-- result is used at once (see 'record').
ioValue :: IO a -> a
ioValue (IO m) = case runRW# m of (# _, a #) -> a
{-# INLINE ioValue #-}

un' :: (D -> AD D) -> Reverse s a -> Reverse s a
un' op (Reverse a) = Reverse (un op a)
{-# INLINE un' #-}

bin' :: (D -> D -> AD D) -> Reverse s a -> Reverse s a -> Reverse s a
bin' op (Reverse a) (Reverse b) = Reverse (bin op a b)
{-# INLINE bin' #-}

-- | The numeric classes are "Numeric.DualRev.Internal.Run.Scalar.Lifted"'s, with
-- each recording run on the tape of the active argument.
instance Lifted (Reverse s a) where
  lift1 = un'
  lift2 = bin'
  radixOf _ = reverseRadix
  constant = Reverse . constVal
  primal (Reverse v) = primalVal v
  -- guards go to the tape of the active argument, which keeps them where
  -- it is of order 2 (a taped differentiation, "Numeric.DualRev.Internal.Overloaded.Taped")
  guardOn op (Reverse (Val x i t)) (Reverse (Val y j u)) out
    | i == -1 && j == -1 = out
    | otherwise = valGuard (if i == -1 then u else t) op x i y j out
  roundOn op (Reverse (Val x i t)) r
    | i == -1 = r
    | otherwise = valRound t op x i r
  signumOn a@(Reverse (Val x _ _))
    | guardOn gGt a nought (x > 0) = 1
    | guardOn gLt a nought (x < 0) = -1
    | guardOn gIsNaN a nought (isNaN x) = x
    | guardOn gSignBit a nought (isNegativeZero x) = -0.0
    | otherwise = 0
    where nought = Reverse (constVal 0)
  {-# INLINE lift1 #-}
  {-# INLINE lift2 #-}
  {-# INLINE constant #-}
  {-# INLINE primal #-}

deriving via Lifting (Reverse s a) instance Num (Reverse s a)
deriving via Lifting (Reverse s a) instance Fractional (Reverse s a)
deriving via Lifting (Reverse s a) instance Floating (Reverse s a)
deriving via Lifting (Reverse s a) instance Real (Reverse s a)
deriving via Lifting (Reverse s a) instance RealFrac (Reverse s a)
deriving via Lifting (Reverse s a) instance RealFloat (Reverse s a)

instance Eq (Reverse s a) where
  a == b = guardOn gEq a b (primal a == primal b)
  a /= b = guardOn gNe a b (primal a /= primal b)
  {-# INLINE (==) #-}

-- | Comparisons look at values only (each a guard on a tape that keeps
-- them); 'max' and 'min' return one argument whole, choosing as the C
-- engine's dr_max and dr_min do (a tie the first argument, a NaN the other
-- one).
instance Ord (Reverse s a) where
  compare a b
    | a < b = LT
    | a == b = EQ
    | otherwise = GT
  a < b = guardOn gLt a b (primal a < primal b)
  a <= b = guardOn gLe a b (primal a <= primal b)
  a > b = guardOn gGt a b (primal a > primal b)
  a >= b = guardOn gGe a b (primal a >= primal b)
  max a b = if b > a || isNaNR a then b else a
  min a b = if b < a || isNaNR a then b else a
  {-# INLINE (<) #-}
  {-# INLINE (<=) #-}
  {-# INLINE (>) #-}
  {-# INLINE (>=) #-}
  {-# INLINE max #-}
  {-# INLINE min #-}

isNaNR :: Reverse s a -> Bool
isNaNR a = guardOn gIsNaN a (Reverse (constVal 0)) (isNaN (primal a))
{-# INLINE isNaNR #-}

-- | A guard on the tape t (it keeps it where it is of order 2).  Out of
-- line: GHC 9.0 panics compiling some callers that inline runRW#.
valGuard :: Ptr CTape -> CInt -> Double -> Int64 -> Double -> Int64 -> Bool -> Bool
valGuard t op x i y j out = ioValue (c_fe_guard t op x i y j) `seq` out
{-# NOINLINE valGuard #-}

valRound :: Ptr CTape -> CInt -> Double -> Int64 -> r -> r
valRound t op x i r = ioValue (c_fe_round t op x i) `seq` r
{-# NOINLINE valRound #-}

-- | The value.
instance Show (Reverse s a) where
  showsPrec p a = showsPrec p (primal a)

-- | Enumerations step the value by constants, as for Double; each element
-- depends on the start.
instance Enum (Reverse s a) where
  succ a = a + 1
  pred a = a - 1
  toEnum = constant . fromIntegral
  fromEnum = fromEnum . primal
  enumFrom a = iterate (+ 1) a
  enumFromThen a b = iterate (+ (b - a)) a
  enumFromTo a b = takeWhile (<= b + 1 / 2) (enumFrom a)
  enumFromThenTo a a' b
    | a' >= a = takeWhile (<= b + (a' - a) / 2) (enumFromThen a a')
    | otherwise = takeWhile (>= b + (a' - a) / 2) (enumFromThen a a')

------------------------------------------------------------------------------
-- Element types

-- | The types a differentiation can be taken over: 'Double', 'Float'
-- (carried as Double on the tape, rounded back in results) and the scalar
-- of an enclosing differentiation (nesting).  A synonym of 'RealFloat',
-- not a class of its own, so that types default as @ad@'s do: @grad (\[x,
-- y] -> x * y) [1, 2]@ needs no annotation, its element type defaulting
-- to Double (a class outside the standard ones would stop the defaulting).
-- Any other 'RealFloat' type is carried as Double too, through
-- 'decodeFloat'.
type Element a = RealFloat a

-- | The scalar's mark: a negative 'floatRadix', which no number type has,
-- tells the scalar of an enclosing differentiation from a number without
-- a class of our own (and without looking at the value).
reverseRadix :: Integer
reverseRadix = -2

isScalar :: RealFloat a => a -> Bool
isScalar x = floatRadix x == reverseRadix
{-# INLINE isScalar #-}

-- | As a value of the tape: a number is a constant, an enclosing
-- differentiation's scalar (a 'Reverse', whose representation is its
-- 'Val') is itself.
toVal :: RealFloat a => a -> Val
toVal x
  | isScalar x = unsafeCoerce x
  | otherwise = constVal (toDouble x)
{-# INLINE toVal #-}

-- | A result back: a number reads the value (the results of a
-- differentiation of numbers are numbers), an enclosing scalar is the
-- node.
fromVal :: RealFloat a => Val -> a
fromVal v = r
  where r | isScalar r = unsafeCoerce v
          | otherwise = fromDouble (primalVal v)
{-# INLINE fromVal #-}

-- | True for numbers: a differentiation of them always records on a tape
-- of its own, without looking at its inputs.
numbersOnly :: RealFloat a => f a -> Bool
numbersOnly xs = not (isScalar (elementOf xs))
  where
    elementOf :: f a -> a
    elementOf _ = undefined -- floatRadix looks at the type only
{-# INLINE numbersOnly #-}

-- | A number as a Double: the identity on Double, Float's widening, and
-- for another floating type its sign, mantissa and exponent (NaN and the
-- infinities as themselves).
toDouble :: RealFloat a => a -> Double
toDouble x
  | isNaN x = 0 / 0
  | isInfinite x = if x > 0 then 1 / 0 else -1 / 0
  | isNegativeZero x = -0.0
  | otherwise = uncurry encodeFloat (decodeFloat x)
{-# NOINLINE [1] toDouble #-}

-- | A Double as a number of the type ('toDouble' back): exact where the
-- type has Double's digits or more, else rounded to nearest.
fromDouble :: RealFloat a => Double -> a
fromDouble d = r
  where
    r | isNaN d = 0 / 0
      | isInfinite d = if d > 0 then 1 / 0 else -1 / 0
      | isNegativeZero d = -0.0
      | floatRadix r == 2 && floatDigits r >= floatDigits d = uncurry encodeFloat (decodeFloat d)
      | otherwise = fromRational (toRational d)
{-# NOINLINE [1] fromDouble #-}

{-# RULES
"toDouble/Double" toDouble = id :: Double -> Double
"toDouble/Float" toDouble = float2Double
"fromDouble/Double" fromDouble = id :: Double -> Double
"fromDouble/Float" fromDouble = double2Float
  #-}

------------------------------------------------------------------------------
-- ad's lifting of constants

infixr 7 *^
infixl 7 ^*
infixr 7 ^/

-- | Types with a scalar to lift constants from, as @ad@'s @Mode@: @auto@
-- makes a constant of the differentiable type (or, for the scalar of an
-- enclosing differentiation, brings its variable in as a constant of the
-- inner one).
class (Num t, Num (Scalar t)) => Mode t where
  type Scalar t
  -- | Embed a constant.
  auto :: Scalar t -> t
  -- | True for a value known to be a constant.
  isKnownConstant :: t -> Bool
  isKnownConstant _ = False
  -- | The constant, for a value known to be one.
  asKnownConstant :: t -> Maybe (Scalar t)
  asKnownConstant _ = Nothing
  -- | True for a value known to be zero.
  isKnownZero :: t -> Bool
  isKnownZero _ = False
  -- | Scalar times value.
  (*^) :: Scalar t -> t -> t
  a *^ b = auto a * b
  -- | Value times scalar.
  (^*) :: t -> Scalar t -> t
  a ^* b = a * auto b
  -- | Value divided by scalar.
  (^/) :: Fractional (Scalar t) => t -> Scalar t -> t
  a ^/ b = a ^* recip b
  -- | @auto 0@.
  zero :: t
  zero = auto 0

instance Mode Double where
  type Scalar Double = Double
  auto = id
  isKnownConstant _ = True
  asKnownConstant = Just
  isKnownZero = (== 0)

instance Mode Float where
  type Scalar Float = Float
  auto = id
  isKnownConstant _ = True
  asKnownConstant = Just
  isKnownZero = (== 0)

instance Element a => Mode (Reverse s a) where
  type Scalar (Reverse s a) = a
  auto = Reverse . toVal
  isKnownConstant (Reverse v) = not (isActive v)
  asKnownConstant r@(Reverse v)
    | isActive v = Nothing
    | otherwise = Just (fromVal (constVal (primal r)))
  isKnownZero r@(Reverse v) = not (isActive v) && primal r == 0
  {-# INLINE auto #-}

------------------------------------------------------------------------------
-- Compatibility with signatures written for ad

-- | Signatures written for @ad@ mention @Reifies s Tape@; here every @s@
-- satisfies it, so they compile unchanged (the tape travels with the
-- values).
class Reifies s a
instance Reifies s Tape

-- | See 'Reifies'.
data Tape
