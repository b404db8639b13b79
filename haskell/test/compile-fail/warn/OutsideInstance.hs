-- EXPECT: the instance `Num C' is declared outside any differentiable block, so differentiable code cannot compute with it
-- EXPECT: move the instance into a differentiable block: the one that declares `C', or a block of its own before this one (differentiable [d| instance Num C where ... |])
-- EXPECT: the instance `Fractional C' is declared outside any differentiable block
-- EXPECT: the instance `Num V' is declared outside any differentiable block
-- EXPECT: move the instance into a differentiable block of its own, before this one (differentiable [d| instance Num V where ... |])
-- EXPECT: in the differentiable block at
{-# LANGUAGE TemplateHaskell #-}
module OutsideInstance where
import Numeric.DualRev

data V = V Double Double

instance Num V where
  V a b + V c d = V (a + c) (b + d)
  V a b * V c d = V (a * c) (b * d)
  negate (V a b) = V (negate a) (negate b)
  abs (V a b) = V (abs a) (abs b)
  signum (V a b) = V (signum a) (signum b)
  fromInteger n = V (fromInteger n) (fromInteger n)

differentiable [d|
  data C = C Double Double
  |]

instance Num C where
  C a b + C c d = C (a + c) (b + d)
  C a b * C c d = C (a * c) (b * d)
  negate (C a b) = C (negate a) (negate b)
  abs (C a b) = C (abs a) (abs b)
  signum (C a b) = C (signum a) (signum b)
  fromInteger n = C (fromInteger n) (fromInteger n)

instance Fractional C where
  C a b / C c d = C (a / c) (b / d)
  fromRational r = C (fromRational r) (fromRational r)

differentiable [d|
  norm2 :: C -> Double
  norm2 c = case c + c / 2 of C x y -> x * x + y * y

  sumV :: V -> Double
  sumV v = case v * v of V x y -> x + y
  |]
