{-# LANGUAGE UndecidableInstances #-}
{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE MultiParamTypeClasses #-}
{-# LANGUAGE TemplateHaskell #-}
-- | User data types: parametrised (reused as is) and monomorphic with Double
-- fields (dual twins), records (construction, update, selectors, record and
-- positional patterns), sum types, recursive types, newtypes, synonyms,
-- infix constructors; Maybe, Either and discrete parts in inputs.
module Corpus.Data where

import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

differentiable [d|
  data V3 a = V3 a a a
    deriving (Eq, Show)

  data Pair a = Pair { pa :: a, pb :: a }
    deriving (Eq, Show)

  data P = P Double Double
    deriving (Eq, Show)

  data Body = Body { mass :: Double, bpos :: (Double, Double), tag :: Int }
    deriving (Eq, Show)

  data Shape = Circle Double | Rect Double Double | Poly [P] | Empty
    deriving (Eq, Show)

  data Tree = Leaf Double | Node Tree Tree
    deriving (Eq, Show)

  newtype Meters = Meters Double
    deriving (Eq, Show)

  data Cx = Double :+ Double
    deriving (Eq, Show)

  data Tagged a = Tagged a Double
    deriving (Eq, Show)

  type Vec2 = (Double, Double)

  -- parametrised: constructor application, positional patterns, partial
  -- application of a constructor
  dotV :: Num a => V3 a -> V3 a -> a
  dotV (V3 a b c) (V3 x y z) = a * x + b * y + c * z

  crossV :: Num a => V3 a -> V3 a -> V3 a
  crossV (V3 a b c) (V3 x y z) = V3 (b * z - c * y) (c * x - a * z) (a * y - b * x)

  vecsP :: Floating a => (V3 a, V3 a) -> a
  vecsP (u, v) =
    let w = crossV u v
        mk = V3 1
        V3 p _ _ = w
    in dotV w w + sqrt (dotV u u + 1) * dotV v (mk 2 p)

  vecs :: (V3 Double, V3 Double) -> Double
  vecs p = vecsP p

  -- parametrised record: selectors, record construction, update, record patterns
  pairsP :: Floating a => [Pair a] -> a
  pairsP ps =
    let qs = map (\p -> p { pb = pa p * pb p }) ps
        r = Pair { pb = 2, pa = sum (map pa ps) }
        f Pair { pa = x, pb = y } = x - y
    in sum (map pb qs) + pa r * pb r + sum (map f ps)

  pairs :: [Pair Double] -> Double
  pairs ps = pairsP ps

  -- monomorphic with Double fields, a newtype, an infix constructor, a synonym
  points :: ([P], Meters, Cx, Vec2) -> Double
  points (ps, Meters m, re :+ im, (sx, sy)) =
    let c = centroid ps
        P cx cy = c
        z = (re :+ im) `mulC` (sx :+ sy)
    in sum [ (x - cx) * (x - cx) + (y - cy) * (y - cy) | P x y <- ps ] * m + absC z

  centroid :: [P] -> P
  centroid ps = let n = fromIntegral (length ps)
                in P (sum [x | P x _ <- ps] / n) (sum [y | P _ y <- ps] / n)

  mulC :: Cx -> Cx -> Cx
  mulC (a :+ b) (c :+ d) = (a * c - b * d) :+ (a * d + b * c)

  absC :: Cx -> Double
  absC (a :+ b) = sqrt (a * a + b * b)

  -- a record with Double and Int fields: selectors (also as function values),
  -- construction, update, record and positional patterns
  bodies :: [Body] -> Double
  bodies bs =
    let moved = map (\b -> b { bpos = (fst (bpos b) + mass b, snd (bpos b)) }) bs
        heavy = [ Body { mass = m * 2, bpos = p, tag = t + 1 } | Body m p t <- bs, t > 0 ]
        energy Body { mass = m, bpos = (x, y) } = m * (x * x + y * y)
    in sum (map energy moved) + sum (map mass heavy) + sum (map (fromIntegral . tag) bs)
       + sum (map mass bs)

  -- a sum type with a case on its constructors
  area :: Shape -> Double
  area s = case s of
    Circle r -> pi * r * r
    Rect w h -> w * h
    Poly ps -> shoelace ps
    Empty -> 0

  shoelace :: [P] -> Double
  shoelace ps = 0.5 * sum (zipWith (\(P x1 y1) (P x2 y2) -> x1 * y2 - x2 * y1) ps (tail ps ++ [head ps]))

  shapes :: [Shape] -> Double
  shapes ss = sum (map area ss) + product (map (\s -> 1 + area s / 10) ss)

  -- a recursive data type
  treeSum :: Tree -> Double
  treeSum t = go 1 t
    where go d (Leaf x) = d * x * x
          go d (Node l r) = go (d + 1) l + sin (go (d * 2) r)

  -- a parametrised type with a Double field
  tagged :: [Tagged Int] -> Double
  tagged ts = sum [ fromIntegral k * x * x | Tagged k x <- ts ]

  -- Maybe and Either in the input
  options :: (Maybe Double, Either Double (Double, Int), [Either Int Double]) -> Double
  options (m, e, es) =
    maybe 1 (* 3) m * (case e of { Left a -> a; Right (b, k) -> b * fromIntegral k })
    + sum [ either fromIntegral (\x -> x * x) v | v <- es ]

  -- discrete parts: Int, Integer, Bool, Char, () steer the computation
  discretes :: ((Int, Integer), (Bool, Char), ((), Double)) -> Double
  discretes ((n, m), (b, c), ((), x)) =
    (if b then x * fromIntegral n else x / (1 + fromIntegral m * fromIntegral m))
    + (if c == 'x' then sin x else cos x)

  -- a parametrised type with a Num instance of the block (ordinary code at
  -- the dual number: its lazy fields recorded before the block goes on)
  data PN a = PN a a
    deriving (Eq, Show)
  instance Num a => Num (PN a) where
    PN a b + PN c d = PN (a + c) (b + d)
    PN a b - PN c d = PN (a - c) (b - d)
    PN a b * PN c d = PN (a * c) (b * d)
    abs (PN a b) = PN (abs a) (abs b)
    signum (PN a b) = PN (signum a) (signum b)
    fromInteger n = PN (fromInteger n) (fromInteger n)
    negate (PN a b) = PN (negate a) (negate b)
  dist2 :: (PN Double, PN Double) -> Double
  dist2 (p, q) = case p - q of PN x y -> x * x + y * y
  -- the same with its Num instance in ordinary code, after the block
  data PO a = PO a a
    deriving (Eq, Show)
  distO :: (PO Double, PO Double) -> Double
  distO (p, q) = case p - q of PO x y -> x * x + y * y
  scaledSum :: [PN Double] -> Double
  scaledSum ps = case sum (map (* PN 2 3) ps) of PN x y -> x * y

  -- tuples of data in Constant (up to 7, as elsewhere), alone and in a list
  quadratic :: (Double, Constant (Double, Double, Double)) -> Double
  quadratic (x, k) = let (a, b, c) = constant k in a * x * x + b * x + c
  quadratics :: ([Double], Constant [(Double, Double, Double)]) -> Double
  quadratics (xs, k) = sum (zipWith (\x (a, b, c) -> a * x * x + b * x + c) xs (constant k))
  septic :: (Double, Constant (Double, Double, Double, Double, Double, Double, Double)) -> Double
  septic (x, k) = let (a, b, c, d, e, f, g) = constant k in a * x + b * x * x + c + d + e + f * g
  |]

-- Flattening of the corpus types for the checks

instance Vec a => Vec (V3 a) where
  toVec (V3 a b c) = toVec (a, b, c)
  fromVecS (V3 a b c) vs = let ((a', b', c'), r) = fromVecS (a, b, c) vs in (V3 a' b' c', r)
instance Lift a b => Lift (V3 a) (V3 b) where
  liftS (V3 a b c) vs = let ((a', b', c'), r) = liftS (a, b, c) vs in (V3 a' b' c', r)
instance Vec a => Vec (Pair a) where
  toVec (Pair a b) = toVec (a, b)
  fromVecS (Pair a b) vs = let ((a', b'), r) = fromVecS (a, b) vs in (Pair a' b', r)
instance Lift a b => Lift (Pair a) (Pair b) where
  liftS (Pair a b) vs = let ((a', b'), r) = liftS (a, b) vs in (Pair a' b', r)
instance Vec P where
  toVec (P a b) = [a, b]
  fromVecS _ (a : b : r) = (P a b, r)
  fromVecS _ _ = error "short"
instance Vec Meters where
  toVec (Meters a) = [a]
  fromVecS _ (a : r) = (Meters a, r)
  fromVecS _ _ = error "short"
instance Vec Cx where
  toVec (a :+ b) = [a, b]
  fromVecS _ (a : b : r) = (a :+ b, r)
  fromVecS _ _ = error "short"
instance Vec Body where
  toVec (Body m p _) = m : toVec p
  fromVecS (Body _ p t) (m : r) = let (p', r') = fromVecS p r in (Body m p' t, r')
  fromVecS _ _ = error "short"
instance Vec Shape where
  toVec s = case s of { Circle r -> [r]; Rect w h -> [w, h]; Poly ps -> toVec ps; Empty -> [] }
  fromVecS s vs = case (s, vs) of
    (Circle _, r : rest) -> (Circle r, rest)
    (Rect _ _, w : h : rest) -> (Rect w h, rest)
    (Poly ps, _) -> let (ps', rest) = fromVecS ps vs in (Poly ps', rest)
    (Empty, _) -> (Empty, vs)
    _ -> error "short"
instance Vec Tree where
  toVec (Leaf x) = [x]
  toVec (Node l r) = toVec l ++ toVec r
  fromVecS (Leaf _) (x : rest) = (Leaf x, rest)
  fromVecS (Leaf _) [] = error "short"
  fromVecS (Node l r) vs = let (l', r1) = fromVecS l vs; (r', r2) = fromVecS r r1 in (Node l' r', r2)
instance Vec a => Vec (Tagged a) where
  toVec (Tagged a x) = toVec a ++ [x]
  fromVecS (Tagged a _) vs = let (a', r) = fromVecS a vs in case r of
    (x : r') -> (Tagged a' x, r')
    [] -> error "short"

instance Num a => Num (PO a) where
  PO a b + PO c d = PO (a + c) (b + d)
  PO a b - PO c d = PO (a - c) (b - d)
  PO a b * PO c d = PO (a * c) (b * d)
  abs (PO a b) = PO (abs a) (abs b)
  signum (PO a b) = PO (signum a) (signum b)
  fromInteger n = PO (fromInteger n) (fromInteger n)
  negate (PO a b) = PO (negate a) (negate b)

-- Generators

genV3 :: Gen (V3 Double)
genV3 = V3 <$> dbl <*> dbl <*> dbl

genP :: Gen P
genP = P <$> dbl <*> dbl

genShape :: Gen Shape
genShape = oneof [Circle <$> dbl, Rect <$> dbl <*> dbl, Poly <$> listOf1N 4 genP, pure Empty]

genTree :: Int -> Gen Tree
genTree 0 = Leaf <$> dbl
genTree n = oneof [Leaf <$> dbl, Node <$> genTree (n - 1) <*> genTree (n - 1)]

genBody :: Gen Body
genBody = Body <$> pos <*> ((,) <$> dbl <*> dbl) <*> choose (-2, 2)

spec :: Spec
spec = describe "data types" $ do
  checkGradFwd "parametrised type V3" ((,) <$> genV3 <*> genV3) vecs vecsP $(grad 'vecs)
  checkGradFwd "parametrised record Pair" (listOf1N 4 (Pair <$> dbl <*> dbl)) pairs pairsP $(grad 'pairs)
  checkGrad "monomorphic types, newtype, infix constructor, synonym"
    ((,,,) <$> listOf1N 5 genP <*> (Meters <$> pos) <*> ((:+) <$> dbl <*> dbl) <*> ((,) <$> dbl <*> dbl))
    points $(grad 'points)
  checkGrad "records" (listOf1N 4 genBody) bodies $(grad 'bodies)
  checkGrad "sum type" (listOf1N 4 genShape) shapes $(grad 'shapes)
  checkGrad "recursive type" (genTree 4) treeSum $(grad 'treeSum)
  checkGrad "parametrised type with a Double field" (listOf1N 4 (Tagged <$> choose (-3, 3) <*> dbl)) tagged $(grad 'tagged)
  checkGrad "Maybe and Either"
    ((,,) <$> oneof [pure Nothing, Just <$> dbl]
          <*> oneof [Left <$> dbl, (\a k -> Right (a, k)) <$> dbl <*> choose (-3, 3)]
          <*> listOf1N 4 (oneof [Left <$> choose (-3, 3), Right <$> dbl]))
    options $(grad 'options)
  it "a parametrised type with a Num instance in the block: its arithmetic recorded" $
    property $ forAll ((,,,) <$> dbl <*> dbl <*> dbl <*> dbl) $ \(a, b, c, d) ->
      let (PN ga gb, PN gc gd) = $(grad 'dist2) (PN a b, PN c d)
      in closeRel 1e-14 ga (2 * (a - c)) .&&. closeRel 1e-14 gb (2 * (b - d))
         .&&. closeRel 1e-14 gc (2 * (c - a)) .&&. closeRel 1e-14 gd (2 * (d - b))
  it "the same with the Num instance outside the block" $
    property $ forAll ((,,,) <$> dbl <*> dbl <*> dbl <*> dbl) $ \(a, b, c, d) ->
      let (PO ga gb, _) = $(grad 'distO) (PO a b, PO c d)
      in closeRel 1e-14 ga (2 * (a - c)) .&&. closeRel 1e-14 gb (2 * (b - d))
  it "the same type in a list, through sum and map" $
    property $ forAll (listOf1N 4 (PN <$> dbl <*> dbl)) $ \ps ->
      let sx = 2 * sum [x | PN x _ <- ps]
          sy = 3 * sum [y | PN _ y <- ps]
      in and (zipWith (\(PN gx gy) _ -> closeRel 1e-12 gx (2 * sy) && closeRel 1e-12 gy (3 * sx))
                      ($(grad 'scaledSum) ps) ps)
  it "tuples of 3 to 7 in Constant, alone and in a list" $
    property $ forAll ((,,) <$> dbl <*> ((,,) <$> dbl <*> dbl <*> dbl) <*> listOf1N 4 ((,) <$> dbl <*> ((,,) <$> dbl <*> dbl <*> dbl))) $
      \(x, k@(a, b, _), xks) ->
        let (xs, ks) = unzip xks
            (g1, k1) = $(grad 'quadratic) (x, Constant k)
            (gs, ks1) = $(grad 'quadratics) (xs, Constant ks)
        in closeRel 1e-14 g1 (2 * a * x + b) .&&. k1 === Constant k .&&. ks1 === Constant ks
           .&&. and (zipWith3 (\g y (p, q, _) -> closeRel 1e-14 g (2 * p * y + q)) gs xs ks)
           .&&. closeRel 1e-14 (fst ($(grad 'septic) (x, Constant (a, b, 1, 2, 3, 4, 5)))) (a + 2 * b * x)
  checkGrad "discrete parts come back unchanged"
    ((,,) <$> ((,) <$> choose (-5, 5) <*> choose (-5, 5)) <*> ((,) <$> arbitrary <*> elements "xy")
          <*> ((,) () <$> dbl))
    discretes $(grad 'discretes)
